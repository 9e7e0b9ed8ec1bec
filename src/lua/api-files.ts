// clm.read_file and clm.write_file: regular files only, `nil, err` on failure.

import { errnoText } from '../host/errno-text.js';
import { readRegularFileSync, writeRegularFileSync } from '../host/regular-file.js';
import { bytesArg, nilErr, strArg } from './api-stack.js';
import { MEMORY_LIMIT } from './limits.js';
import type { Sandbox } from './state.js';
import type { LuaPtr } from './wasm.js';

export function readFile(sb: Sandbox, L: LuaPtr): number {
  const path = strArg(sb, L, 1, 'clm.read_file: path');
  let data: Uint8Array;
  try {
    data = readRegularFileSync(path, MEMORY_LIMIT);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return nilErr(sb, L, code === 'EFBIG' || code === 'ENOTREG' ? `${path}: ${(e as Error).message}` : errnoText(e));
  }
  sb.mem.push(L, data);
  return 1;
}

export function writeFile(sb: Sandbox, L: LuaPtr): number {
  const path = strArg(sb, L, 1, 'clm.write_file: path');
  const content = bytesArg(sb, L, 2, 'clm.write_file: content');
  try {
    writeRegularFileSync(path, content);
  } catch (e) {
    return nilErr(sb, L, errnoText(e));
  }
  sb.m._lua_pushboolean(L, 1);
  return 1;
}
