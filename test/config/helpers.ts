// Temporary config directories for the config tests.

import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tempDir } from '../fixtures/temp-dir.js';
import { dirname, join } from 'node:path';

export interface TempConfig {
  /** The clm config dir (what loadConfig's `dir` takes). */
  dir: string;
  /** The XDG_CONFIG_HOME that contains it. */
  xdg: string;
  write(rel: string, text: string, mode?: number): string;
  cleanup(): void;
}

/** A fresh $XDG_CONFIG_HOME/clm with the given files (secrets.lua gets 0600 unless told). */
export function tempConfig(files: Record<string, string> = {}): TempConfig {
  const xdg = tempDir('clm-cfg-');
  const dir = join(xdg, 'clm');
  mkdirSync(dir);
  const write = (rel: string, text: string, mode?: number) => {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
    chmodSync(p, mode ?? (rel === 'secrets.lua' ? 0o600 : 0o644));
    return p;
  };
  for (const [k, v] of Object.entries(files)) write(k, v);
  return { dir, xdg, write, cleanup: () => rmSync(xdg, { recursive: true, force: true }) };
}

/** tempConfig removed when the test ends. */
export function tempFor(t: { after(fn: () => void): void }, files: Record<string, string> = {}): TempConfig {
  const c = tempConfig(files);
  t.after(() => c.cleanup());
  return c;
}

/**
 * What a load logged, without the lines saying which evaluator ran it: a quick Lua state gives up
 * after 100 ms, which a busy machine can make any load take, and files of literals need no Lua.
 */
export const withoutMoves = (log: string[]) =>
  log.filter((l) => !/^config: (.*; evaluating in the worker thread|read without Lua \(every file is a table of literals\))$/.test(l));
