// The sandbox policy and its path rules: what a tool process (shell_exec, bg_exec, an opted-in
// MCP server) and a plugin's file API may write and read. Plain data and pure functions over
// real (symlink-free, absolute) paths; resolving the paths of a machine is workspace.ts's job,
// enforcing them the backends' (bwrap.ts) and the plugins' file guard's (file-guard.ts).

export type SandboxMode = 'read-only' | 'workspace-write' | 'full';

export const SANDBOX_MODES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'full'];

export function isSandboxMode(v: unknown): v is SandboxMode {
  return typeof v === 'string' && (SANDBOX_MODES as readonly string[]).includes(v);
}

/** A path the policy names, with what it is when it does not exist yet (a mount point must be made of that kind). */
export interface NamedPath {
  /** Real absolute path (where it does not exist: the real path of its nearest existing ancestor, then the rest). */
  path: string;
  kind: 'dir' | 'file';
  /** What it is, for messages: "git hooks", "clm's configuration", "key file". */
  what: string;
}

export interface SandboxPolicy {
  mode: SandboxMode;
  /** The workspace: the git root above the directory clm was started in, else that directory. */
  workspace: string;
  /** The directory commands start in. */
  cwd: string;
  /** Writable roots (workspace-write only; empty otherwise): the workspace first, then `sandbox_writable`. */
  writable: string[];
  /** Network access (never in read-only; `sandbox_network` in workspace-write; always in full). */
  network: boolean;
  /** Never writable by a tool, even inside a writable root. */
  protected: NamedPath[];
  /** Neither readable nor writable by a tool. */
  unreadable: NamedPath[];
}

/** Key files under the home directory that no tool may read: the documented default list (`sandbox_unreadable` adds to it). */
export const KEY_FILES: readonly { rel: string; kind: 'dir' | 'file' }[] = [
  { rel: '.ssh', kind: 'dir' },
  { rel: '.gnupg', kind: 'dir' },
  { rel: '.aws', kind: 'dir' },
  { rel: '.azure', kind: 'dir' },
  { rel: '.config/gcloud', kind: 'dir' },
  { rel: '.kube', kind: 'dir' },
  { rel: '.docker/config.json', kind: 'file' },
  { rel: '.netrc', kind: 'file' },
  { rel: '.git-credentials', kind: 'file' },
  { rel: '.config/gh/hosts.yml', kind: 'file' },
  { rel: '.npmrc', kind: 'file' },
  { rel: '.pypirc', kind: 'file' },
  { rel: '.cargo/credentials.toml', kind: 'file' },
  { rel: '.password-store', kind: 'dir' },
];

/** `path` is `root` or below it. */
export function within(path: string, root: string): boolean {
  if (root === '/') return path.startsWith('/');
  return path === root || path.startsWith(`${root}/`);
}

export type WriteRefusal =
  | { why: 'read-only' }
  | { why: 'outside' }
  | { why: 'protected'; rule: NamedPath }
  | { why: 'unreadable'; rule: NamedPath };

/** Why a tool may not write the real path `p`, or null when it may. */
export function writeRefusal(policy: SandboxPolicy, p: string): WriteRefusal | null {
  if (policy.mode === 'full') return null;
  const hidden = policy.unreadable.find((u) => within(p, u.path));
  if (hidden) return { why: 'unreadable', rule: hidden };
  if (policy.mode === 'read-only') return { why: 'read-only' };
  const prot = policy.protected.find((u) => within(p, u.path));
  if (prot) return { why: 'protected', rule: prot };
  return policy.writable.some((r) => within(p, r)) ? null : { why: 'outside' };
}

/** The rule that keeps a tool from reading the real path `p`, or null when it may. */
export function readRefusal(policy: SandboxPolicy, p: string): NamedPath | null {
  if (policy.mode === 'full') return null;
  return policy.unreadable.find((u) => within(p, u.path)) ?? null;
}

/** "write to /etc/hosts refused (read-only)", the text of a refused write. */
export function writeRefusalText(policy: SandboxPolicy, p: string, r: WriteRefusal): string {
  return `write to ${p} refused (${refusalReason(policy, r)})`;
}

function refusalReason(policy: SandboxPolicy, r: WriteRefusal): string {
  switch (r.why) {
    case 'read-only':
      return 'read-only';
    case 'outside':
      return `${policy.mode}: outside the writable roots`;
    case 'protected':
      return `protected: ${r.rule.what}`;
    case 'unreadable':
      return `protected: ${r.rule.what}`;
  }
}

/** "read of /home/u/.ssh/id_ed25519 refused (protected: key file)". */
export function readRefusalText(p: string, rule: NamedPath): string {
  return `read of ${p} refused (protected: ${rule.what})`;
}

/** The mode actually in force: a confining mode the machine cannot provide is `unavailable`, never a silent `full`. */
export type ModeInForce = SandboxMode | 'unavailable';

/**
 * How a call runs, as the permission question and the status bar say it:
 * `sandbox: workspace-write, no network`, `sandbox: read-only`, or `NOT sandboxed`.
 */
export function runsText(mode: ModeInForce, network: boolean): string {
  if (mode === 'full' || mode === 'unavailable') return 'NOT sandboxed';
  if (mode === 'read-only') return 'sandbox: read-only, no network';
  return `sandbox: workspace-write, ${network ? 'network on' : 'no network'}`;
}

/** `/home/u/.ssh/ (key file)`: one entry of a listing. */
export function ruleName(rule: NamedPath): string {
  return `${rule.path}${rule.kind === 'dir' ? '/' : ''} (${rule.what})`;
}
