// Processes in their own process group (setsid via `detached: true`), so that stopping one
// reaches everything it started — also jobs a shell backgrounded with "&", which would otherwise
// keep the output pipes open and the call hanging. Shell commands (shell_exec, bg_exec) and MCP
// stdio servers start here. Every live group is tracked so the program can stop them all when it
// exits, and registered with the group reaper, which kills them when clm dies without exiting
// (kill -9). A process that leaves its group (setsid, a daemon's double fork) is out of reach.
// A sandbox wraps the spawn here, once (src/sandbox): the gate then runs inside it, so the
// watchdog's guarantee holds for sandboxed processes alike.

import type { ChildProcess } from 'node:child_process';
import { lazyBuiltin } from '../host/lazy-builtin.js';
import { runnable } from '../host/on-path.js';
import type { Writable } from 'node:stream';
import type { SpawnRequest, WrappedSpawn } from '../sandbox/backend.js';
import { forgetGroup, reapWithUs, startReaper } from './group-reaper.js';

const childProcess = lazyBuiltin<typeof import('node:child_process')>('node:child_process');

export interface GroupExit {
  /** Exit code, or null when killed by a signal or not started. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the shell could not be started at all. */
  spawnError?: Error;
}

export type GroupKind = 'shell' | 'bg' | 'mcp';

export interface GroupChild {
  readonly pid: number | undefined;
  readonly kind: GroupKind;
  /** Resolves once the process exited and its output pipes are closed. */
  readonly exited: Promise<GroupExit>;
  /** Resolves when the shell is running, rejects if it could not be started. */
  readonly started: Promise<void>;
  /**
   * Whether the command itself began: true once the gate ran, false when the process ended
   * without it — then nothing of the command ran (a sandbox that could not be set up, a spawn error).
   */
  readonly began: Promise<boolean>;
  /** SIGTERM to the whole group, SIGKILL after graceMs. Idempotent. */
  stop(graceMs?: number): void;
}

/** A group whose leader's pipes the caller drives (an MCP server's stdin and stdout). */
export interface GroupProcess extends GroupChild {
  /** The leader, with stdout and stderr piped (stdin too when asked for). */
  readonly child: ChildProcess;
  /** SIGKILL to the whole group, synchronously (for the process's 'exit' event). */
  kill(): void;
}

export interface GroupSpawnOptions {
  kind: GroupKind;
  /** A pipe the caller writes and ends, or /dev/null. */
  stdin: 'pipe' | 'ignore';
  /** Default: clm's environment less its credentials (toolEnv). */
  env?: NodeJS.ProcessEnv;
  /** The sandbox's wrapping of the process (src/sandbox); absent ⇒ run as is. */
  confine?(req: SpawnRequest): WrappedSpawn;
  /**
   * The command's stderr into its stdout pipe, so the two keep the order they were written in
   * (two pipes are read in whatever order the event loop finds them). The leader's own stderr
   * (bwrap's, the gate's) stays on the stderr pipe.
   */
  mergeStderr?: boolean;
}

export interface SpawnOptions {
  kind: 'shell' | 'bg';
  /** Data for standard input; absent ⇒ /dev/null. */
  stdin?: string;
  /** stdout and stderr chunks, in the order they were written. */
  onOutput(chunk: Buffer): void;
  /** The sandbox's wrapping of the process (src/sandbox); absent ⇒ run as is. */
  confine?(req: SpawnRequest): WrappedSpawn;
}

export const DEFAULT_GRACE_MS = 2000;
/** After SIGKILL, how long to wait for the pipes before closing them ourselves (an escaped grandchild may hold them). */
const PIPE_DRAIN_MS = 500;
/**
 * After the shell itself exited, how long its output pipes may stay open: a job it backgrounded
 * (`server &`) holds them, and waiting for that job would stall the call until its timeout.
 */
const LEADER_EXIT_DRAIN_MS = 300;

const live = new Set<GroupProcess>();

/** Variables of clm's own that hold credentials: a command the model runs has no business with them. */
const PRIVATE_VARIABLES = ['CLM_API_KEY'];

/** clm's environment for a tool process, without its own credentials. */
export function toolEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const k of PRIVATE_VARIABLES) delete out[k];
  return out;
}

/**
 * The command starts only once its group is registered with the reaper: a /bin/sh gate waits
 * for one line on fd 3, then execs the command in place (same pid, same group, fd 3 closed).
 * Were clm killed between the spawn and the registration, the gate reads end-of-file and exits
 * without running anything, so no group can escape the reaper. Before the exec it answers on fd 3
 * (a socket pair): the command began — inside the sandbox, once that was set up.
 */
const GATE = 'IFS= read -r _ <&3 || exit 125; printf . >&3; exec 3<&-; exec "$@"';
const GATE_MERGED = `${GATE} 2>&1`;

/** `$SHELL -c command` (fallback /bin/sh), inheriting the environment (less clm's key) and working directory. */
export function spawnShellGroup(command: string, opts: SpawnOptions): GroupChild {
  const shell = process.env.SHELL || '/bin/sh';
  const group = spawnGroup([shell, '-c', command], {
    kind: opts.kind,
    stdin: opts.stdin === undefined ? 'ignore' : 'pipe',
    confine: opts.confine,
    mergeStderr: true,
  });
  const { child } = group;
  child.stdout!.on('data', (c: Buffer) => opts.onOutput(c));
  child.stderr!.on('data', (c: Buffer) => opts.onOutput(c));
  if (child.stdin) {
    child.stdin.on('error', () => {}); // EPIPE when the command does not read its input: not our failure
    child.stdin.end(opts.stdin ?? '');
  }
  return group;
}

/**
 * argv (no shell) in a new process group registered with the reaper, inheriting the working
 * directory. The caller attaches to the leader's pipes before its next await.
 */
export function spawnGroup(argv: readonly string[], opts: GroupSpawnOptions): GroupProcess {
  const [command, ...args] = argv as [string, ...string[]];
  const env = opts.env ?? toolEnv();
  startReaper();
  // A command that cannot run is spawned directly, so the failure is Node's spawn error (ENOENT,
  // EACCES), sandbox or not.
  const gated = runnable(command, env);
  const plain: SpawnRequest = {
    file: gated ? '/bin/sh' : command,
    args: gated ? ['-c', opts.mergeStderr ? GATE_MERGED : GATE, 'sh', ...argv] : args,
    env,
    cwd: process.cwd(),
  };
  const req = gated && opts.confine ? opts.confine(plain) : { ...plain, release() {} };
  const child = childProcess().spawn(req.file, req.args, {
    detached: true, // new session ⇒ own process group, and no controlling terminal to scribble on
    stdio: [opts.stdin, 'pipe', 'pipe', ...(gated ? ['pipe' as const] : [])],
    env: req.env,
    cwd: req.cwd,
  });
  let stopping = false;
  let closed = false;
  let killTimer: NodeJS.Timeout | undefined;

  const started = new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (e) => {
      if (child.pid === undefined) reject(e);
    });
  });
  started.catch(() => {}); // callers that only await `exited` must not see an unhandled rejection

  const exited = new Promise<GroupExit>((resolve) => {
    let spawnError: Error | undefined;
    child.once('error', (e) => {
      if (child.pid === undefined) spawnError = e;
    });
    child.once('close', (code, signal) => {
      closed = true;
      req.release();
      // A job the command backgrounded may live on in the group: keep tracking it, so stopping
      // every group at exit reaches it too.
      if (!groupAlive(child.pid)) {
        live.delete(group);
        if (child.pid !== undefined) forgetGroup(child.pid);
      }
      // Keep the SIGKILL pending while stragglers of a stopped group survive (they ignored SIGTERM).
      if (killTimer && !groupAlive(child.pid)) clearTimeout(killTimer);
      resolve(spawnError ? { code: null, signal: null, spawnError } : { code, signal });
    });
  });

  child.once('exit', () => {
    setTimeout(() => {
      if (!closed) {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }
    }, LEADER_EXIT_DRAIN_MS).unref();
  });

  // The gate's answer comes before its pipe closes, so before `exited`: the first to settle wins.
  const began = new Promise<boolean>((resolve) => {
    child.stdio[3]?.once('data', () => resolve(true));
    void exited.then(() => resolve(false));
  });

  const group: GroupProcess = {
    child,
    kind: opts.kind,
    began,
    get pid() {
      return child.pid;
    },
    exited,
    started,
    stop(graceMs = DEFAULT_GRACE_MS) {
      if (stopping || child.pid === undefined || (closed && !groupAlive(child.pid))) return;
      stopping = true;
      signalGroup(child, 'SIGTERM');
      killTimer = setTimeout(() => {
        signalGroup(child, 'SIGKILL');
        if (closed) return;
        // The leader is dead; if something outside the group still holds the pipes, stop waiting for it.
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
        }, PIPE_DRAIN_MS).unref();
      }, graceMs);
      killTimer.unref();
    },
    kill() {
      signalGroup(child, 'SIGKILL');
    },
  };
  if (child.pid !== undefined) {
    live.add(group);
    reapWithUs(child.pid);
  }
  const gate = child.stdio[3] as Writable | null | undefined;
  if (gate) {
    gate.on('error', () => {}); // the child died before reading it: its exit is reported as usual
    gate.end('\n');
  }
  return group;
}

function signalGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, sig);
  } catch {
    try {
      child.kill(sig);
    } catch {
      /* already gone */
    }
  }
}

function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILL every tracked group at once, synchronously: for the process's 'exit' event (a signal,
 * a second Ctrl-C), when there is no time for the graceful stop.
 */
export function killAllGroupsNow(): void {
  for (const g of live) signalGroup(g.child, 'SIGKILL');
  live.clear();
}

/** Stop every live group of the given kinds; resolves when all have exited. */
export function stopGroups(
  kinds: ReadonlyArray<GroupKind>,
  graceMs = DEFAULT_GRACE_MS,
  beforeStop?: (g: GroupChild) => void,
): Promise<void> {
  const chosen = [...live].filter((g) => kinds.includes(g.kind));
  for (const g of chosen) {
    beforeStop?.(g);
    g.stop(graceMs);
  }
  return Promise.all(chosen.map((g) => g.exited)).then(() => undefined);
}
