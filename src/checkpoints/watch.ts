// Which directories of the workspace had entries change since the last look: one inotify watch
// (fs.watch, not recursive) per directory a walk found, so a snapshot reads again only those, and
// a turn that changed nothing reads none. A watch that cannot be made (too many, a file system
// without inotify) makes the whole thing unusable; then every snapshot walks the workspace. A
// burst of events past what the kernel queues may have lost some: that too means a whole walk.
// A directory whose watch saw something gets a new watch before it is read again: the event may
// have been its own removal, and a directory made again by the same name needs a watch of its own.
// Only where inotify sees every change: on Linux, on a local file system. A network or FUSE
// mount (NFS, SMB, 9p, a container's shared folder) hears nothing of writes made on the other
// side, so there every snapshot walks the workspace.

import { type FSWatcher, statfsSync, watch } from 'node:fs';
import { join } from 'node:path';

/** Marks a change of ignore rules (a .gitignore file): the next snapshot walks the whole workspace. */
export const RULES_CHANGED = '\0rules';

/** Events past this many since the last look: the kernel's queue (16,384 by default) may have overflowed. */
const MAX_EVENTS = 8192;

/** statfs(2) magic numbers of local file systems, whose every change inotify reports. */
const LOCAL_FS = new Set([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0x52654973, // reiserfs
  0x3153464a, // jfs
]);

/** Why a watch of `root` cannot be trusted to see every change (null: it can). */
export function unwatchable(root: string, platform = process.platform): string | null {
  if (platform !== 'linux') return `no directory watch on ${platform}`;
  let type: number;
  try {
    type = Number(statfsSync(root).type);
  } catch (e) {
    return `cannot tell the file system of ${root} (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  return LOCAL_FS.has(type) ? null : `${root} is not on a local file system (type 0x${type.toString(16)})`;
}

export class DirWatch {
  readonly #watchers = new Map<string, { w: FSWatcher; ino: number }>();
  #dirty = new Set<string>();
  #events = 0;
  #broken: string | null = null;

  constructor(readonly root: string) {
    this.#broken = unwatchable(root);
  }

  /** Why the watch cannot be trusted (null: it can). */
  get broken(): string | null {
    return this.#broken;
  }

  /** Nothing seen since the last take(). */
  get quiet(): boolean {
    return !this.#broken && this.#dirty.size === 0;
  }

  /** The directories seen changing since the last call, and whether events may have been lost. */
  take(): { dirs: Set<string>; lost: boolean } {
    const dirs = this.#dirty;
    const lost = this.#events > MAX_EVENTS || this.#broken !== null;
    this.#dirty = new Set();
    this.#events = 0;
    return { dirs, lost };
  }

  /** Watch directory `rel` (before it is read, so nothing between the reading and the watch is missed). */
  ensure(rel: string, ino: number, renew = false): void {
    if (this.#broken) return;
    const had = this.#watchers.get(rel);
    if (had?.ino === ino && !renew) return;
    // Another directory by the same name (removed and made again, perhaps with the same inode
    // number): the old watch sees nothing of it.
    had?.w.close();
    try {
      const w = watch(rel ? join(this.root, rel) : this.root, { persistent: false }, (_event, name) => {
        this.#events++;
        this.#dirty.add(rel);
        if (name === '.gitignore') this.#dirty.add(RULES_CHANGED);
      });
      w.on('error', () => {
        // The directory went away (its parent saw that) or the watch failed: read it again.
        w.close();
        if (this.#watchers.get(rel)?.w === w) this.#watchers.delete(rel);
        this.#dirty.add(rel);
      });
      this.#watchers.set(rel, { w, ino });
    } catch (e) {
      this.#broken = `cannot watch ${rel || '.'}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
      this.close();
    }
  }

  /** Stop watching what is not in `dirs` (nor the root) any more. */
  keepOnly(dirs: ReadonlyMap<string, unknown>): void {
    for (const [d, { w }] of this.#watchers)
      if (d && !dirs.has(d)) {
        w.close();
        this.#watchers.delete(d);
      }
  }

  close(): void {
    for (const { w } of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }
}
