// write_file: create or overwrite a file with the given text (no directories are created).

import { type FileGuard, SandboxRefusal } from '../sandbox/file-guard.js';
import { writeRegularFile } from '../host/regular-file.js';
import type { ToolDef, ToolInvocation } from '../core/types.js';
import { argString, expandHome, parseToolArgs } from './args.js';
import { errnoText } from '../host/errno-text.js';

export const writeFileTool: ToolDef = {
  name: 'write_file',
  description: 'write content to a file, overwriting it',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'path to the file' },
      content: { type: 'string', description: 'content to write' },
    },
    required: ['path', 'content'],
  },
  invoke: (inv) => invokeWriteFile(inv, null),
};

/** write_file under the sandbox's file policy. */
export function guardedWriteFile(guard: FileGuard): ToolDef {
  return { ...writeFileTool, invoke: (inv) => invokeWriteFile(inv, guard) };
}

async function invokeWriteFile(inv: ToolInvocation, guard: FileGuard | null): Promise<void> {
  const args = parseToolArgs(inv.args);
  if (!args) return inv.fail('invalid arguments');
  const rawPath = argString(args, 'path');
  const content = argString(args, 'content');
  if (rawPath === undefined || content === undefined) return inv.fail("write_file requires 'path' and 'content' strings");
  const path = expandHome(rawPath);
  try {
    guard?.beforeWrite(path);
    await writeRegularFile(path, content, { opened: guard ? (fd, n) => guard.afterOpenWrite(fd, n) : undefined });
  } catch (e) {
    if (e instanceof SandboxRefusal) return inv.fail(e.message);
    // Failing to open is "cannot write '<path>'"; failing later (disk full) is a write failure.
    const syscall = (e as NodeJS.ErrnoException).syscall;
    return inv.fail(syscall === 'write' ? `write failed: ${errnoText(e)}` : `cannot write '${path}': ${errnoText(e)}`);
  }
  inv.complete('ok: file written');
}
