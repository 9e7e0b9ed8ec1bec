// What the last snapshot's tree holds, path by path and directory by directory, so a snapshot
// that changed a few files stores their blobs and the trees above them itself, as loose objects,
// without starting git: a git process reads and writes the whole index, and costs tens of
// milliseconds however little changed. The objects are git's own format (zlib-deflated
// "<type> <size>\0<bytes>", named by their SHA-1); trees list entries in git's order (bytes, a
// directory's name compared as if it ended in `/`). Built from `git ls-tree -r` of a tree git
// wrote, and trusted only if the root it computes is that tree.

import { constants, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { lazyBuiltin } from '../host/lazy-builtin.js';
import { parentOf } from './scan.js';

// Loaded at the first snapshot: a turn without tools loads the checkpoints to record itself and
// needs none of these (~10 ms of a one-shot run's start).
const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');
const fsp = lazyBuiltin<typeof import('node:fs/promises')>('node:fs/promises');
const zlib = lazyBuiltin<typeof import('node:zlib')>('node:zlib');

const deflateAsync = (data: Buffer, level: number) =>
  new Promise<Buffer>((resolve, reject) => zlib().deflate(data, { level }, (e, out) => (e ? reject(e) : resolve(out))));

/** Names each temporary object file apart (two writers of one object in this process must not share one). */
let writes = 0;

/** A file or link as a tree holds it: git's mode ('100644', '100755', '120000') and blob. */
interface Blob {
  mode: string;
  sha: string;
}

interface TreeEntry {
  /** What the entry sorts by. */
  key: Buffer;
  /** "<mode> <name>\0", before the object id. */
  head: Buffer;
  sha: string;
}

/** A path to store: a regular file (its permission bits) or a link. */
export interface Changed {
  path: string;
  kind: 'file' | 'link';
  perm: number;
}

const TREE_MODE = '40000';
const baseOf = (rel: string) => rel.slice(rel.lastIndexOf('/') + 1);

function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let d = parentOf(path); ; d = parentOf(d)) {
    out.push(d);
    if (!d) return out;
  }
}

export class TreeCache {
  readonly #objects: string;
  readonly #workspace: string;
  readonly #blobs = new Map<string, Blob>();
  /** Each directory's entries by name (files, links and subdirectories, empty ones included). */
  readonly #kids = new Map<string, Set<string>>();
  /** Each directory's tree ('' the root); a directory with no file below it has none. */
  readonly #trees = new Map<string, string>();

  private constructor(objects: string, workspace: string) {
    this.#objects = objects;
    this.#workspace = workspace;
  }

  /** The root tree. */
  get root(): string {
    return this.#trees.get('')!;
  }

  /** From `git ls-tree -r -z` of `tree`; null when it holds what this does not handle (submodules) or computes another root. */
  static fromListing(objects: string, workspace: string, listing: readonly string[], tree: string): TreeCache | null {
    const c = new TreeCache(objects, workspace);
    const dirs = new Set<string>(['']);
    for (const line of listing) {
      // "<mode> <type> <sha>\t<path>"
      const tab = line.indexOf('\t');
      const [mode, type, sha] = line.slice(0, tab).split(' ');
      if (type !== 'blob' || !mode || !sha) return null;
      const path = line.slice(tab + 1);
      c.#blobs.set(path, { mode, sha });
      c.#link(path);
      for (const a of ancestors(path)) dirs.add(a);
    }
    const deepestFirst = [...dirs].sort((a, b) => depth(b) - depth(a));
    for (const d of deepestFirst) c.#trees.set(d, c.#treeOf(d).sha);
    return c.root === tree ? c : null;
  }

  /** Name `path` in its parent, and each directory above it in its own. */
  #link(path: string): void {
    for (let p = path; p; p = parentOf(p)) {
      const d = parentOf(p);
      let kids = this.#kids.get(d);
      if (!kids) this.#kids.set(d, (kids = new Set()));
      if (kids.has(baseOf(p))) return;
      kids.add(baseOf(p));
    }
  }

  /** Directory `d`'s tree object as its entries stand (the trees below it already computed). */
  #treeOf(d: string): { sha: string; body: Buffer | null } {
    const entries: TreeEntry[] = [];
    for (const name of this.#kids.get(d) ?? []) {
      const e = this.#entryOf(d ? `${d}/${name}` : name, name);
      if (e) entries.push(e);
    }
    if (!entries.length && d) return { sha: '', body: null };
    entries.sort((a, b) => Buffer.compare(a.key, b.key));
    const body = Buffer.concat(entries.flatMap((e) => [e.head, Buffer.from(e.sha, 'hex')]));
    return { sha: hashObject('tree', body), body };
  }

  /** The entry `path` makes in its directory's tree: a blob, a tree (sorted as if its name ended in `/`), or none. */
  #entryOf(path: string, name: string): TreeEntry | null {
    const blob = this.#blobs.get(path);
    if (blob) return { key: Buffer.from(name), head: Buffer.from(`${blob.mode} ${name}\0`), sha: blob.sha };
    const tree = this.#trees.get(path);
    return tree ? { key: Buffer.from(`${name}/`), head: Buffer.from(`${TREE_MODE} ${name}\0`), sha: tree } : null;
  }

  /**
   * Store `changed` (read from the workspace now) and drop `gone`; the new root. Rejects when a
   * path cannot be read as the walk saw it (gone, another kind, unreadable): then git must do it.
   */
  async update(changed: readonly Changed[], gone: readonly string[]): Promise<string> {
    const blobs: [string, Blob][] = [];
    for (const c of changed) {
      const sha = await this.#store('blob', await readEntry(join(this.#workspace, c.path), c.kind));
      blobs.push([c.path, { mode: c.kind === 'link' ? '120000' : c.perm & 0o100 ? '100755' : '100644', sha }]);
    }
    const dirty = new Set<string>();
    // Gone first: a file may have become a directory of the same name, or the other way round.
    for (const path of gone) {
      this.#blobs.delete(path);
      this.#kids.get(parentOf(path))?.delete(baseOf(path));
      for (const a of ancestors(path)) dirty.add(a);
    }
    for (const [path, blob] of blobs) {
      this.#blobs.set(path, blob);
      this.#link(path);
      for (const a of ancestors(path)) dirty.add(a);
    }
    for (const d of [...dirty].sort((a, b) => depth(b) - depth(a))) await this.#rewrite(d);
    return this.root;
  }

  /** Directory `d`'s tree computed again and stored; one with no file below it leaves its parent. */
  async #rewrite(d: string): Promise<void> {
    const t = this.#treeOf(d);
    if (!t.body) {
      this.#trees.delete(d);
      this.#kids.delete(d);
      if (!this.#blobs.has(d)) this.#kids.get(parentOf(d))?.delete(baseOf(d));
      return;
    }
    if (this.#trees.get(d) !== t.sha) await this.#write(t.sha, 'tree', t.body);
    this.#trees.set(d, t.sha);
  }

  async #store(type: string, data: Buffer): Promise<string> {
    const sha = hashObject(type, data);
    await this.#write(sha, type, data);
    return sha;
  }

  /** A loose object, unless one is there already (a copy in a pack as well does no harm). */
  async #write(sha: string, type: string, data: Buffer): Promise<void> {
    const dir = join(this.#objects, sha.slice(0, 2));
    const file = join(dir, sha.slice(2));
    if (existsSync(file)) return;
    mkdirSync(dir, { recursive: true });
    const tmp = join(dir, `tmp_obj_${process.pid}_${++writes}`);
    await fsp().writeFile(tmp, await deflateAsync(Buffer.concat([header(type, data.length), data]), 1), { mode: 0o444 });
    await fsp().rename(tmp, file);
  }
}

const depth = (d: string) => (d ? d.split('/').length : 0);
const header = (type: string, size: number) => Buffer.from(`${type} ${size}\0`);

function hashObject(type: string, data: Buffer): string {
  return crypto().createHash('sha1').update(header(type, data.length)).update(data).digest('hex');
}

/** The bytes git would store for the file or link at `abs`: never through a link, never blocking on a FIFO. */
async function readEntry(abs: string, kind: 'file' | 'link'): Promise<Buffer> {
  if (kind === 'link') return fsp().readlink(abs, { encoding: 'buffer' });
  const fh = await fsp().open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!(await fh.stat()).isFile()) throw new Error(`${abs} is no longer a regular file`);
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}
