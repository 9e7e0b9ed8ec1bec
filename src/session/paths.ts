// Where sessions live: $XDG_STATE_HOME/clm, else $HOME/.local/state/clm (created 0700 on demand;
// host/xdg-dirs.ts checks the variables).

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { clmDir } from '../host/xdg-dirs.js';
import { SessionError } from './errors.js';

export interface SessionDirOptions {
  /** Use this directory instead of the XDG/HOME one (tests, embedders). */
  dir?: string;
  /** Environment to resolve the directory from (default process.env). */
  env?: Record<string, string | undefined>;
}

/**
 * The session directory path (not created). Throws ENOENT when neither XDG_STATE_HOME nor HOME is
 * set, EIO when the one that counts is no usable directory (a file, /dev/null, …).
 */
export function sessionDir(opts: SessionDirOptions = {}): string {
  if (opts.dir) return opts.dir;
  const { dir, problem } = clmDir('state', opts.env ?? process.env);
  if (dir) return dir;
  if (problem) throw new SessionError('EIO', `cannot use the session directory: ${problem}`);
  throw new SessionError('ENOENT', 'cannot locate the session directory: neither XDG_STATE_HOME nor HOME is set');
}

/** The session directory, created (mkdir -p, mode 0700) if missing. */
export function ensureSessionDir(opts: SessionDirOptions = {}): string {
  const dir = sessionDir(opts);
  try {
    makeDirs(dir, 0o700);
  } catch (e) {
    throw new SessionError('EIO', `cannot create the session directory ${dir}: ${(e as Error).message}`, { cause: e });
  }
  return dir;
}

/**
 * mkdir -p, one level at a time: Node 20's recursive mkdirSync spins forever on paths under
 * /proc (and similar pseudo file systems), where a plain mkdir fails cleanly.
 */
export function makeDirs(dir: string, mode: number): void {
  try {
    mkdirSync(dir, { mode });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT') throw e;
    const parent = dirname(dir);
    if (parent === dir) throw e;
    makeDirs(parent, mode);
    try {
      mkdirSync(dir, { mode });
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code !== 'EEXIST') throw e2;
    }
  }
}
