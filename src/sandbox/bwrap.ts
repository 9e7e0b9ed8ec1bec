// The Linux backend: Debian's bubblewrap (`bwrap`). The file system is bound read-only, the
// writable roots read-write over it, then clm's protected paths read-only again and the key files
// masked by an unreadable empty file or directory; /tmp is the session's own directory
// (read-only mode: an empty scratch space), with the directory the program itself lives in brought
// back read-only when that is under /tmp; /dev, /proc, the pid namespace are fresh (clm's
// environment and other processes are out of reach), the network is an empty namespace unless
// allowed, listening unix sockets outside the writable roots are masked (a socket ignores
// read-only mounts and network namespaces), every capability is dropped (root included), the
// command gets a new session (no TIOCSTI into a terminal) and dies with clm.
//
// A mount point is itself immovable (rename fails with EBUSY), but the directory above it is not:
// `mv .git x && mkdir -p .git/hooks` would walk around a read-only `.git/hooks`. So every
// directory between a writable root and a protected path is bound onto itself too. A protected
// path that does not exist yet gets its first missing component made here (and removed again
// when the last command using it is gone), since a read-only empty directory is the only thing
// that keeps a tool from creating what belongs below it, and bwrap would otherwise leave the
// mount points it makes behind in the user's tree.

import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { Availability, SandboxBackend, SpawnRequest, WrappedSpawn } from './backend.js';
import { type NamedPath, type SandboxPolicy, within } from './policy.js';
import { lazyBuiltin } from '../host/lazy-builtin.js';
import { VerdictCache } from './verdict-cache.js';
import { findOnPath } from '../host/on-path.js';

// Needed once a process is spawned or the check runs, which a run does after its first request.
const childProcess = lazyBuiltin<typeof import('node:child_process')>('node:child_process');
const os = lazyBuiltin<typeof import('node:os')>('node:os');

/** Where bwrap is on PATH, or null. */
export function findBwrap(env: NodeJS.ProcessEnv = process.env): string | null {
  return findOnPath('bwrap', env.PATH ?? '/usr/bin:/bin');
}

const isRoot = () => process.getuid?.() === 0;

/** The namespaces and flags every sandboxed process gets. */
function isolation(network: boolean): string[] {
  const a = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  if (!network) a.push('--unshare-net');
  a.push('--die-with-parent', '--new-session');
  // As root bwrap keeps every capability (CAP_SYS_ADMIN could remount / read-write); drop them.
  if (isRoot()) a.push('--cap-drop', 'ALL');
  return a;
}

const INSTALL_FIX =
  'install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), or choose --sandbox full';

function readSysctl(name: string): string | null {
  try {
    return readFileSync(`/proc/sys/${name}`, 'utf8').trim();
  } catch {
    return null;
  }
}

/** What to change when bwrap exists but cannot make its namespaces. */
export function namespaceFix(): string {
  if (readSysctl('kernel/apparmor_restrict_unprivileged_userns') === '1')
    return "Ubuntu's AppArmor refuses unprivileged user namespaces: allow bwrap with an AppArmor profile (docs/cli.md, Sandbox), or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`; or choose --sandbox full";
  if (readSysctl('kernel/unprivileged_userns_clone') === '0')
    return 'unprivileged user namespaces are off: `sudo sysctl kernel.unprivileged_userns_clone=1`; or choose --sandbox full';
  if (readSysctl('user/max_user_namespaces') === '0')
    return 'user namespaces are off: `sudo sysctl user.max_user_namespaces=15000`; or choose --sandbox full';
  return 'bwrap must be able to create user, pid and network namespaces here (a container may forbid them); or choose --sandbox full';
}

/** The trial command: the isolation every call uses, running /bin/true. */
function trialArgs(): string[] {
  return ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', ...isolation(false), '--', '/bin/true'];
}

function verdict(bin: string | null, status: number | null, stderr: string, error?: Error): Availability {
  if (!bin) return { ok: false, reason: 'bwrap (bubblewrap) is not installed', fix: INSTALL_FIX };
  if (error) return { ok: false, reason: `${bin} cannot be run: ${error.message}`, fix: INSTALL_FIX };
  if (status === 0) return { ok: true, detail: bin };
  const said = stderr.trim().split('\n')[0] || `exit status ${status}`;
  return { ok: false, reason: `bwrap cannot create its namespaces (${said})`, fix: namespaceFix() };
}

/** `bubblewrap 0.8.0`, or null when it cannot be asked. */
export function bwrapVersion(bin: string): string | null {
  const r = childProcess().spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 5000 });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** The directory of this process's sandbox files: /tmp of the commands, and the masks. */
export interface Scratch {
  dir: string;
  tmp: string;
  /** An empty file and an empty directory nobody may open (mode 000), bound over what is hidden. */
  noFile: string;
  noDir: string;
}

let scratch: Scratch | null = null;

export function ensureScratch(): Scratch {
  if (scratch) return scratch;
  const dir = mkdtempSync(join(os().tmpdir(), 'clm-sandbox-'));
  const s: Scratch = { dir, tmp: join(dir, 'tmp'), noFile: join(dir, 'nofile'), noDir: join(dir, 'nodir') };
  mkdirSync(s.tmp, { mode: 0o700 });
  closeSync(openSync(s.noFile, 'w', 0o000));
  chmodSync(s.noFile, 0o000);
  mkdirSync(s.noDir, { mode: 0o000 });
  chmodSync(s.noDir, 0o000);
  scratch = s;
  // The session's temporary files go with it, and so do mount points a process still running
  // at exit (an MCP server) held.
  process.once('exit', () => {
    releasePoints([...madePoints.keys()], true);
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* nothing more can be done on the way out */
    }
  });
  return s;
}

/** The session's temporary directory (the commands' /tmp), made on first use. */
export function sessionTmp(): string {
  return ensureScratch().tmp;
}

/** Mount points made here for protected paths that did not exist, with the commands using each. */
const madePoints = new Map<string, { kind: 'dir' | 'file'; users: number }>();

/**
 * A mount point made earlier at `p` that is still there: one more command uses it. One made for a
 * command still ending but removed since (its tree deleted and made again) is forgotten.
 */
function usePoint(p: string): boolean {
  const known = madePoints.get(p);
  if (!known) return false;
  if (!exists(p)) {
    madePoints.delete(p);
    return false;
  }
  known.users++;
  return true;
}

/**
 * The path to mount over for `rule`: the path itself when it exists, else its first missing
 * component, made now (an empty directory, or an empty file for a missing file itself) — then
 * `made` is set, and releasePoints() undoes it. Null when nothing can be made there (then no
 * tool can create it either).
 */
function mountPointFor(rule: NamedPath): { path: string; made: boolean } | null {
  let existing = rule.path;
  const missing: string[] = [];
  for (;;) {
    // Below a mount point made for another rule (of this command or one running), nothing can
    // be created: that point, read-only and empty, does for this rule too.
    if (usePoint(existing)) return { path: existing, made: true };
    try {
      lstatSync(existing);
      break;
    } catch {
      missing.unshift(existing);
      const up = dirname(existing);
      if (up === existing) return null;
      existing = up;
    }
  }
  const first = missing[0];
  if (!first) return { path: rule.path, made: false };
  const kind = missing.length === 1 ? rule.kind : 'dir';
  try {
    if (kind === 'dir') mkdirSync(first);
    else closeSync(openSync(first, 'wx', 0o644));
  } catch {
    return null;
  }
  madePoints.set(first, { kind, users: 1 });
  return { path: first, made: true };
}

/** A command that used made mount points is gone: remove those no command uses, if still empty. */
function releasePoints(points: string[], all = false): void {
  for (const p of points) {
    const m = madePoints.get(p);
    if (!m || (--m.users > 0 && !all)) continue;
    madePoints.delete(p);
    try {
      if (m.kind === 'dir') rmdirSync(p);
      else if (statSync(p).size === 0) unlinkSync(p);
    } catch {
      /* something was put there meanwhile (by clm's user, outside the sandbox): it stays */
    }
  }
}

/** Listening unix sockets with a path (from /proc/net/unix: flag __SO_ACCEPTCON). */
export function listeningSockets(): string[] {
  let text: string;
  try {
    text = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const path = f[7];
    if (!path?.startsWith('/') || (Number.parseInt(f[3] ?? '0', 16) & 0x10000) === 0) continue;
    out.push(path);
  }
  return out;
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/**
 * The directories under /tmp that the program itself lives in (its file, a script it is given, its
 * working directory): the command's /tmp is its own, so these are brought back read-only, whole
 * (a script there loads its modules beside it), or a server checked out under /tmp would not start.
 */
export function programDirsInTmp(paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const m = /^\/tmp\/([^/]+)/.exec(p);
    if (!m) continue;
    const top = `/tmp/${m[1]}`;
    try {
      if (statSync(top).isDirectory()) out.add(top);
    } catch {
      /* not there: nothing to bring back */
    }
  }
  return [...out];
}

/** The bwrap arguments confining a command under `policy` (without the command), and the mount points made for it. */
export function bwrapArgs(policy: SandboxPolicy, s: Scratch, programDirs: readonly string[] = []): { args: string[]; made: string[] } {
  const a = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  const writeMode = policy.mode === 'workspace-write';
  if (writeMode) a.push('--bind', s.tmp, '/tmp');
  else a.push('--tmpfs', '/tmp');
  for (const d of programDirs) a.push('--ro-bind', d, d);
  const roots = policy.writable;
  for (const r of roots) a.push('--bind', r, r);
  // A read-only workspace under /tmp is brought back over the scratch /tmp.
  const shown = writeMode ? [...roots, ...programDirs] : [policy.workspace, ...programDirs];
  if (!writeMode && within(policy.workspace, '/tmp')) a.push('--ro-bind', policy.workspace, policy.workspace);
  // What the sandbox shows at `p`: under /tmp only what a writable root (or the workspace) brings back.
  const visible = (p: string) => !within(p, '/tmp') || shown.some((r) => within(p, r));
  const inRoot = (p: string) => roots.find((r) => within(p, r) && p !== r);

  const made: string[] = [];
  const pins = new Set<string>();
  const over: [string, NamedPath, 'protect' | 'hide'][] = [];
  const plan = (rule: NamedPath, how: 'protect' | 'hide') => {
    const root = inRoot(rule.path);
    // Outside the writable roots, a path that does not exist cannot be created: nothing to hide.
    let target: string | null = rule.path;
    if (root) {
      const point = mountPointFor(rule);
      target = point?.path ?? null;
      if (point?.made) made.push(point.path);
    } else {
      try {
        lstatSync(rule.path);
      } catch {
        target = null;
      }
    }
    if (!target || !visible(target)) return;
    if (root) for (let d = dirname(target); d !== root && within(d, root); d = dirname(d)) pins.add(d);
    over.push([target, rule, how]);
  };
  if (writeMode) for (const rule of policy.protected) plan(rule, 'protect');
  for (const rule of policy.unreadable) plan(rule, 'hide');
  const targets = new Set(over.map(([t]) => t));
  for (const d of [...pins].sort((x, y) => x.length - y.length)) if (!targets.has(d)) a.push('--bind', d, d);
  const done = new Set<string>();
  for (const [target, rule, how] of over) {
    // One mount per target (a point made for two rules); what lies below a hidden one is hidden with it.
    if (done.has(target)) continue;
    done.add(target);
    if (how === 'protect') a.push('--ro-bind', target, target);
    else {
      let dir = rule.kind === 'dir';
      try {
        dir = statSync(target).isDirectory();
      } catch {
        /* a dangling link: hide it as what the rule names */
      }
      a.push('--ro-bind', dir ? s.noDir : s.noFile, target);
    }
  }
  const masked = new Set<string>();
  for (const sock of listeningSockets()) {
    const p = realOrNull(sock);
    if (!p || masked.has(p) || !visible(p) || roots.some((r) => within(p, r))) continue;
    try {
      if (!lstatSync(p).isSocket()) continue;
    } catch {
      continue;
    }
    masked.add(p);
    a.push('--ro-bind', '/dev/null', p);
  }
  a.push(...isolation(policy.network), '--chdir', policy.cwd);
  return { args: a, made };
}

class BwrapBackend implements SandboxBackend {
  readonly name = 'bubblewrap';
  private known: Availability | null = null;
  private pending: Promise<Availability> | null = null;

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  available(): Availability {
    if (this.known) return this.known;
    const bin = findBwrap(this.env);
    if (!bin) return (this.known = verdict(null, null, ''));
    const r = childProcess().spawnSync(bin, trialArgs(), { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'ignore', 'pipe'] });
    this.known = verdict(bin, r.status, r.stderr ?? '', r.error);
    return this.known;
  }

  availableAsync(): Promise<Availability> {
    if (this.known) return Promise.resolve(this.known);
    this.pending ??= new Promise<Availability>((resolve) => {
      const bin = findBwrap(this.env);
      if (!bin) return resolve(verdict(null, null, ''));
      const cache = new VerdictCache(this.env);
      if (cache.holds(bin)) return resolve(verdict(bin, 0, ''));
      let stderr = '';
      const c = childProcess().spawn(bin, trialArgs(), { stdio: ['ignore', 'ignore', 'pipe'] });
      c.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      c.once('error', (e) => resolve(verdict(bin, null, '', e)));
      c.once('close', (status) => {
        if (status === 0) cache.remember(bin);
        resolve(verdict(bin, status, stderr));
      });
    }).then((v) => (this.known ??= v));
    return this.pending;
  }

  setupFailed(): void {
    new VerdictCache(this.env).forget();
  }

  wrap(req: SpawnRequest, policy: SandboxPolicy): WrappedSpawn {
    const bin = findBwrap(this.env);
    if (policy.mode === 'full' || !bin) return { ...req, release() {} };
    const s = ensureScratch();
    const { args, made } = bwrapArgs(policy, s, programDirsInTmp([req.file, ...req.args, req.cwd ?? '']));
    let released = false;
    return {
      file: bin,
      args: [...args, '--', req.file, ...req.args],
      env: { ...req.env, TMPDIR: '/tmp' },
      cwd: req.cwd,
      release() {
        if (released) return;
        released = true;
        releasePoints(made);
      },
    };
  }
}

/** The bubblewrap backend for `env`'s PATH. */
export function bwrapBackend(env: NodeJS.ProcessEnv = process.env): SandboxBackend {
  return new BwrapBackend(env);
}
