// The builtin tools that need Node (files, subprocesses), in the order they are registered.

import type { ToolDef } from '../core/types.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { guardedReadFile, readFileTool } from './read-file.js';
import { guardedWriteFile, writeFileTool } from './write-file.js';
import { guardedListDir, listDirTool } from './list-dir.js';
import { sandboxedShellExec, shellExecTool } from './shell-exec.js';
import { bgExecTool, sandboxedBgExec } from './bg-exec.js';

export { readFileTool, READ_DEFAULT_LIMIT } from './read-file.js';
export { writeFileTool } from './write-file.js';
export { listDirTool } from './list-dir.js';
export { shellExecTool, sandboxedShellExec, SHELL_DEFAULT_TIMEOUT_MS } from './shell-exec.js';
export { bgExecTool, sandboxedBgExec, stopBackgroundJobs, BG_OUTPUT_CAP } from './bg-exec.js';
export { BUILTIN_TOOLS_SYSTEM_PROMPT } from './system-prompt.js';

/** read_file, write_file, list_dir, shell_exec, bg_exec; confined by `sandbox` when given. */
export function builtinTools(o: { sandbox?: Sandbox | null } = {}): ToolDef[] {
  const sb = o.sandbox;
  const files = sb?.files;
  return [
    files ? guardedReadFile(files) : readFileTool,
    files ? guardedWriteFile(files) : writeFileTool,
    files ? guardedListDir(files) : listDirTool,
    sb ? sandboxedShellExec(sb) : shellExecTool,
    sb ? sandboxedBgExec(sb) : bgExecTool,
  ];
}
