// One shell command through the sandbox: run confined; when it fails because of the policy,
// say so (`[sandbox: …]` lines for the person and the model) and, where a person is there to
// answer, ask whether this one call may run outside the sandbox — a question of its own, never
// answered by an earlier "always". Reports how the call ran.

import type { ToolInvocation } from '../core/types.js';
import { SANDBOX_SETUP_TRIES, type SpawnRequest, type WrappedSpawn } from '../sandbox/backend.js';
import { NOT_SET_UP, RefusalScanner } from '../sandbox/refusal.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { CappedOutput } from './output-cap.js';
import type { GroupChild, GroupExit } from './process-group.js';

export type Confine = (req: SpawnRequest) => WrappedSpawn;
/** Starts the process with the confinement given, its output going to `onOutput`. */
export type Start = (confine: Confine | undefined, onOutput: (c: Buffer) => void) => GroupChild;

export interface SandboxedRun {
  res: GroupExit;
  out: CappedOutput;
  /** Lines to add after the exit status: the refusals, or that the call ran outside by leave ('' when neither). */
  note: string;
}

/** Start the process (with the confinement given) and wait for it, stopping it when the call is aborted. */
async function attempt(
  inv: ToolInvocation,
  cap: number,
  start: Start,
  confine: Confine | undefined,
  onAbort: ((out: CappedOutput) => void) | undefined,
) {
  const out = new CappedOutput(cap);
  const scan = new RefusalScanner();
  const proc = start(confine, (c) => {
    out.push(c);
    scan.push(c);
  });
  // Cancel and timeout both arrive as an abort: stop the whole group (SIGTERM, later SIGKILL).
  const stop = () => {
    proc.stop();
    onAbort?.(out);
  };
  inv.signal.addEventListener('abort', stop, { once: true });
  const res = await proc.exited;
  inv.signal.removeEventListener('abort', stop);
  return { res, out, scan, began: await proc.began };
}

/** The first attempt in the sandbox whose setup worked, or the last that did not (its output is the sandbox's complaint). */
async function confined(inv: ToolInvocation, cap: number, start: Start, sandbox: Sandbox, onAbort: Parameters<typeof attempt>[4]) {
  for (let n = 1; ; n++) {
    const r = await attempt(inv, cap, start, (req) => sandbox.confine(req), onAbort);
    if (r.began || r.res.spawnError || inv.signal.aborted || n === SANDBOX_SETUP_TRIES) return r;
  }
}

export async function runSandboxed(
  inv: ToolInvocation,
  sandbox: Sandbox | null,
  cap: number,
  start: Start,
  /** Called when the call is aborted, after the stop, with the output so far. */
  onAbort?: (out: CappedOutput) => void,
): Promise<SandboxedRun> {
  if (!sandbox) {
    const r = await attempt(inv, cap, start, undefined, onAbort);
    return { res: r.res, out: r.out, note: '' };
  }
  const first = await confined(inv, cap, start, sandbox, onAbort);
  if (!first.began && !first.res.spawnError && !inv.signal.aborted) {
    sandbox.backend?.setupFailed?.();
    sandbox.onRun?.(inv.id, inv.name, sandbox.inForce);
    return { res: first.res, out: first.out, note: `\n${NOT_SET_UP}` };
  }
  const failed = !first.res.spawnError && (first.res.code !== 0 || first.res.signal !== null) && !inv.signal.aborted;
  const refusals = failed ? sandbox.refusals(first.scan.end()) : [];
  if (!refusals.length) {
    sandbox.onRun?.(inv.id, inv.name, sandbox.inForce);
    return { res: first.res, out: first.out, note: '' };
  }
  const ask = sandbox.askOutside;
  const allowed = ask ? await ask({ id: inv.id, name: inv.name, args: inv.args, refusals }, inv.signal).catch(() => false) : false;
  if (!allowed || inv.signal.aborted) {
    sandbox.onRun?.(inv.id, inv.name, sandbox.inForce);
    return { res: first.res, out: first.out, note: `\n${refusals.join('\n')}` };
  }
  const second = await attempt(inv, cap, start, (r) => sandbox.unconfined(r), onAbort);
  sandbox.onRun?.(inv.id, inv.name, 'outside-once');
  return { res: second.res, out: second.out, note: '\n[sandbox: this call ran outside the sandbox, allowed once]' };
}
