// write_file: create or overwrite a file with the given text (no directories are created).

import { writeRegularFile } from '../host/regular-file.js';
import type { ToolDef, ToolInvocation } from '../core/types.js';
import { argString, expandHome, parseArgs } from './args.js';
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
  invoke: invokeWriteFile,
};

async function invokeWriteFile(inv: ToolInvocation): Promise<void> {
  const args = parseArgs(inv.args);
  if (!args) return inv.fail('invalid arguments');
  const rawPath = argString(args, 'path');
  const content = argString(args, 'content');
  if (rawPath === undefined || content === undefined) return inv.fail("write_file requires 'path' and 'content' strings");
  const path = expandHome(rawPath);
  try {
    await writeRegularFile(path, content);
  } catch (e) {
    // Failing to open is "cannot write '<path>'"; failing later (disk full) is a write failure.
    const syscall = (e as NodeJS.ErrnoException).syscall;
    return inv.fail(syscall === 'write' ? `write failed: ${errnoText(e)}` : `cannot write '${path}': ${errnoText(e)}`);
  }
  inv.complete('ok: file written');
}
