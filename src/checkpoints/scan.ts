// One walk of the workspace: every regular file and symbolic link with what lstat says of it,
// every directory with its mode, and what is left out and why (too large, not a regular file,
// unreadable). Entries named `.git` are never entered; what the workspace's .gitignore files and
// .git/info/exclude ignore is left out unless `gitignore` is off. Links are not followed.

import { type BigIntStats, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';

export interface EntryStat {
  kind: 'file' | 'link';
  /** The permission bits (with setuid, setgid, sticky). */
  perm: number;
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: number;
}

export interface LeftOut {
  path: string;
  why: string;
}

export interface Scan {
  /** Workspace-relative paths with `/`, to regular files and links. */
  files: Map<string, EntryStat>;
  /** Workspace-relative directories (not the root) and their permission bits. */
  dirs: Map<string, number>;
  /** Each directory's inode ('' the root): one removed and made again is another directory. */
  dirIno: Map<string, number>;
  leftOut: LeftOut[];
  /** When the walk began (ns since the epoch, as file times are). */
  startedNs: bigint;
}

export interface ScanOptions {
  /** Leave out what .gitignore and .git/info/exclude ignore (default true). */
  gitignore?: boolean;
  /** Files larger than this are left out (0 = no cap). */
  maxFileBytes: number;
  /** Stop with ScanTooLarge past this many files and directories (0 = no limit). */
  maxEntries?: number;
  /** Absolute paths never entered (clm's own state directory when it lies inside the workspace). */
  skip?: readonly string[];
  /** Called with each directory and its inode before it is read (a watch starts there). */
  enter?(rel: string, ino: number): void;
}

export class ScanTooLarge extends Error {}

interface Rules {
  /** The directory the rules belong to, relative ('' for the root). */
  base: string;
  ig: Ignore;
}

function readRules(abs: string): string | null {
  try {
    const st = lstatSync(abs);
    return st.isFile() && st.size < 4 << 20 ? readFileSync(abs, 'utf8') : null;
  } catch {
    return null;
  }
}

/** Whether `rel` is ignored: the rules of each directory from the root down, deeper ones deciding last (git's order). */
function ignored(stack: readonly Rules[], rel: string, isDir: boolean): boolean {
  let out = false;
  for (const r of stack) {
    const sub = r.base ? rel.slice(r.base.length + 1) : rel;
    try {
      const t = r.ig.test(isDir ? `${sub}/` : sub);
      if (t.ignored) out = true;
      else if (t.unignored) out = false;
    } catch {
      /* a name the matcher cannot take: not ignored */
    }
  }
  return out;
}

const perm = (st: BigIntStats) => Number(st.mode) & 0o7777;

/** One walk's state: what it found, and the ignore rules of each directory it entered. */
class Walker {
  readonly useIgnore: boolean;
  readonly skip: Set<string>;
  readonly #rules = new Map<string, Rules[]>();
  #entries = 0;

  constructor(
    readonly root: string,
    readonly o: ScanOptions,
    readonly files: Map<string, EntryStat>,
    readonly dirs: Map<string, number>,
    readonly dirIno: Map<string, number>,
    readonly left: Map<string, string>,
  ) {
    this.useIgnore = o.gitignore !== false;
    this.skip = new Set(o.skip ?? []);
  }

  /** The rules that apply inside directory `rel`, from the root down. */
  rules(rel: string): Rules[] {
    let r = this.#rules.get(rel);
    if (r) return r;
    if (!this.useIgnore) r = [];
    else if (!rel) {
      const ig = ignore({ allowRelativePaths: true });
      const exclude = readRules(join(this.root, '.git', 'info', 'exclude'));
      if (exclude) ig.add(exclude);
      const own = readRules(join(this.root, '.gitignore'));
      if (own) ig.add(own);
      r = [{ base: '', ig }];
    } else {
      const up = this.rules(parentOf(rel));
      const text = readRules(join(this.root, rel, '.gitignore'));
      r = text ? [...up, { base: rel, ig: ignore({ allowRelativePaths: true }).add(text) }] : up;
    }
    this.#rules.set(rel, r);
    return r;
  }

  /**
   * Read directory `rel`; enter each subdirectory `deeper` says to. A step per directory read:
   * the caller may give the event loop its turn between two (see `walk`).
   */
  *visit(rel: string, deeper: (sub: string) => boolean): Generator<void> {
    const abs = rel ? join(this.root, rel) : this.root;
    if (!rel) {
      try {
        this.dirIno.set('', Number(lstatSync(abs).ino));
      } catch {
        /* the reading below says why */
      }
    }
    this.o.enter?.(rel, this.dirIno.get(rel) ?? 0);
    let names: string[];
    try {
      names = readdirSync(abs);
    } catch (e) {
      this.left.set(rel || '.', `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      return;
    }
    yield;
    const here = this.rules(rel);
    const o = this.o;
    for (const name of names) {
      if (name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const a = join(abs, name);
      let st: BigIntStats;
      try {
        st = lstatSync(a, { bigint: true });
      } catch {
        continue; // gone since readdir
      }
      const isDir = st.isDirectory();
      if (this.useIgnore && ignored(here, r, isDir)) continue;
      if (o.maxEntries && ++this.#entries > o.maxEntries) throw new ScanTooLarge(`more than ${o.maxEntries} files and directories`);
      if (isDir) {
        if (this.skip.has(a)) continue;
        this.dirs.set(r, perm(st));
        this.dirIno.set(r, Number(st.ino));
        if (deeper(r)) yield* this.visit(r, deeper);
      } else if (st.isFile() || st.isSymbolicLink()) {
        const size = Number(st.size);
        if (st.isFile() && o.maxFileBytes > 0 && size > o.maxFileBytes) {
          this.left.set(r, `larger than ${formatBytes(o.maxFileBytes)} (${formatBytes(size)})`);
          continue;
        }
        this.files.set(r, {
          kind: st.isFile() ? 'file' : 'link',
          perm: perm(st),
          size,
          mtimeNs: st.mtimeNs,
          ctimeNs: st.ctimeNs,
          ino: Number(st.ino),
        });
      } else {
        this.left.set(r, 'not a regular file, directory or link');
      }
    }
  }
}

export const parentOf = (rel: string): string => {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '' : rel.slice(0, i);
};

// File times come from a clock that may lag the wall clock by a tick: a margin covers it.
const nowNs = () => BigInt(Date.now() - 50) * 1_000_000n;

const leftList = (left: Map<string, string>): LeftOut[] =>
  [...left].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, why]) => ({ path, why }));

/** How long a walk runs before it lets the event loop have a turn (keys, a streaming reply). */
const SLICE_MS = 8;

/**
 * Run a walk's steps, letting the event loop have its turn every SLICE_MS: the first walk of a
 * large workspace takes a while (~25 ms per 600 files here), and it starts while a reply streams.
 */
async function walk(steps: Iterable<void>): Promise<void> {
  let since = Date.now();
  for (const _ of steps) {
    if (Date.now() - since < SLICE_MS) continue;
    await new Promise((r) => setImmediate(r));
    since = Date.now();
  }
}

export async function scanWorkspace(root: string, o: ScanOptions): Promise<Scan> {
  const startedNs = nowNs();
  const w = new Walker(root, o, new Map(), new Map(), new Map(), new Map());
  await walk(w.visit('', () => true));
  return { files: w.files, dirs: w.dirs, dirIno: w.dirIno, leftOut: leftList(w.left), startedNs };
}

/**
 * `prev` brought up to date by reading again only the directories in `dirty` (those whose
 * entries changed: a watch saw it) and walking whole the directories that are new.
 */
export async function rescan(root: string, prev: Scan, dirty: ReadonlySet<string>, o: ScanOptions): Promise<Scan> {
  const startedNs = nowNs();
  const files = new Map(prev.files);
  const dirs = new Map(prev.dirs);
  const dirIno = new Map(prev.dirIno);
  const left = new Map(prev.leftOut.map((l) => [l.path, l.why]));
  const w = new Walker(root, o, files, dirs, dirIno, left);
  // Shallowest first: a parent read first has dropped what went with a gone child.
  const order = [...dirty].sort((a, b) => a.split('/').length - b.split('/').length);
  const under = (p: string, d: string) => !d || p === d || p.startsWith(`${d}/`);
  for (const d of order) {
    if (d && !dirs.has(d)) continue; // not part of the workspace (ignored, or gone with its parent)
    let st: ReturnType<typeof lstatSync> | null = null;
    try {
      st = lstatSync(d ? join(root, d) : root);
    } catch {
      st = null;
    }
    const before = [...dirs.keys()].filter((x) => x !== d && parentOf(x) === d);
    for (const m of [files, left]) for (const p of [...m.keys()]) if (parentOf(p) === d) m.delete(p);
    for (const x of before) dirs.delete(x);
    const drop = (x: string) => {
      for (const m of [files, dirs, dirIno, left]) for (const p of [...m.keys()]) if (under(p, x) && (x || p)) m.delete(p);
    };
    if (!st?.isDirectory()) {
      // Gone: its whole subtree goes (its parent's reading drops the directory itself).
      drop(d);
      continue;
    }
    // A subdirectory not seen before, or made again since (another inode), is walked whole.
    await walk(
      w.visit(d, (sub) => {
        const again = prev.dirs.has(sub) && prev.dirIno.get(sub) !== dirIno.get(sub);
        if (!prev.dirs.has(sub) || again) {
          if (again) {
            const ino = dirIno.get(sub);
            drop(sub);
            dirs.set(sub, prev.dirs.get(sub)!);
            dirIno.set(sub, ino!);
          }
          return true;
        }
        return false;
      }),
    );
    for (const x of before) if (!dirs.has(x)) drop(x);
  }
  return { files, dirs, dirIno, leftOut: leftList(left), startedNs };
}

export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(1)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

/**
 * The paths of `next` whose entry is new or differs from `prev` (kind, mode, size, times, inode),
 * and those `prev` saw being written (their time stamp not before its walk began: a write in the
 * same clock tick leaves the times as they were). Paths gone since are not among them.
 */
export function changedPaths(prev: Scan | null, next: Scan): string[] {
  if (!prev) return [...next.files.keys()];
  const out: string[] = [];
  for (const [p, b] of next.files) {
    const a = prev.files.get(p);
    if (!a || !sameStat(a, b) || a.mtimeNs >= prev.startedNs || a.ctimeNs >= prev.startedNs) out.push(p);
  }
  return out;
}

function sameStat(a: EntryStat, b: EntryStat): boolean {
  return (
    a.kind === b.kind && a.perm === b.perm && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino
  );
}
