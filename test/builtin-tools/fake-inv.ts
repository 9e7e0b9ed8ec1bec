// A minimal ToolInvocation for calling builtin ToolDefs directly, without an agent.

import { readFileSync } from 'node:fs';
import type { ToolDef, ToolInvocation } from '../../src/core/types.js';

export interface InvResult {
  ok: boolean;
  /** Output (complete) or message (fail) as text. */
  text: string;
  /** Bytes when the tool completed with a Uint8Array. */
  bytes?: Uint8Array;
}

export interface FakeCall {
  inv: ToolInvocation;
  /** Settles at the first complete/fail. */
  result: Promise<InvResult>;
  /** Texts passed to notify, in order. */
  notes: string[];
  /** Texts passed to progress, in order. */
  progress: string[];
  /** The next note not yet taken: one already sent, or the next to come. */
  nextNote(): Promise<string>;
  abort(): void;
  /** Abort with this reason (a CallAborted, as the engine does). */
  abortWith(reason: unknown): void;
  /** How many times complete/fail were called (exactly-once checks). */
  readonly calls: number;
}

export function call(
  tool: ToolDef,
  args: object | string,
  opts: { outputCap?: number; timeoutMs?: number; aborted?: boolean } = {},
): FakeCall {
  const ac = new AbortController();
  if (opts.aborted) ac.abort(new Error('cancelled'));
  const notes: string[] = [];
  const progress: string[] = [];
  const waiters: ((s: string) => void)[] = [];
  let taken = 0;
  let done = false;
  let calls = 0;
  let settle!: (r: InvResult) => void;
  const result = new Promise<InvResult>((r) => {
    settle = r;
  });
  const timeoutMs = opts.timeoutMs ?? tool.timeoutMs ?? 0;
  const timer = timeoutMs > 0 ? setTimeout(() => ac.abort(new Error('timed out')), timeoutMs) : undefined;
  const finish = (r: InvResult) => {
    calls++;
    if (done) return;
    done = true;
    if (timer) clearTimeout(timer);
    settle(r);
  };
  const inv: ToolInvocation = {
    name: tool.name,
    args: typeof args === 'string' ? args : JSON.stringify(args),
    outputCap: opts.outputCap ?? tool.outputCap ?? 65536,
    timeoutMs,
    signal: ac.signal,
    complete(output) {
      if (typeof output === 'string') finish({ ok: true, text: output });
      else finish({ ok: true, text: Buffer.from(output).toString('utf8'), bytes: output });
    },
    fail(message) {
      finish({ ok: false, text: message });
    },
    get done() {
      return done;
    },
    progress(text) {
      progress.push(text);
    },
    notify(text) {
      notes.push(text);
      const w = waiters.shift();
      if (w) {
        taken++;
        w(text);
      }
    },
  };
  const ret = tool.invoke(inv);
  if (ret instanceof Promise) ret.catch((e) => finish({ ok: false, text: `threw: ${e}` }));
  return {
    inv,
    result,
    notes,
    progress,
    nextNote: () => (taken < notes.length ? Promise.resolve(notes[taken++]!) : new Promise<string>((r) => waiters.push(r))),
    abort: () => ac.abort(new Error('cancelled')),
    abortWith: (reason) => ac.abort(reason),
    get calls() {
      return calls;
    },
  };
}

/** Is a process gone (no such pid, or a zombie nobody reaped)? */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
