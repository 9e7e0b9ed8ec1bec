// bwrap's trial run remembered between starts: asking whether bwrap can make its namespaces
// spawns a process, which costs a start about 20 ms of the main thread (loading child_process,
// fork and exec) although the answer almost never changes. A yes is kept in the state directory
// with what it depends on — the bwrap binary (path, size, time, inode), the user, the kernel and
// the sysctls that allow or refuse user namespaces — and reused while all of them are the same.
// Only a yes is kept: a machine that cannot sandbox asks again each start, so a fix is seen at
// once. A yes gone stale (an AppArmor profile changed, say) costs nothing unsafe: the first
// sandboxed command's set-up fails and is said (never run unconfined), and the yes is forgotten.

import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clmDir } from '../host/xdg-dirs.js';

const FILE = 'sandbox-verdict.json';
/** What decides whether an unprivileged process may create user namespaces, where the kernel has it. */
const DEPENDS_ON = [
  '/proc/sys/kernel/osrelease',
  '/proc/sys/kernel/unprivileged_userns_clone',
  '/proc/sys/user/max_user_namespaces',
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
];

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '-';
  }
}

export class VerdictCache {
  readonly #file: string | null;

  constructor(env: NodeJS.ProcessEnv) {
    const dir = clmDir('state', env).dir;
    this.#file = dir ? join(dir, FILE) : null;
  }

  /** What the verdict for `bin` depends on, as one string; null when bin cannot be looked at. */
  #key(bin: string): string | null {
    try {
      const st = statSync(bin);
      return [bin, st.size, st.mtimeMs, st.ino, process.getuid?.() ?? '', ...DEPENDS_ON.map(readOr)].join('\n');
    } catch {
      return null;
    }
  }

  /** Whether a yes for `bin` is remembered and still holds. */
  holds(bin: string): boolean {
    if (!this.#file) return false;
    try {
      const kept = JSON.parse(readFileSync(this.#file, 'utf8')) as { key?: unknown };
      return typeof kept.key === 'string' && kept.key === this.#key(bin);
    } catch {
      return false;
    }
  }

  /** Remember that bwrap at `bin` works here (best effort: a state directory that cannot be written keeps nothing). */
  remember(bin: string): void {
    const key = this.#key(bin);
    if (!this.#file || !key) return;
    try {
      mkdirSync(join(this.#file, '..'), { recursive: true, mode: 0o700 });
      const tmp = `${this.#file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ key }), { mode: 0o600 });
      renameSync(tmp, this.#file);
    } catch {
      // The next start asks bwrap again.
    }
  }

  forget(): void {
    if (!this.#file) return;
    try {
      unlinkSync(this.#file);
    } catch {
      // Nothing was kept.
    }
  }
}
