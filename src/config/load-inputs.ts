// What a load reads before anything is evaluated — config.lua, secrets.lua, and for the
// evaluation cache clm.secrets read without Lua — and whether the cache can answer for it.
// Kept apart from load.ts so the CLI can decide whether to start the Lua worker early from a
// small module, before the rest of the program has loaded.

import { statSync } from 'node:fs';
import { readRegularFileSync } from '../host/regular-file.js';
import { cacheIdentity, findEntry, sha256, type CacheEntry } from './config-cache.js';
import { ConfigError } from './errors.js';
import { readLiteralChunk } from './literal-chunk.js';
import { configDir, configPaths, type ConfigPaths } from './paths.js';
import { secretAt, secretsShape, uncacheableSecret } from './secret-sentinels.js';
import { isTable } from './validate.js';

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
  /** Directory of the evaluation cache (the CLI gives its state dir); none ⇒ always evaluate. */
  cacheDir?: string;
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

/** What a load has read before evaluating anything. */
export interface Inputs {
  paths: ConfigPaths;
  src: Uint8Array;
  secretsSrc: Uint8Array | null;
  /** Problems reading secrets.lua (it is then empty), in order. */
  warnings: string[];
  log: (line: string) => void;
  budgetMs?: number;
  agent?: string;
}

/** What the evaluation cache needs of a load: where, which entry, and clm.secrets read without Lua. */
export interface CacheLookup {
  dir: string;
  id: { scope: string; key: string };
  secrets: Record<string, unknown>;
}

export function readInputs(opts: LoadConfigOptions, log: (line: string) => void): Inputs | null {
  const dir = opts.dir ?? configDir(opts.env ?? process.env);
  if (!dir) return null;
  const paths = configPaths(dir);
  const src = readSource(paths.config, 'config.lua');
  if (!src) return null;
  const warnings: string[] = [];
  const secretsSrc = readSecrets(paths.secrets, log, warnings);
  return { paths, src, secretsSrc, warnings, log, budgetMs: opts.budgetMs, agent: opts.agent || undefined };
}

/**
 * The cache entry's identity for these inputs; null without a cache directory, and why not when
 * the cache cannot serve them (secrets.lua is code, a secret no sentinel stands in for).
 */
export function cacheLookup(inp: Inputs, cacheDir: string | undefined): CacheLookup | string | null {
  if (!cacheDir) return null;
  let secrets: Record<string, unknown> = {};
  if (inp.secretsSrc) {
    const lit = readLiteralChunk(inp.secretsSrc);
    // secrets.lua as code may set globals config.lua reads: its result alone does not decide config.lua's.
    if (!lit) return 'secrets.lua is not a plain literal table';
    // As runSecrets: a list is not a table of secrets.
    secrets = isTable(lit.value) ? lit.value : {};
  }
  const odd = uncacheableSecret(secrets);
  if (odd) return odd;
  const id = cacheIdentity({
    dir: inp.paths.dir,
    configPath: inp.paths.config,
    configSrc: inp.src,
    agent: inp.agent,
    budgetMs: inp.budgetMs,
    shape: secretsShape(secrets),
  });
  return { dir: cacheDir, id, secrets };
}

/** The real values of an entry's sentinels, or null when the secrets no longer have them. */
export function sentinelValues(entry: CacheEntry, secrets: Record<string, unknown>): string[] | null {
  const values: string[] = [];
  for (const p of entry.paths) {
    const v = secretAt(secrets, p);
    if (typeof v !== 'string' || v === '') return null;
    values.push(v);
  }
  return values;
}

/**
 * Whether loadConfig with these options would be answered from the evaluation cache, without
 * starting Lua (the CLI starts the evaluator early only when it would not). Reads the files;
 * logs nothing; false on any doubt.
 */
export function configCacheAnswers(opts: LoadConfigOptions): boolean {
  try {
    const inp = readInputs(opts, () => {});
    if (!inp) return true; // no config.lua: nothing to evaluate either
    const c = cacheLookup(inp, opts.cacheDir);
    if (!c || typeof c === 'string') return false;
    const entry = findEntry(c.dir, c.id);
    if (!entry || !sentinelValues(entry, c.secrets)) return false;
    if (!entry.profile) return true;
    const src = readSource(entry.profile.path, 'profile');
    return !!src && sha256(src) === entry.profile.sha256;
  } catch {
    return false;
  }
}
