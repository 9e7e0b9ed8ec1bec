// The policy of this machine and run: the workspace (the git root above the directory clm was
// started in, else that directory), the writable roots, clm's own directories and the key files,
// each as a real path — a symbolic link anywhere on the way is resolved here, so every rule
// compares paths the kernel would reach.

import { lstatSync, readFileSync, readlinkSync, realpathSync, type Stats, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { childPath } from '../host/child-path.js';
import { KEY_FILES, type NamedPath, type SandboxMode, type SandboxPolicy, within } from './policy.js';

/** What config.lua and the command line say (per profile). */
export interface SandboxSettings {
  /** `sandbox` / `--sandbox`; undefined = the default (workspace-write where the sandbox works). */
  mode?: SandboxMode;
  /** `sandbox_writable`: more writable roots (absolute, `~/…`, or relative to the workspace). */
  writable?: string[];
  /** `sandbox_network`: workspace-write commands may use the network. */
  network?: boolean;
  /** `sandbox_unreadable`: more paths no tool may read (added to the key files). */
  unreadable?: string[];
}

export interface PolicyContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Plugin directories in use (protected like the config directory). */
  pluginDirs?: readonly string[];
}

/**
 * The real path of `p`; for a path that does not exist, the real path of its nearest existing
 * ancestor and the rest — a dangling symbolic link followed to where a write would create its target.
 */
export function realPathOf(p: string): string {
  return realPathOfAbsolute(NOT_NORMAL.test(p) ? resolve(p) : p, 0);
}

/** What resolve would change: a relative (or empty) path, an empty, `.` or `..` component, a trailing slash. */
const NOT_NORMAL = /^(?!\/)|\/\/|\/\.\.?(?:\/|$)|.\/$/;

/**
 * realPathOf of a normalized absolute path (what resolve returns), which needs no normalizing
 * again: path functions on every ancestor of every key file would be most of a start's calls of
 * them, and enough for V8 to optimize path's normalizing within a short run.
 */
function realPathOfAbsolute(abs: string, depth: number): string {
  // Most paths asked about (key files, git hooks) do not exist: lstat says so without throwing,
  // where realpath's ENOENT costs an exception with its stack trace, dozens per start. The C
  // library's realpath walks the path in one call, Node's own in JavaScript.
  if (entryAt(abs)) {
    try {
      return realpathSync.native(abs);
    } catch {
      /* a dangling link, a loop, no permission: resolved below as far as it goes */
    }
  }
  // A normalized absolute path splits at its last slash (the root's parent is the root).
  const cut = abs.lastIndexOf('/');
  if (abs.length === 1) return abs;
  const dir = realPathOfAbsolute(cut === 0 ? '/' : abs.slice(0, cut), depth);
  const here = childPath(dir, abs.slice(cut + 1));
  if (depth < 40 && entryAt(here)?.isSymbolicLink()) {
    try {
      return realPathOfAbsolute(resolve(dir, readlinkSync(here)), depth + 1);
    } catch {
      /* gone meanwhile: the rest of the path is what a write would create */
    }
  }
  return here;
}

/** lstat of `p`, or undefined when nothing is there (or it cannot be looked at). */
function entryAt(p: string): Stats | undefined {
  try {
    return lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined; // ENOTDIR, EACCES: nothing to resolve there
  }
}

/**
 * The workspace of a run started in `dir`: the nearest directory at or above it that holds
 * `.git` (a repository's directory, or a worktree's or submodule's `.git` file), else `dir`
 * itself; a real path (symbolic links resolved). It is the first writable root in
 * `workspace-write`, and what other parts that act on "the project" (checkpoints) take as it.
 */
export function workspace(dir: string): string {
  const start = realPathOf(dir);
  for (let d = start; ; ) {
    try {
      lstatSync(childPath(d, '.git'));
      return d;
    } catch {
      /* not here */
    }
    const up = dirname(d);
    if (up === d) return start;
    d = up;
  }
}

function expand(p: string, home: string | undefined, base: string): string {
  if (home && (p === '~' || p.startsWith('~/'))) return join(home, p.slice(1));
  return isAbsolute(p) ? p : resolve(base, p);
}

function kindOf(p: string, fallback: 'dir' | 'file'): 'dir' | 'file' {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'file';
  } catch {
    return fallback;
  }
}

/** The clm directories of `env`: configuration, and state (sessions and caches). */
function clmDirs(env: NodeJS.ProcessEnv): { config?: string; state?: string } {
  const config = env.XDG_CONFIG_HOME ? childPath(env.XDG_CONFIG_HOME, 'clm') : env.HOME ? childPath(env.HOME, '.config/clm') : undefined;
  const state = env.XDG_STATE_HOME ? childPath(env.XDG_STATE_HOME, 'clm') : env.HOME ? childPath(env.HOME, '.local/state/clm') : undefined;
  return { config, state };
}

/** The policy of `mode` for this machine and run. */
export function resolvePolicy(mode: SandboxMode, s: SandboxSettings, ctx: PolicyContext): SandboxPolicy {
  const home = ctx.env.HOME || undefined;
  const cwd = realPathOf(ctx.cwd);
  const ws = workspace(cwd);
  const writable: string[] = [];
  if (mode === 'workspace-write') {
    for (const w of [ws, ...(s.writable ?? []).map((p) => realPathOf(expand(p, home, ws)))]) if (!writable.includes(w)) writable.push(w);
  }
  const named = (p: string, kind: 'dir' | 'file', what: string): NamedPath => ({ path: realPathOf(p), kind, what });
  const prot: NamedPath[] = [];
  for (const root of [...writable]) {
    const git = childPath(root, '.git');
    let gitIsFile = false;
    try {
      gitIsFile = lstatSync(git).isFile();
    } catch {
      /* no repository here: protect where one would be made */
    }
    // A worktree's `.git` file names the repository git uses: redirected, it brings its own hooks.
    // Its git directories are writable (a commit writes there), their hooks and config are not.
    if (gitIsFile) {
      prot.push(named(git, 'file', 'git link'));
      for (const d of worktreeGitDirs(git)) {
        if (!writable.some((w) => within(d, w))) writable.push(d);
        prot.push(named(childPath(d, 'hooks'), 'dir', 'git hooks'), named(childPath(d, 'config'), 'file', 'git config'));
      }
    } else prot.push(named(childPath(git, 'hooks'), 'dir', 'git hooks'), named(childPath(git, 'config'), 'file', 'git config'));
  }
  const dirs = clmDirs(ctx.env);
  if (dirs.config) prot.push(named(dirs.config, 'dir', "clm's configuration"));
  if (dirs.state) prot.push(named(dirs.state, 'dir', "clm's sessions and caches"));
  for (const d of ctx.pluginDirs ?? []) prot.push(named(d, 'dir', 'plugins'));

  const unreadable: NamedPath[] = [];
  if (dirs.config) unreadable.push(named(childPath(dirs.config, 'secrets.lua'), 'file', "clm's secrets"));
  if (home) for (const k of KEY_FILES) unreadable.push(named(childPath(home, k.rel), k.kind, 'key file'));
  for (const u of s.unreadable ?? []) {
    const p = expand(u, home, ws);
    unreadable.push(named(p, kindOf(p, u.endsWith('/') ? 'dir' : 'file'), 'sandbox_unreadable'));
  }
  return {
    mode,
    workspace: ws,
    cwd,
    writable,
    network: mode === 'full' || (mode === 'workspace-write' && s.network === true),
    protected: dedupe(prot),
    unreadable: dedupe(unreadable),
  };
}

/** A worktree's git directory (`gitdir:` of its .git file) and the repository's common one, as real paths. */
function worktreeGitDirs(gitFile: string): string[] {
  let text: string;
  try {
    text = readFileSync(gitFile, 'utf8');
  } catch {
    return [];
  }
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return [];
  const gitdir = realPathOf(resolve(dirname(gitFile), m[1]!));
  const out = [gitdir];
  try {
    const common = readFileSync(join(gitdir, 'commondir'), 'utf8').trim();
    if (common) out.push(realPathOf(resolve(gitdir, common)));
  } catch {
    /* a plain linked git directory */
  }
  return out;
}

function dedupe(list: NamedPath[]): NamedPath[] {
  const seen = new Set<string>();
  return list.filter((n) => !seen.has(n.path) && seen.add(n.path));
}
