// TAB on a word that is a path (it holds a `/` or starts with `~`): the names in its directory.
// A space inside a name is written `\ ` (and a backslash `\\`), as a shell would take it, so a
// path through `My Documents/` stays one word that TAB can go on with.
// Only the directory is listed (readdir, asynchronously, given up on after a few seconds), and
// only the entries offered are stat'ed, to tell a directory behind a symlink: nothing is ever
// opened, so a FIFO or a device cannot block, and a slow network directory cannot stall the UI.

import { lazyBuiltin } from '../../host/lazy-builtin.js';
import { isAbsolute, join, resolve } from 'node:path';
import type { Completion } from './command-context.js';
import { capped, commonPrefix, MAX_CANDIDATES } from './candidates.js';

const fsp = lazyBuiltin<typeof import('node:fs/promises')>('node:fs/promises');

/** How long a directory may take to list before TAB gives up on it. */
const LIST_TIMEOUT_MS = 3000;

export interface PathEnv {
  home?: string;
  cwd: string;
}

/** Whether TAB on `word` completes a path. */
export function isPathWord(word: string): boolean {
  return word.includes('/') || word === '~';
}

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T | null> =>
  new Promise((res) => {
    const t = setTimeout(() => res(null), ms);
    t.unref?.();
    p.then(
      (v) => {
        clearTimeout(t);
        res(v);
      },
      () => {
        clearTimeout(t);
        res(null);
      },
    );
  });

async function isDir(path: string): Promise<boolean> {
  try {
    return (await fsp().stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** A name as written in a path word: its spaces and backslashes escaped. */
const escaped = (name: string): string => name.replace(/[\\ ]/g, '\\$&');
/** A path word's text as the name it stands for. */
const unescaped = (text: string): string => text.replace(/\\(.)/g, '$1');

/** The directory a path word's part up to its last slash names, or null (`~user/`, a shell's business; `~/` without a home). */
function directoryOf(dirPart: string, env: PathEnv): string | null {
  if (!dirPart.startsWith('~')) return isAbsolute(dirPart) ? dirPart : resolve(env.cwd, dirPart);
  return dirPart.startsWith('~/') && env.home ? join(env.home, dirPart.slice(2)) : null;
}

/** The completion of the path `word`, or null when nothing matches (or the directory cannot be read). */
export async function completePath(word: string, env: PathEnv): Promise<Completion | null> {
  if (word === '~') return env.home ? { replace: 1, insert: '~/', candidates: [] } : null;
  const slash = word.lastIndexOf('/');
  if (slash < 0) return null;
  const dir = directoryOf(unescaped(word.slice(0, slash + 1)), env);
  if (dir === null) return null;
  const written = word.slice(slash + 1);
  const base = unescaped(written);
  const entries = await withTimeout(fsp().readdir(dir, { withFileTypes: true }), LIST_TIMEOUT_MS);
  if (!entries) return null;
  const hidden = base.startsWith('.');
  const matches = entries
    .filter((e) => e.name.startsWith(base) && (hidden || !e.name.startsWith('.')))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (!matches.length) return null;
  const dirOf = (e: (typeof matches)[number]) =>
    e.isDirectory() ? Promise.resolve(true) : e.isSymbolicLink() ? isDir(join(dir, e.name)) : Promise.resolve(false);
  if (matches.length === 1) {
    const e = matches[0]!;
    const d = await withTimeout(dirOf(e), LIST_TIMEOUT_MS);
    return { replace: written.length, insert: escaped(e.name) + (d ? '/' : ' '), candidates: [] };
  }
  // Only the listed ones are looked at; the rest are counted.
  const shown = matches.slice(0, MAX_CANDIDATES);
  const dirs = await withTimeout(Promise.all(shown.map(dirOf)), LIST_TIMEOUT_MS);
  const names = matches.map((e, i) => e.name + (dirs?.[i] ? '/' : ''));
  return { replace: written.length, insert: escaped(commonPrefix(matches.map((e) => e.name))), candidates: capped(names) };
}
