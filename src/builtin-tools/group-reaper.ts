// Tool process groups die with clm even when clm cannot run its exit hooks (kill -9, an OOM
// kill, a crash of the runtime). Linux's PR_SET_PDEATHSIG is out of reach from Node, and a
// wrapper per command would cost a process per call, so one small watchdog runs per clm
// process, started with the first tool process: a /bin/sh loop reading clm's notes on a pipe
// ("+PGID" when a group starts, "-PGID" when it is gone). The pipe's write end lives only in
// clm, so when clm dies — however it dies — the watchdog reads end-of-file and sends SIGKILL
// to every group still on its list, then exits. It has its own session (no terminal signals)
// and ignores HUP, INT, TERM and QUIT, so what ends clm does not end it first. It needs nothing
// of clm's environment (its commands are shell builtins), so it gets none: a tool that walks
// /proc/*/environ finds no credential in it.

import type { ChildProcess } from 'node:child_process';
import { lazyBuiltin } from '../host/lazy-builtin.js';

const childProcess = lazyBuiltin<typeof import('node:child_process')>('node:child_process');

// dash, bash and busybox alike; builtins only (no process per note). The list is kept as
// " a b c " so one group can be cut out with two parameter expansions.
const SCRIPT = `trap '' HUP INT TERM QUIT PIPE
g=' '
while IFS= read -r l; do
  case $l in
    +*) g="$g\${l#+} " ;;
    -*) x=\${l#-}; case $g in *" $x "*) g="\${g%% $x *} \${g#* $x }" ;; esac ;;
  esac
done
for p in $g; do kill -KILL -$p 2>/dev/null; done
`;

/** The watchdog's whole environment: a PATH for a shell whose `kill` is not a builtin. */
const HELPER_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

let reaper: ChildProcess | null = null;
let broken = false;

/**
 * Start the watchdog (once). Called before the first tool process is spawned, so registering
 * a group right after its spawn is one pipe write: no window where clm could die with the
 * group started and the watchdog not told.
 */
export function startReaper(): void {
  if (reaper || broken) return;
  try {
    reaper = childProcess().spawn('/bin/sh', ['-c', SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: HELPER_ENV });
  } catch {
    broken = true; // no watchdog: the exit hooks still stop the groups on any ordinary exit
    return;
  }
  reaper.on('error', () => {
    broken = true;
  });
  reaper.on('exit', () => {
    broken = true;
  });
  reaper.stdin!.on('error', () => {
    broken = true;
  });
  // Neither the watchdog nor its pipe keeps clm running.
  reaper.unref();
  (reaper.stdin as unknown as { unref?(): void }).unref?.();
}

function note(line: string): void {
  if (broken || !reaper) return;
  reaper.stdin!.write(`${line}\n`);
}

/** A process group started: kill it if clm dies. */
export function reapWithUs(pgid: number): void {
  startReaper();
  note(`+${pgid}`);
}

/** The group is gone (its id may be reused by someone else's group now). */
export function forgetGroup(pgid: number): void {
  note(`-${pgid}`);
}

/** The watchdog's pid (tests), or null when none was started. */
export function reaperPid(): number | null {
  return reaper?.pid ?? null;
}
