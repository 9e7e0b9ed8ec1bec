// The shadow repository of one workspace, in clm's state directory: git objects shared by every
// session that worked there, one index file per session (its stat cache makes a snapshot hash
// only what changed), refs that keep each checkpoint's tree, and the manifests beside them. The
// workspace's own .git is never opened for writing: git runs with GIT_DIR here and the
// workspace as its work tree, and its attributes are overridden so bytes go in and out as they are.
// git writes a session's first snapshot and any that changed many files; one that changed a few
// is stored in-process (tree-cache.ts), and the index catches up when git next runs.

import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { lazyBuiltin } from '../host/lazy-builtin.js';
import { type GitPlace, runGit } from './git.js';
import { buildManifest, decodeManifest, encodeManifest, type Manifest } from './manifest.js';
import { changedPaths, type LeftOut, rescan, type Scan, type ScanOptions, scanWorkspace } from './scan.js';
import { TreeCache } from './tree-cache.js';
import { DirWatch, RULES_CHANGED } from './watch.js';

/** More directories changed than this since the last snapshot: a whole walk is cheaper than reading each. */
const MAX_REREAD = 64;

/** At most this many changed paths and bytes are stored in-process; more go to git, into one pack. */
const IN_PROCESS_PATHS = 256;
const IN_PROCESS_BYTES = 64 << 20;

/** A manifest another process stored this recently may belong to a turn its record does not name yet. */
const MANIFEST_GRACE_MS = 10 * 60_000;

/** The manifests this process stored or took up: its own records say whether they are still needed. */
const storedHere = new Set<string>();

/** git's empty tree: the "before" of a workspace that had nothing. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** A snapshot: the tree git keeps and the manifest kept beside it. */
export interface Snapshot {
  tree: string;
  manifest: string;
}

/** One path that differs between two trees (git's raw diff). */
export interface TreeChange {
  path: string;
  /** A added, D deleted, M modified, T type changed (file ↔ link). */
  status: 'A' | 'D' | 'M' | 'T';
  oldMode: number;
  newMode: number;
}

export interface TreeEntry {
  mode: number;
  sha: string;
}

/**
 * New blobs of one snapshot go into one pack, lightly compressed, instead of a file each: for a
 * first snapshot of thousands of files that is a fraction of the time (and only here: a diff
 * would take files over the threshold for binary).
 */
/** Loaded when a snapshot is first taken or a repository named, not when a turn records itself. */
const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');

const INTO_ONE_PACK = ['-c', 'core.bigFileThreshold=1', '-c', 'core.compression=1'];

/** Attributes that override the workspace's own: no filter, no line-ending or encoding conversion. */
const ATTRIBUTES = '* -text -eol -filter -ident -working-tree-encoding\n';

export function repoDirFor(stateDir: string, workspace: string): string {
  const hash = crypto().createHash('sha256').update(workspace).digest('hex').slice(0, 16);
  const name = (basename(workspace) || 'root').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
  return join(stateDir, 'checkpoints', `${name}-${hash}`);
}

export class ShadowRepo {
  readonly place: GitPlace;
  /** The last walk and the tree it gave: the next snapshot hands git only what changed since. */
  #last: { scan: Scan; snap: Snapshot } | null = null;
  /** Snapshots one at a time (they share the index). */
  #queue: Promise<unknown> = Promise.resolve();
  readonly #manifests = new Map<string, Manifest>();
  readonly #watch: DirWatch;
  /** What the last tree holds, for snapshots that store a few files themselves (null: git does the next one). */
  #cache: TreeCache | null = null;
  /** Paths stored in-process whose index entry is older than the last tree. */
  readonly #unsynced = new Set<string>();
  #stop = new AbortController();

  private constructor(
    readonly dir: string,
    readonly workspace: string,
    readonly timeoutMs: number,
    place: GitPlace,
  ) {
    this.place = place;
    this.#watch = new DirWatch(workspace);
  }

  /** Stop watching the workspace, and stop the git commands under way (a snapshot they belong to fails). */
  close(): void {
    this.#watch.close();
    this.#stop.abort();
    this.#stop = new AbortController();
  }

  /** Why the workspace is walked whole at every snapshot (its watch failed), or null. */
  get watchBroken(): string | null {
    return this.#watch.broken;
  }

  /** Open (and on first use create) the shadow repository of `workspace`, with the index of `sessionId`. */
  static async open(o: { dir: string; workspace: string; sessionId: string; timeoutMs?: number }): Promise<ShadowRepo> {
    const { dir } = o;
    const gitDir = join(dir, 'git');
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, 'manifests'), { recursive: true, mode: 0o700 });
    const indexFile = join(dir, `index-${o.sessionId}`);
    const place: GitPlace = { gitDir, workTree: o.workspace, indexFile, home };
    if (!existsSync(join(gitDir, 'HEAD'))) await createRepo(gitDir, home, o.timeoutMs);
    if (!existsSync(indexFile)) seedIndex(dir, indexFile);
    return new ShadowRepo(dir, o.workspace, o.timeoutMs ?? 0, place);
  }

  #git(args: string[], input?: Buffer | string, okCodes?: number[]): Promise<Buffer> {
    return runGit(this.place, args, { input, timeoutMs: this.timeoutMs || undefined, okCodes, signal: this.#stop.signal });
  }

  /** The workspace as it is now. */
  snapshot(scan: ScanOptions): Promise<Snapshot & { leftOut: LeftOut[] }> {
    const run = this.#queue.then(() => this.#snapshot(scan));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #snapshot(opts: ScanOptions): Promise<Snapshot & { leftOut: LeftOut[] }> {
    const prev = this.#last;
    // Events already in the kernel's queue are read before the watch is asked: the second
    // setImmediate runs after a whole turn of the event loop, its poll for I/O included.
    for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
    const watch = this.#watch;
    if (prev && watch.quiet) {
      // Pruned meanwhile by another session of this process (one that closed): written again.
      const id = prev.snap.manifest;
      if (!existsSync(join(this.dir, 'manifests', `${id}.json`))) this.#storeManifest(this.manifest(id));
      return { ...prev.snap, leftOut: prev.scan.leftOut };
    }
    const seen = watch.take();
    // A directory whose watch saw something gets a new one: it may have been removed and made again.
    const o = { ...opts, enter: (rel: string, ino: number) => watch.ensure(rel, ino, seen.lost || seen.dirs.has(rel)) };
    const partial = prev && !seen.lost && seen.dirs.size <= MAX_REREAD && !seen.dirs.has(RULES_CHANGED);
    const scan = await (partial ? rescan(this.workspace, prev.scan, seen.dirs, o) : scanWorkspace(this.workspace, o));
    watch.keepOnly(scan.dirs);
    const manifest = this.#storeManifest(buildManifest(scan));
    const changed = changedPaths(prev?.scan ?? null, scan);
    // The first snapshot of this process learns what the index holds (a seeded or earlier one).
    const known = prev ? [...prev.scan.files.keys()] : await this.#indexPaths();
    const gone = known.filter((p) => !scan.files.has(p));
    let tree = prev?.snap.tree;
    if (!tree || changed.length || gone.length)
      tree = (await this.#inProcess(scan, changed, gone)) ?? (await this.#withGit(scan, changed, gone));
    const snap = { tree, manifest };
    this.#last = { scan, snap };
    return { ...snap, leftOut: scan.leftOut };
  }

  /** A few files changed: their blobs and the trees above them stored here, no git started; null when git must do it. */
  async #inProcess(scan: Scan, changed: readonly string[], gone: readonly string[]): Promise<string | null> {
    const cache = this.#cache;
    if (!cache || changed.length > IN_PROCESS_PATHS) return null;
    const entries = changed.map((path) => ({ path, ...scan.files.get(path)! }));
    if (entries.reduce((n, e) => n + e.size, 0) > IN_PROCESS_BYTES) return null;
    try {
      const tree = await cache.update(entries, gone);
      for (const p of [...changed, ...gone]) this.#unsynced.add(p);
      return tree;
    } catch {
      // Changed since the walk (gone, another kind, unreadable): git does it, and says why if it cannot.
      this.#cache = null;
      return null;
    }
  }

  /** git hashes what changed into the index and writes the tree; what it holds is learnt for the next snapshot. */
  async #withGit(scan: Scan, changed: readonly string[], gone: readonly string[]): Promise<string> {
    this.#cache = null;
    // Paths stored in-process since the index was last written are handed to git again.
    const stale = [...this.#unsynced];
    const add = [...new Set([...changed, ...stale.filter((p) => scan.files.has(p))])];
    const drop = [...new Set([...gone, ...stale.filter((p) => !scan.files.has(p))])];
    // Paths still on disk but left out now (too large, ignored, no longer a file) leave the index by force.
    const onDisk = drop.filter((p) => existsSync(join(this.workspace, p)));
    const missing = drop.filter((p) => !existsSync(join(this.workspace, p)));
    if (onDisk.length) await this.#git(['update-index', '-z', '--force-remove', '--stdin'], nulList(onDisk));
    if (add.length || missing.length)
      await this.#git([...INTO_ONE_PACK, 'update-index', '-z', '--add', '--remove', '--replace', '--stdin'], nulList([...missing, ...add]));
    const tree = (await this.#git(['write-tree'])).toString('utf8').trim();
    this.#unsynced.clear();
    const listing = splitNul(await this.#git(['ls-tree', '-r', '-z', '--full-tree', tree]));
    this.#cache = TreeCache.fromListing(join(this.place.gitDir, 'objects'), this.workspace, listing, tree);
    return tree;
  }

  async #indexPaths(): Promise<string[]> {
    if (!existsSync(this.place.indexFile)) return [];
    return splitNul(await this.#git(['ls-files', '-z', '--cached']));
  }

  #storeManifest(m: Manifest): string {
    const text = encodeManifest(m);
    const id = crypto().createHash('sha256').update(text).digest('hex');
    const file = join(this.dir, 'manifests', `${id}.json`);
    if (!existsSync(file)) {
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, text, { mode: 0o600 });
      renameSync(tmp, file);
    } else if (!storedHere.has(file)) {
      // Taken up again: fresh to another process's pruning until a record of this one names it.
      utimesSync(file, new Date(), new Date());
    }
    storedHere.add(file);
    this.#manifests.set(id, m);
    return id;
  }

  /**
   * Remove the manifests `keep` does not name. One another process stored in the last
   * MANIFEST_GRACE_MS is left: its record may not name it yet.
   */
  pruneManifests(keep: ReadonlySet<string>): void {
    const dir = join(this.dir, 'manifests');
    const now = Date.now();
    for (const name of readdirSync(dir)) {
      const id = name.endsWith('.json') ? name.slice(0, -5) : null;
      if (!id || keep.has(id)) continue;
      const file = join(dir, name);
      try {
        if (!storedHere.has(file) && now - statSync(file).mtimeMs < MANIFEST_GRACE_MS) continue;
        rmSync(file, { force: true });
      } catch {
        /* removed meanwhile */
      }
      storedHere.delete(file);
      // The last snapshot's stays known: the next one may be that snapshot again, and store it again.
      if (id !== this.#last?.snap.manifest) this.#manifests.delete(id);
    }
  }

  manifest(id: string): Manifest {
    let m = this.#manifests.get(id);
    if (!m) {
      m = decodeManifest(readFileSync(join(this.dir, 'manifests', `${id}.json`), 'utf8'));
      this.#manifests.set(id, m);
    }
    return m;
  }

  /** What differs between two trees, path by path (no rename detection: a move is a delete and an add). */
  async diffTrees(a: string, b: string): Promise<TreeChange[]> {
    if (a === b) return [];
    const out = splitNul(await this.#git(['diff-tree', '-r', '-z', '--no-renames', a, b]));
    const changes: TreeChange[] = [];
    for (let i = 0; i + 1 < out.length; i += 2) {
      // ":100644 100644 <sha> <sha> M" then the path
      const [oldMode, newMode, , , status] = out[i]!.slice(1).split(' ');
      changes.push({
        path: out[i + 1]!,
        status: (status?.[0] ?? 'M') as TreeChange['status'],
        oldMode: Number.parseInt(oldMode!, 8),
        newMode: Number.parseInt(newMode!, 8),
      });
    }
    return changes;
  }

  /** Every file and link of a tree. */
  async listTree(tree: string): Promise<Map<string, TreeEntry>> {
    const out = new Map<string, TreeEntry>();
    for (const line of splitNul(await this.#git(['ls-tree', '-r', '-z', '--full-tree', tree]))) {
      // "<mode> blob <sha>\t<path>"
      const tab = line.indexOf('\t');
      const [mode, , sha] = line.slice(0, tab).split(' ');
      out.set(line.slice(tab + 1), { mode: Number.parseInt(mode!, 8), sha: sha! });
    }
    return out;
  }

  /** The contents of `shas`, each handed to `each` as it arrives. */
  async readBlobs(shas: readonly string[], each: (sha: string, data: Buffer) => void): Promise<void> {
    if (!shas.length) return;
    const out = await this.#git(['cat-file', '--batch'], `${shas.join('\n')}\n`);
    let at = 0;
    while (at < out.length) {
      const nl = out.indexOf(10, at);
      const [sha, type, size] = out.subarray(at, nl).toString('latin1').split(' ');
      if (type === 'missing' || size === undefined) throw new Error(`checkpoint object ${sha} is missing`);
      const n = Number(size);
      each(sha!, out.subarray(nl + 1, nl + 1 + n));
      at = nl + 1 + n + 1;
    }
  }

  /** A unified diff of two trees (text; binary files named), limited to `paths` when given. */
  async unifiedDiff(a: string, b: string, paths?: readonly string[]): Promise<string> {
    if (a === b) return '';
    const args = ['diff-tree', '-p', '-r', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv', a, b];
    if (paths?.length) args.push('--', ...paths.map((p) => `:(literal)${p}`));
    return (await this.#git(args)).toString('utf8');
  }

  /** Keep these trees under these ref names (refs/clm/…), and drop the refs under `drop` prefixes. */
  async setRefs(keep: readonly { ref: string; tree: string }[], drop: readonly string[] = []): Promise<void> {
    const lines = keep.map((k) => `update ${k.ref}\0${k.tree}\0\0`);
    for (const prefix of drop) for (const ref of await this.refs(prefix)) lines.push(`delete ${ref}\0\0`);
    if (lines.length) await this.#git(['update-ref', '-z', '--stdin'], lines.join(''));
  }

  async refs(prefix: string): Promise<string[]> {
    return (await this.#git(['for-each-ref', '--format=%(refname)', prefix])).toString('utf8').split('\n').filter(Boolean);
  }

  /** Delete what no ref keeps any more; the repository's size in bytes afterwards. */
  async prune(): Promise<number> {
    await this.#git(['prune', '--expire=now']);
    return this.size();
  }

  /** Bytes of objects the repository holds. */
  async size(): Promise<number> {
    const text = (await this.#git(['count-objects', '-v'])).toString('utf8');
    const kib = (k: string) => Number(new RegExp(`^${k}: (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return (kib('size') + kib('size-pack')) * 1024;
  }
}

/**
 * The repository made whole in a directory of its own, then moved into place: one whose making
 * was killed half-way (past its deadline) leaves neither a lock nor a repository without its
 * attributes, which would let the workspace's filters change the bytes stored.
 */
async function createRepo(gitDir: string, home: string, timeoutMs: number | undefined): Promise<void> {
  const tmp = `${gitDir}.new-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    await runGit({ home }, ['init', '-q', '--bare', tmp], { timeoutMs });
    await runGit({ home, gitDir: tmp }, ['config', 'core.bare', 'false'], { timeoutMs });
    mkdirSync(join(tmp, 'info'), { recursive: true });
    writeFileSync(join(tmp, 'info', 'attributes'), ATTRIBUTES);
    renameSync(tmp, gitDir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    // Another process made it meanwhile.
    if (!existsSync(join(gitDir, 'HEAD'))) throw e;
  }
}

/** A new session starts from the newest index of the workspace: its stat cache spares hashing unchanged files again. */
function seedIndex(dir: string, indexFile: string): void {
  let best: { file: string; mtime: number; atime: number } | null = null;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('index-') || name.endsWith('.lock')) continue;
    try {
      const st = statSync(join(dir, name));
      if (!best || st.mtimeMs > best.mtime) best = { file: join(dir, name), mtime: st.mtimeMs, atime: st.atimeMs };
    } catch {
      /* removed meanwhile */
    }
  }
  if (best) {
    try {
      copyFileSync(best.file, indexFile);
      // git treats entries not older than the index file as possibly changed (racy clean): the
      // copy keeps the source's time (a millisecond earlier: seconds as a double round), or a
      // change made in the source's tick would pass for settled.
      utimesSync(indexFile, best.atime / 1000, (Math.floor(best.mtime) - 1) / 1000);
    } catch {
      /* start without: only slower */
    }
  }
}

function nulList(paths: readonly string[]): string {
  return paths.map((p) => `${p}\0`).join('');
}

function splitNul(b: Buffer): string[] {
  const s = b.toString('utf8');
  const parts = s.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}
