// The builtin tools that need Node (files, subprocesses), in the order they are registered.

import type { ToolDef } from '../core/types.js';
import { readFileTool } from './read-file.js';
import { writeFileTool } from './write-file.js';
import { listDirTool } from './list-dir.js';
import { shellExecTool } from './shell-exec.js';
import { bgExecTool } from './bg-exec.js';

export { readFileTool, READ_DEFAULT_LIMIT } from './read-file.js';
export { writeFileTool } from './write-file.js';
export { listDirTool } from './list-dir.js';
export { shellExecTool, SHELL_DEFAULT_TIMEOUT_MS } from './shell-exec.js';
export { bgExecTool, stopBackgroundJobs, BG_OUTPUT_CAP } from './bg-exec.js';
export { BUILTIN_TOOLS_SYSTEM_PROMPT } from './system-prompt.js';

/** read_file, write_file, list_dir, shell_exec, bg_exec. */
export function builtinTools(): ToolDef[] {
  return [readFileTool, writeFileTool, listDirTool, shellExecTool, bgExecTool];
}
