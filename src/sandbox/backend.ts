// What every sandbox backend offers: whether it works on this machine (and if not, why and what
// to change), and the wrapping of one spawn request so the process runs under a policy. The
// bubblewrap backend (bwrap.ts) is the one for Linux; another platform adds its own file here.

import type { SandboxPolicy } from './policy.js';

/**
 * How many times a confined process is started while its sandbox cannot be set up (the command
 * never began): what the sandbox is built from — a listening socket to mask, a mount point — may
 * vanish between the building and the mounting (its owner removed it), and the next build sees
 * the file system as it is then.
 */
export const SANDBOX_SETUP_TRIES = 3;

export type Availability = { ok: true; detail: string } | { ok: false; reason: string; fix: string };

/** A process to start: executable, arguments, environment, working directory. */
export interface SpawnRequest {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** The same request, wrapped; `release()` once the process is gone undoes what preparing it made. */
export interface WrappedSpawn extends SpawnRequest {
  release(): void;
}

export interface SandboxBackend {
  readonly name: string;
  /** Whether it works here (checked once, then remembered). */
  available(): Availability;
  /** available(), without blocking the caller (start-up); may answer from what an earlier start learned. */
  availableAsync(): Promise<Availability>;
  /** The sandbox could not be set up for a command although it was available: what was learned is stale. */
  setupFailed?(): void;
  /** `req` confined by `policy` (a `full` policy is never wrapped). */
  wrap(req: SpawnRequest, policy: SandboxPolicy): WrappedSpawn;
}
