// What a load reads before anything is evaluated: config.lua and secrets.lua, through the
// regular-file reader (a FIFO or device is an error, never a wait), size-capped.

import { statSync } from 'node:fs';
import { readRegularFileSync } from '../host/regular-file.js';
import { ConfigError } from './errors.js';

/** Config files above this size are refused (parsing is not covered by the time limit). */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export interface LoadConfigOptions {
  /** The clm config directory; default $XDG_CONFIG_HOME/clm or $HOME/.config/clm. */
  dir?: string;
  /** Agent profile (-a); overrides the config's `agent` key. */
  agent?: string;
  /** Debug log (CLM_DEBUG_LOG); receives warnings and the secrets permission notice. */
  log?: (line: string) => void;
  /** Time limit per chunk (default 2000 ms). */
  budgetMs?: number;
  /** Where XDG_CONFIG_HOME/HOME are read from when `dir` is not given (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** Source bytes, or null when the file does not exist. BOM and a `#!` first line are blanked. */
export function readSource(path: string, label: string): Uint8Array | null {
  let buf: Buffer;
  try {
    // Not a plain readFileSync: a FIFO or device in place of the file would block start-up forever.
    buf = readRegularFileSync(path, MAX_CONFIG_BYTES);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return null;
    if (err.code === 'EFBIG') throw new ConfigError(`${label}: ${path} is larger than ${MAX_CONFIG_BYTES >> 20} MiB`, { file: path });
    if (err.code === 'ENOTREG')
      throw new ConfigError(`${label}: ${path} is not a regular file (a FIFO or device is never read)`, { file: path });
    throw new ConfigError(`${label}: cannot read ${path}: ${err.code ?? err.message}`, { file: path });
  }
  let start = 0;
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) start = 3;
  const src = new Uint8Array(buf.subarray(start));
  // luaL_loadfile skips a first line starting with '#'; keep its newline so line numbers hold.
  if (src[0] === 0x23) for (let i = 0; i < src.length && src[i] !== 0x0a; i++) src[i] = 0x20;
  return src;
}

/** secrets.lua's source, or null when there is none (or it cannot be read: a warning then). */
export function readSecrets(path: string, log: (l: string) => void, warnings: string[]): Uint8Array | null {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return null; // no secrets.lua: fine
  }
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) log(`secrets: ${path} is readable by group/other; consider chmod 600`);
  try {
    return readSource(path, 'secrets.lua');
  } catch (e) {
    const msg = `${(e as Error).message}; clm.secrets is empty`;
    warnings.push(msg);
    log(msg);
    return null;
  }
}
