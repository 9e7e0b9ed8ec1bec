// The evaluation cache: config.lua's (and the profile file's) evaluated tables, kept in the
// state dir so a run whose inputs did not change starts without the Lua worker.
//
// An entry is found by a hash of everything the evaluation depends on: the clm version, the
// config directory, config.lua's path and bytes, the profile name asked for, the time budget and
// the shape of clm.secrets (keys, which strings are empty, each other string's length in bytes
// and which of them are equal; secret-sentinels.ts) — never a secret string, nor a hash of one.
// The tables are stored with sentinels where the secrets were; load.ts substitutes the real
// values on a hit. The profile file an evaluation read (agents/NAME.lua) is recorded with a hash
// of its bytes and checked on every hit.
//
// The file is optional: a missing, unreadable, damaged or foreign one is ignored (and replaced
// by the next write), and so is a symbolic link, a FIFO, or a file another user owns or
// group/other may write; a failed write is only logged. Written atomically, mode 0600, in the 0700
// state dir.

import { createHash } from 'node:crypto';
import { openSync, closeSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../host/regular-file.js';
import { CLM_VERSION } from '../host/version.js';
import { makeDirs, sessionDir } from '../session/paths.js';
import type { SecretPath } from './secret-sentinels.js';
import { isTable, type Table } from './validate.js';

export const CONFIG_CACHE_FILE = 'config-cache.json';
/** Bumped when what an entry means changes (the sentinels, the watched library calls, …). */
const FORMAT = 2;
/** Entries kept: one per config directory and profile asked for, the most recent first. */
const MAX_ENTRIES = 8;
/** A larger file is ignored. */
const MAX_CACHE_BYTES = 16 * 1024 * 1024;

export interface CacheEntry {
  /** Which run this is the entry of: the config directory and the profile asked for. */
  scope: string;
  /** The hash of every input (cacheKey). */
  key: string;
  /** The profile file the evaluation read, with the sha256 of its bytes; null when none was read. */
  profile: { path: string; sha256: string } | null;
  /** The text every sentinel starts with, and the secret each sentinel number stands for. */
  marker: string;
  paths: SecretPath[];
  /** config.lua's table, and the profile file's, with sentinels. */
  top: Table;
  profileTable?: Table;
}

interface CacheFile {
  format: number;
  entries: CacheEntry[];
}

export interface CacheInputs {
  dir: string;
  configPath: string;
  configSrc: Uint8Array;
  agent: string | undefined;
  budgetMs: number | undefined;
  shape: unknown;
}

export const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

/** Which entry a load would use, and the hash its inputs must match. */
export function cacheIdentity(i: CacheInputs): { scope: string; key: string } {
  const scope = sha256(JSON.stringify([i.dir, i.agent ?? null]));
  const key = sha256(
    JSON.stringify([FORMAT, CLM_VERSION, i.dir, i.configPath, sha256(i.configSrc), i.agent ?? null, i.budgetMs ?? null, i.shape]),
  );
  return { scope, key };
}

/** The cache directory for a run: clm's state directory, or undefined when there is none. */
export function configCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return sessionDir({ env });
  } catch {
    return undefined;
  }
}

const isPath = (p: unknown): p is SecretPath =>
  Array.isArray(p) && p.every((k) => typeof k === 'string' || (typeof k === 'number' && Number.isInteger(k) && k >= 0));

function validEntry(e: unknown): e is CacheEntry {
  if (!isTable(e)) return false;
  const p = e.profile;
  return (
    typeof e.scope === 'string' &&
    typeof e.key === 'string' &&
    typeof e.marker === 'string' &&
    e.marker !== '' &&
    Array.isArray(e.paths) &&
    e.paths.every(isPath) &&
    isTable(e.top) &&
    (e.profileTable === undefined || isTable(e.profileTable)) &&
    (p === null || (isTable(p) && typeof p.path === 'string' && typeof p.sha256 === 'string'))
  );
}

function readFile(path: string): CacheFile {
  try {
    // A FIFO or device in its place is refused at once (the cache is optional), never waited on.
    // The entries decide where the secrets are sent: a link, or a file someone else could have
    // written, is not believed.
    const c = JSON.parse(readRegularFileSync(path, MAX_CACHE_BYTES, { noFollow: true, ownOnly: true }).toString('utf8')) as unknown;
    if (isTable(c) && c.format === FORMAT && Array.isArray(c.entries)) return { format: FORMAT, entries: c.entries.filter(validEntry) };
  } catch {
    // missing or damaged: start over
  }
  return { format: FORMAT, entries: [] };
}

/** The entry for these inputs, or null. */
export function findEntry(cacheDir: string, id: { scope: string; key: string }): CacheEntry | null {
  return readFile(join(cacheDir, CONFIG_CACHE_FILE)).entries.find((e) => e.scope === id.scope && e.key === id.key) ?? null;
}

/** Store an entry (replacing the scope's previous one). Never throws; a failure is logged. */
export function storeEntry(cacheDir: string, entry: CacheEntry, log: (line: string) => void): boolean {
  const path = join(cacheDir, CONFIG_CACHE_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    makeDirs(cacheDir, 0o700);
    const c = readFile(path);
    c.entries = [entry, ...c.entries.filter((e) => e.scope !== entry.scope)].slice(0, MAX_ENTRIES);
    try {
      unlinkSync(tmp); // a leftover of a run with the same pid
    } catch {
      // none
    }
    // Created exclusively with 0600: never through a link, never with another file's mode.
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeFileSync(fd, JSON.stringify(c));
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    return true;
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing written
    }
    log(`config: cannot write the evaluation cache ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return false;
  }
}
