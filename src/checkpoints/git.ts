// The one way checkpoints run git: the shadow repository's GIT_DIR, the workspace as work tree,
// the session's own index file, and an environment built from nothing but PATH, so neither the
// user's environment (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_*), nor their global or system config,
// nor their attributes or hooks change what git does. Every command has a deadline and fails with
// a message that names it.

import type { spawn as Spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { lazyBuiltin } from '../host/lazy-builtin.js';
import { findOnPath } from '../host/on-path.js';

/** Loaded at the first git command, not when a turn without tools records itself. */
const childProcess = lazyBuiltin<typeof import('node:child_process')>('node:child_process');

export class GitError extends Error {}

/** A git command passed its deadline and was killed (its index lock removed). */
export class GitTimeout extends GitError {}

/** A git command was stopped on request (its index lock removed). */
export class GitAborted extends GitError {}

export interface GitPlace {
  /** The shadow repository. */
  gitDir: string;
  /** The workspace. */
  workTree: string;
  /** The index file of this session. */
  indexFile: string;
  /** An empty directory that stands in for HOME and XDG_CONFIG_HOME. */
  home: string;
}

export interface GitRun {
  input?: Buffer | string;
  /** Deadline in ms (default DEFAULT_GIT_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Exit codes that are not failures (diff's 1). */
  okCodes?: number[];
  /** Stops the command (GitAborted). */
  signal?: AbortSignal;
}

export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

/** Flags before every command: no hooks, no pager, no fsmonitor, bytes as they are. */
const FIXED = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.autocrlf=false',
  '-c',
  'core.safecrlf=false',
  '-c',
  'core.symlinks=true',
  '-c',
  'core.filemode=true',
  '-c',
  'core.quotepath=false',
  '-c',
  'core.untrackedCache=false',
  '-c',
  'gc.auto=0',
  '--no-pager',
];

export function gitEnv(p: Pick<GitPlace, 'home'> & Partial<GitPlace>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: p.home,
    XDG_CONFIG_HOME: p.home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
    // git's allocator keeps what it frees instead of handing it back to the kernel after each
    // file: in some virtual machines a hand-back (a TLB flush) costs more than hashing the file,
    // and a first snapshot of 10,000 files took three times the CPU (bench/checkpoints.mjs).
    GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=16777216',
  };
  if (p.gitDir) env.GIT_DIR = p.gitDir;
  if (p.workTree) env.GIT_WORK_TREE = p.workTree;
  if (p.indexFile) env.GIT_INDEX_FILE = p.indexFile;
  return env;
}

/** Run `git args` in `place`; resolves with its stdout. */
export function runGit(place: Partial<GitPlace> & Pick<GitPlace, 'home'>, args: string[], o: GitRun = {}): Promise<Buffer> {
  const timeoutMs = o.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const what = `git ${args.find((a) => !a.startsWith('-')) ?? args[0]}`;
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof Spawn>;
    try {
      child = childProcess().spawn('git', [...FIXED, ...args], {
        cwd: place.workTree ?? place.home,
        env: gitEnv(place),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    } catch (e) {
      reject(new GitError(`${what}: ${(e as Error).message}`));
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let errBytes = 0;
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => {
      if (errBytes < 65536) err.push(b);
      errBytes += b.length;
    });
    let killed: 'timeout' | 'abort' | null = null;
    const kill = (why: 'timeout' | 'abort') => {
      killed ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill('timeout'), timeoutMs);
    timer.unref();
    const onAbort = () => kill('abort');
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new GitError(e.code === 'ENOENT' ? 'git is not installed' : `${what}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (killed) {
        // A killed git leaves its lock, which would fail every later command on this index: the
        // index is this session's alone and its commands run one at a time, so the lock is ours.
        if (place.indexFile) rmSync(`${place.indexFile}.lock`, { force: true });
        reject(
          killed === 'abort'
            ? new GitAborted(`${what} was stopped`)
            : new GitTimeout(`${what} did not finish within ${formatSeconds(timeoutMs)}`),
        );
        return;
      }
      if (code === 0 || (code !== null && o.okCodes?.includes(code))) {
        resolve(Buffer.concat(out));
        return;
      }
      const text = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join('; ');
      reject(new GitError(`${what} failed (${signal ?? `exit ${code}`})${text ? `: ${text}` : ''}`));
    });
    child.stdin!.on('error', () => {
      /* the close handler reports why git stopped reading */
    });
    child.stdin!.end(o.input ?? '');
  });
}

let available: boolean | null = null;

/**
 * Whether a `git` program is there to run (asked once per process). Found on PATH, not run: a
 * spawn here would block the event loop (a fork of the whole process) while a reply streams;
 * a git that is there but fails says so at its first command.
 */
export function gitAvailable(): boolean {
  available ??= findOnPath('git', process.env.PATH ?? '/usr/bin:/bin') !== null;
  return available;
}

const formatSeconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);
