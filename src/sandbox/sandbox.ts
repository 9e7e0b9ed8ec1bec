// The sandbox of one run (one profile): the configured mode, its policy, the backend that
// enforces it for processes, and the mode actually in force. A confining mode the machine
// cannot provide is `unavailable`: commands then run unconfined only when nobody chose the mode
// (the default), and the start-up notice, the status bar and every permission question say so;
// a mode chosen in config.lua or with --sandbox is never quietly weakened — commands refuse to
// run until the machine provides it or the person chooses `full`.

import type { Availability, SandboxBackend, SpawnRequest, WrappedSpawn } from './backend.js';
import { bwrapBackend } from './bwrap.js';
import { FileGuard } from './file-guard.js';
import { type ModeInForce, runsText, type SandboxMode, type SandboxPolicy } from './policy.js';
import { refusalsIn } from './refusal.js';
import { resolvePolicy, type SandboxSettings } from './workspace.js';
import { Secrets } from '../host/redact.js';

export const DEFAULT_MODE: SandboxMode = 'workspace-write';

/** Variables of clm's own that hold credentials. */
const PRIVATE_VARIABLES = ['CLM_API_KEY'];

/** A call the sandbox refused, for the question whether it may run outside once. */
export interface OutsideQuestion {
  /** The tool call's id, when the agent gave one. */
  id?: string;
  name: string;
  args: string;
  /** The `[sandbox: …]` lines of the refusal. */
  refusals: string[];
}

/**
 * How one tool call ran: a mode; outside the sandbox by the person's leave for that call; or
 * `unconfined` for a tool the sandbox does not reach (an MCP server not opted in).
 */
export type RunMode = ModeInForce | 'outside-once' | 'unconfined';

export interface SandboxOptions {
  settings?: SandboxSettings;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Plugin directories in use (protected). */
  pluginDirs?: readonly string[];
  /** The process backend; default bubblewrap on Linux, none elsewhere. */
  backend?: SandboxBackend | null;
  /** The run's secrets (API keys, secrets.lua values): no tool process finds them in its environment; read at each spawn. */
  secrets?: Secrets;
}

const noBackend: Availability = {
  ok: false,
  reason: `no sandbox backend for ${process.platform}`,
  fix: 'choose --sandbox full (the sandbox needs Linux with bubblewrap for now)',
};

/** clm's environment for a tool process: without clm's own credentials, nor any variable holding a secret. */
export function scrubbedEnv(env: NodeJS.ProcessEnv, secrets: Secrets): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || PRIVATE_VARIABLES.includes(k)) continue;
    if (secrets.values.some((s) => v.includes(s))) continue;
    out[k] = v;
  }
  return out;
}

export class Sandbox {
  readonly configured: SandboxMode;
  /** The mode was chosen (config.lua or --sandbox), not the default. */
  readonly explicit: boolean;
  readonly policy: SandboxPolicy;
  readonly backend: SandboxBackend | null;
  /** Asks the person whether one refused call may run outside the sandbox; null: nobody to ask (it may not). */
  askOutside: ((q: OutsideQuestion, signal: AbortSignal) => Promise<boolean>) | null = null;
  /** Told how each tool call ran (json results, the session file). */
  onRun: ((callId: string | undefined, tool: string, mode: RunMode) => void) | null = null;
  private readonly secrets: Secrets;
  /**
   * The check of file accesses clm makes for a tool (plugins' file API, builtin file tools): in
   * process, so it holds the configured mode whether or not a process backend works; null in full.
   */
  readonly files: FileGuard | null;

  constructor(o: SandboxOptions = {}) {
    const s = o.settings ?? {};
    this.configured = s.mode ?? DEFAULT_MODE;
    this.explicit = s.mode !== undefined;
    this.policy = resolvePolicy(this.configured, s, { cwd: o.cwd ?? process.cwd(), env: o.env ?? process.env, pluginDirs: o.pluginDirs });
    this.backend = o.backend !== undefined ? o.backend : process.platform === 'linux' ? bwrapBackend(o.env ?? process.env) : null;
    this.secrets = o.secrets ?? new Secrets();
    this.files = this.configured === 'full' ? null : new FileGuard(this.policy);
  }

  /** Whether the backend works here (a `full` policy needs none). */
  availability(): Availability {
    if (this.configured === 'full') return { ok: true, detail: 'full: no confinement' };
    return this.backend ? this.backend.available() : noBackend;
  }

  /** availability() without blocking (start-up). */
  async check(): Promise<Availability> {
    if (this.configured === 'full') return this.availability();
    return this.backend ? this.backend.availableAsync() : noBackend;
  }

  /** The mode tool processes run in. */
  get inForce(): ModeInForce {
    if (this.configured === 'full') return 'full';
    return this.availability().ok ? this.configured : 'unavailable';
  }

  /** How a process call runs, for the permission question: `sandbox: workspace-write, no network` or `NOT sandboxed`. */
  runs(): string {
    return runsText(this.inForce, this.policy.network);
  }

  /** The start-up notice when the configured mode cannot be had, else null. */
  notice(): string | null {
    const a = this.availability();
    if (a.ok || this.configured === 'full') return null;
    const then = this.explicit
      ? `shell commands will not run until it is (or choose --sandbox full)`
      : 'shell commands run NOT sandboxed (mode: unavailable)';
    return `sandbox: ${this.configured} is not available: ${a.reason}; ${then}. Fix: ${a.fix}. Diagnose with: clm sandbox check`;
  }

  /** Why process tools may not run now (a chosen mode the machine cannot provide), or null. */
  blocked(): string | null {
    if (!this.explicit || this.inForce !== 'unavailable') return null;
    const a = this.availability();
    return `sandbox: ${this.configured} is not available (${a.ok ? '' : a.reason}); nothing was run. Fix: ${a.ok ? '' : a.fix}`;
  }

  /** `req` as the mode in force runs it, with the environment scrubbed. */
  confine(req: SpawnRequest): WrappedSpawn {
    const clean = { ...req, env: scrubbedEnv(req.env, this.secrets) };
    const mode = this.inForce;
    if (mode === 'full' || mode === 'unavailable' || !this.backend) return { ...clean, release() {} };
    return this.backend.wrap(clean, this.policy);
  }

  /**
   * An MCP server that opted in: confined like a command, but with its environment as given (a
   * server is configured by the person, and often needs its own credentials). Throws when the
   * mode was chosen and cannot be had.
   */
  confineServer(req: SpawnRequest): WrappedSpawn {
    const blocked = this.blocked();
    if (blocked) throw new Error(blocked);
    const mode = this.inForce;
    if (mode === 'full' || mode === 'unavailable' || !this.backend) return { ...req, release() {} };
    return this.backend.wrap(req, this.policy);
  }

  /** `req` outside the sandbox (the one call the person allowed), with the environment scrubbed all the same. */
  unconfined(req: SpawnRequest): WrappedSpawn {
    return { ...req, env: scrubbedEnv(req.env, this.secrets), release() {} };
  }

  /** The `[sandbox: …]` lines for a failed command's error lines; empty when the sandbox had no part in it. */
  refusals(lines: readonly string[]): string[] {
    const mode = this.inForce;
    if (mode === 'full' || mode === 'unavailable') return [];
    return refusalsIn(lines, this.policy);
  }
}
