// clm.read_file and clm.write_file: regular files only, `nil, err` on failure; the sandbox's
// policy checked before and after opening (src/sandbox/file-guard.ts).

import { errnoText } from '../host/errno-text.js';
import { readRegularFileSync, writeRegularFileSync } from '../host/regular-file.js';
import type { FileGuard } from '../sandbox/file-guard.js';
import { bytesArg, nilErr, strArg } from './api-stack.js';
import { MEMORY_LIMIT } from './limits.js';
import type { Sandbox } from './state.js';
import type { LuaPtr } from './wasm.js';

function failure(e: unknown, path: string): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ESANDBOX') return (e as Error).message;
  return code === 'EFBIG' || code === 'ENOTREG' ? `${path}: ${(e as Error).message}` : errnoText(e);
}

export function readFile(sb: Sandbox, L: LuaPtr, guard: FileGuard | null): number {
  const path = strArg(sb, L, 1, 'clm.read_file: path');
  let data: Uint8Array;
  try {
    guard?.beforeRead(path);
    data = readRegularFileSync(path, MEMORY_LIMIT, { opened: guard ? (fd) => guard.afterOpenRead(fd) : undefined });
  } catch (e) {
    return nilErr(sb, L, failure(e, path));
  }
  sb.mem.push(L, data);
  return 1;
}

export function writeFile(sb: Sandbox, L: LuaPtr, guard: FileGuard | null): number {
  const path = strArg(sb, L, 1, 'clm.write_file: path');
  const content = bytesArg(sb, L, 2, 'clm.write_file: content');
  try {
    guard?.beforeWrite(path);
    writeRegularFileSync(path, content, { opened: guard ? (fd, n) => guard.afterOpenWrite(fd, n) : undefined });
  } catch (e) {
    return nilErr(sb, L, failure(e, path));
  }
  sb.m._lua_pushboolean(L, 1);
  return 1;
}
