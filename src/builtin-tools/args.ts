// Argument helpers shared by the builtin tools: the model sends a JSON text that may be
// malformed or loosely typed, and paths may start with "~/".

import { homedir } from 'node:os';

export type Args = Record<string, unknown>;

/** The arguments as an object; an empty text counts as {}. undefined ⇒ not a JSON object ("invalid arguments"). */
export function parseToolArgs(raw: string): Args | undefined {
  if (raw.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(raw);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Args) : undefined;
  } catch {
    return undefined;
  }
}

export function argString(args: Args, key: string): string | undefined {
  const v = args[key];
  return typeof v === 'string' ? v : undefined;
}

/** An integer argument; numbers are truncated, numeric strings accepted (models send "10"), anything else ⇒ fallback. */
export function argInt(args: Args, key: string, fallback: number): number {
  const v = args[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

/** "~" and "~/x" are taken from $HOME (the user's home when HOME is unset); "~user" is left alone. */
export function expandHome(path: string): string {
  if (path !== '~' && !path.startsWith('~/')) return path;
  const home = process.env.HOME || homedir();
  return home + path.slice(1);
}
