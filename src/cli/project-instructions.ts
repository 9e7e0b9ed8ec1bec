// Project instructions: the AGENTS.md files (CLAUDE.md in a directory without one) from the
// working directory up to its repository's root, and the user's own in clm's config directory,
// added to the system prompt farthest first, so the nearest file has the last word. Their total
// is capped; the nearest files are kept whole first and what is cut is said. Before each turn
// the files are looked at again with a stat each: only a change (a file edited, added or removed)
// reads them again, so an unchanged system prompt stays byte for byte what it was.

import { statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { childPath } from '../host/child-path.js';
import { errnoText } from '../host/errno-text.js';
import { readRegularFileHeadSync } from '../host/regular-file.js';
import { wholeChars } from './text-head.js';

/** The cap on all instruction files together (`agents_md_max_bytes`). */
export const DEFAULT_AGENTS_MD_MAX_BYTES = 32 * 1024;

/** In each directory the first of these that exists is read. */
const NAMES = ['AGENTS.md', 'CLAUDE.md'] as const;

export interface InstructionFile {
  path: string;
  /** How the person is shown the path: relative to the working directory, or from `~`. */
  shown: string;
  /** The user's own file (config directory) or one of the project's. */
  scope: 'user' | 'project';
  /** The file's size. */
  size: number;
  /** Bytes of it in the system prompt (less than `size` when the cap cut it). */
  used: number;
  /** Why it could not be read (then nothing of it is used). */
  error?: string;
}

export interface InstructionsOptions {
  cwd: string;
  /** clm's config directory (the user's file), or null. */
  configDir: string | null;
  home?: string;
  maxBytes?: number;
}

/** The directories from the repository root (the nearest one holding `.git`) down to `cwd`; just `cwd` outside a repository. */
export function projectDirs(cwd: string): string[] {
  const chain: string[] = [];
  for (let d = resolve(cwd); ; d = dirname(d)) {
    chain.push(d);
    if (exists(childPath(d, '.git'))) return chain.reverse();
    if (dirname(d) === d) return [resolve(cwd)];
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A file's identity and version for change detection: '-' when absent. */
function stamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}:${st.isFile() ? 'f' : 'o'}`;
  } catch {
    return '-';
  }
}

export class ProjectInstructions {
  /** Directories to look in, farthest first: the user's, then the project's from its root. */
  private readonly dirs: { dir: string; scope: 'user' | 'project' }[];
  private readonly maxBytes: number;
  private signature = '';
  /** The files in use, farthest first. */
  files: InstructionFile[] = [];
  /** The section for the system prompt ('' when there is no file). */
  text = '';

  constructor(private readonly o: InstructionsOptions) {
    this.maxBytes = o.maxBytes ?? DEFAULT_AGENTS_MD_MAX_BYTES;
    this.dirs = [
      ...(o.configDir ? [{ dir: o.configDir, scope: 'user' as const }] : []),
      ...projectDirs(o.cwd).map((dir) => ({ dir, scope: 'project' as const })),
    ];
    this.refresh();
  }

  /** Look at the files again (a stat each); when one changed, read them all again. Whether anything changed. */
  refresh(): boolean {
    const sig = this.dirs.map(({ dir }) => NAMES.map((n) => stamp(childPath(dir, n))).join(',')).join(';');
    if (sig === this.signature) return false;
    this.signature = sig;
    this.load();
    return true;
  }

  /** Problems to tell the person: files cut by the cap, files that could not be read. */
  problems(): string[] {
    const out: string[] = [];
    for (const f of this.files) {
      if (f.error) out.push(`project instructions: ${f.shown} not read (${f.error})`);
      else if (f.used < f.size)
        out.push(
          f.used
            ? `project instructions: ${f.shown} cut to its first ${f.used} of ${f.size} bytes (agents_md_max_bytes = ${this.maxBytes})`
            : `project instructions: ${f.shown} left out: the nearer files fill agents_md_max_bytes (${this.maxBytes})`,
        );
    }
    return out;
  }

  /** `~/.config/clm/AGENTS.md, ../AGENTS.md, AGENTS.md`, or '' when none is in use. */
  summary(): string {
    return this.files
      .filter((f) => !f.error && f.used > 0)
      .map((f) => (f.used < f.size ? `${f.shown} (cut)` : f.shown))
      .join(', ');
  }

  private shown(path: string): string {
    const rel = relative(this.o.cwd, path);
    // Below the working directory, or straight up from it (../AGENTS.md): relative.
    if (
      !isAbsolute(rel) &&
      rel
        .split(sep)
        .slice(0, -1)
        .every((p) => p === '..')
    )
      return rel;
    const home = this.o.home;
    if (home && path.startsWith(home + sep)) return `~${path.slice(home.length)}`;
    return path;
  }

  private load(): void {
    const found: InstructionFile[] = [];
    for (const { dir, scope } of this.dirs) {
      const name = NAMES.find((n) => exists(childPath(dir, n)));
      if (!name) continue;
      const path = childPath(dir, name);
      found.push({ path, shown: this.shown(path), scope, size: 0, used: 0 });
    }
    // The nearest files are kept whole first: they are the most specific.
    const bodies = new Map<InstructionFile, string>();
    let left = this.maxBytes;
    for (const f of [...found].reverse()) {
      try {
        const { data, size } = readRegularFileHeadSync(f.path, left);
        const body = size > data.length ? wholeChars(data) : data;
        f.size = size;
        f.used = body.length;
        left -= f.used;
        if (f.used) bodies.set(f, body.toString('utf8'));
      } catch (e) {
        f.error = errnoText(e);
      }
    }
    this.files = found;
    const parts = found.filter((f) => bodies.has(f));
    this.text = parts.length
      ? [
          '# Instructions from AGENTS.md files',
          '',
          "The user's and the project's instructions for working here follow, the farthest first: where they disagree, the later file (nearer the working directory) wins.",
          ...parts.flatMap((f) => {
            const body = bodies.get(f)!.replace(/\s+$/, '');
            const note = f.used < f.size ? [`[cut: the first ${f.used} of ${f.size} bytes]`] : [];
            return ['', `## ${f.scope === 'user' ? `${f.path} (the user's own)` : f.path}`, '', body, ...note];
          }),
        ].join('\n')
      : '';
  }
}

/** The system prompt with the instructions' section after the base text. */
export function withInstructions(base: string, section: string): string {
  return section ? `${base}\n\n${section}` : base;
}
