// One batch of tool calls from one model reply: permission gate, optional dispatch limiter,
// a cap on calls running at once (the rest queue, so a reply with 1,000 shell_exec calls does
// not start 1,000 processes together), per-call timeout, exactly-once completion (late
// completions are dropped), results reported in completion order, progress of running calls.

import { clip, MAX_NAME } from './clip.js';
import { messageOf } from './errors.js';
import type { Cancelable, Host } from './host.js';
import type { TokenBucket } from './ratelimit.js';
import { callLimits, type ToolRegistry } from './tool-registry.js';
import { clampOutput, outputText } from './tool-output.js';
import { checkFailed, type Gate } from './permission-gate.js';
import type { NotRun, PermissionAnswer, ToolCall, ToolInvocation, ToolOutcome } from './types.js';

export interface BatchContext {
  registry: ToolRegistry;
  host: Host;
  toolLimiter: TokenBucket | null;
  /** Calls running at once (default DEFAULT_MAX_PARALLEL_TOOLS; 0 = no limit). */
  maxParallel?: number;
  /** A call is dispatched (before the permission gate); `args` is "{}" when the model sent none. */
  onBegin(id: string, name: string, args: string): void;
  /** Why a call's arguments do not fit its tool's parameters (AgentConfig.repairToolCalls): it fails with that, before the gate. */
  check?(args: string, parameters: Record<string, unknown>): string | null;
  /** What decides each call (read at each call). */
  permission(): Gate;
  /** A finished call: the agent records it (history, callbacks). `notRun`: it never ran. */
  onResult(call: ToolCall, content: string, outcome: ToolOutcome, notRun?: NotRun): void;
  /** A running call's progress report (already clamped to PROGRESS_MAX_CHARS). */
  onProgress(call: ToolCall, text: string): void;
  /** Every call finished. */
  onDone(): void;
  notify(text: string): void;
  log(line: string): void;
}

/** After a timeout aborts a call, how long the tool may take to report what it has (partial output). */
export const TIMEOUT_GRACE_MS = 500;
export const DEFAULT_MAX_PARALLEL_TOOLS = 16;
/** A progress report longer than this is cut to its end (from a line start when there is one). */
export const PROGRESS_MAX_CHARS = 8192;

/**
 * The reason a call's signal aborts: the turn was cancelled (`cancel`), its deadline passed
 * (`timeout`) or the agent closed (`close`). On a cancel the turn ends at once, so a tool with
 * partial output reports it from its abort listener, synchronously; after a timeout it has
 * TIMEOUT_GRACE_MS to report.
 */
export class CallAborted extends Error {
  constructor(
    readonly why: 'cancel' | 'timeout' | 'close',
    message: string,
  ) {
    super(message);
    this.name = 'CallAborted';
  }
}

const DENIED = 'denied by user';

/**
 * Why a recorded result's call never ran, recognised by the text the batch gave it (a saved
 * session keeps only the text). A running call cancelled without a report of its own reads the
 * same as one cancelled before it ran, and counts as the latter.
 */
export function notRunOf(content: string): NotRun | undefined {
  const m = /^\[tool failed: (.*)\]$/s.exec(content)?.[1];
  if (m === undefined) return undefined;
  // Every refusal of the permission gate says 'denied' first (by the person, a rule, no policy).
  if (/^denied\b/.test(m)) return 'denied';
  if (m === 'cancelled by user') return 'cancelled';
  return /^unknown tool '.*'$/s.test(m) ? 'unknown_tool' : undefined;
}

/** The end of a long progress report, from a line start when one is near. */
function clampProgress(text: string): string {
  if (text.length <= PROGRESS_MAX_CHARS) return text;
  const tail = text.slice(text.length - PROGRESS_MAX_CHARS);
  const nl = tail.indexOf('\n');
  return nl >= 0 && nl < tail.length - 1 ? tail.slice(nl + 1) : tail;
}

class Slot implements ToolInvocation {
  done = false;
  /** The deadline passed: whatever the tool reports now is recorded as a timeout. */
  timedOut = false;
  readonly controller = new AbortController();
  outputCap = 65536;
  timeoutMs = 0;
  timer: Cancelable | null = null;
  /** Invoked and not finished yet: holds one of the batch's running places. */
  running = false;
  /** Set while a permission request waits for its answer; aborted when the answer is no longer needed. */
  asking: AbortController | null = null;

  readonly #batch: ToolBatch;

  constructor(
    batch: ToolBatch,
    readonly call: ToolCall,
  ) {
    this.#batch = batch;
  }

  get id() {
    return this.call.id;
  }
  get name() {
    return this.call.name;
  }
  get args() {
    return this.call.args || '{}';
  }
  get signal() {
    return this.controller.signal;
  }

  complete(output: string | Uint8Array): void {
    if (this.done) return;
    let text: string;
    try {
      text = outputText(output);
    } catch (e) {
      text = `[tool output could not be decoded: ${String(e)}]`;
    }
    this.#batch.finish(this, clampOutput(text, this.outputCap), this.timedOut ? 'timedout' : 'ok');
  }
  fail(message: string): void {
    if (this.done) return;
    this.#batch.finish(this, clampOutput(`[tool failed: ${message}]`, this.outputCap), this.timedOut ? 'timedout' : 'failed');
  }
  /** A result without running the tool (denied, unknown, cancelled while waiting). */
  refuse(message: string, why: NotRun): void {
    if (this.done) return;
    this.#batch.finish(this, clampOutput(`[tool failed: ${message}]`, this.outputCap), 'failed', why);
  }
  notify(text: string): void {
    this.#batch.ctx.notify(text);
  }
  progress(text: string): void {
    if (this.done || !this.running || typeof text !== 'string') return;
    this.#batch.ctx.onProgress(this.call, clampProgress(text));
  }

  /** The call ended without an answer to its permission request: tell the asker. */
  stopAsking(reason: string): void {
    const a = this.asking;
    this.asking = null;
    a?.abort(new Error(reason));
  }
}

export class ToolBatch {
  readonly #slots: Slot[];
  #remaining: number;
  #started = false;
  #detached = false;
  readonly #timers = new Set<Cancelable>();
  /** Allowed to run (permission granted) but waiting for a running place. */
  readonly #waiting: Slot[] = [];
  #running = 0;
  #draining = false;
  readonly #maxParallel: number;

  constructor(
    calls: ToolCall[],
    readonly ctx: BatchContext,
  ) {
    this.#slots = calls.map((c) => new Slot(this, c));
    // Hold one extra so completions during dispatch cannot end the batch early.
    this.#remaining = calls.length + 1;
    const m = ctx.maxParallel ?? DEFAULT_MAX_PARALLEL_TOOLS;
    this.#maxParallel = m > 0 ? Math.floor(m) || 1 : Infinity;
  }

  get total(): number {
    return this.#slots.length;
  }
  get completed(): number {
    return this.#slots.filter((s) => s.done).length;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    for (const s of this.#slots) {
      if (this.#detached) return;
      if (s.done) continue;
      // Each call reserves its own token, so waiting calls are spaced at the configured rate.
      const wait = this.ctx.toolLimiter ? this.ctx.toolLimiter.reserve(1) : 0;
      if (wait > 0 && this.ctx.host.setTimer) {
        const t = this.ctx.host.setTimer(wait, () => {
          this.#timers.delete(t);
          if (this.#detached || s.done) return;
          this.#dispatch(s);
        });
        this.#timers.add(t);
      } else {
        this.#dispatch(s);
      }
    }
    this.#release();
  }

  #dispatch(s: Slot): void {
    const { name, args } = s;
    this.ctx.log(`[tool] ${name}(${args})`);
    this.ctx.onBegin(s.call.id, name, args);
    if (s.done || this.#detached) return;
    const t = this.ctx.registry.get(name);
    if (!t) {
      s.refuse(`unknown tool '${clip(name, MAX_NAME)}'`, 'unknown_tool');
      return;
    }
    const unfit = t.schema && this.ctx.check?.(args, t.schema.parameters);
    if (unfit) {
      s.fail(unfit);
      return;
    }
    const asking = new AbortController();
    s.asking = asking;
    const decided = (a: PermissionAnswer) => {
      if (s.asking !== asking || s.done || this.#detached) return;
      s.asking = null;
      if (a.allow) this.#run(s);
      else s.refuse(a.reason || DENIED, 'denied');
    };
    try {
      this.ctx.permission()({ id: s.call.id, name, args, gated: !t.def.noPrompt }, asking.signal, decided);
    } catch (e) {
      decided(checkFailed(e));
    }
  }

  #run(s: Slot): void {
    if (this.#running >= this.#maxParallel) {
      this.#waiting.push(s);
      return;
    }
    this.#invoke(s);
  }

  #invoke(s: Slot): void {
    const t = this.ctx.registry.get(s.name);
    if (!t) {
      s.refuse(`unknown tool '${clip(s.name, MAX_NAME)}'`, 'unknown_tool');
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(s.args);
    } catch {
      parsed = undefined;
    }
    const lim = callLimits(t.def, parsed);
    s.outputCap = lim.outputCap;
    s.timeoutMs = lim.timeoutMs;
    s.running = true;
    this.#running++;
    // The deadline starts once the call runs (permission granted, a running place free).
    if (s.timeoutMs > 0 && this.ctx.host.setTimer) {
      const setTimer = this.ctx.host.setTimer;
      s.timer = setTimer(s.timeoutMs, () => {
        s.timer = null;
        if (s.done) return;
        // Abort, then let the tool report what it has (a command's output so far) for a moment;
        // whatever it reports counts as a timeout. A tool that ignores the abort gets the plain text.
        s.timedOut = true;
        const text = `[tool failed: timed out after ${s.timeoutMs} ms]`;
        s.controller.abort(new CallAborted('timeout', `timed out after ${s.timeoutMs} ms`));
        if (s.done) return;
        s.timer = setTimer(TIMEOUT_GRACE_MS, () => {
          s.timer = null;
          this.finish(s, text, 'timedout');
        });
      });
    }
    try {
      const r = t.def.invoke(s);
      if (r && typeof (r as Promise<void>).then === 'function') {
        (r as Promise<void>).then(undefined, (e: unknown) => s.fail(messageOf(e)));
      }
    } catch (e) {
      s.fail(messageOf(e));
    }
  }

  /** Record one result, exactly once. */
  finish(s: Slot, content: string, outcome: ToolOutcome, notRun?: NotRun): void {
    if (s.done) return;
    s.done = true;
    s.timer?.cancel();
    s.timer = null;
    s.stopAsking('the call ended');
    if (this.#detached) return;
    if (s.running) {
      s.running = false;
      this.#running--;
    }
    this.ctx.onResult(s.call, content, outcome, notRun);
    this.#startWaiting();
    this.#release();
  }

  /** Fill the running places a finished call freed. */
  #startWaiting(): void {
    // A call that completes inside invoke() comes back here: the outer loop goes on instead.
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#running < this.#maxParallel && this.#waiting.length && !this.#detached) {
        const next = this.#waiting.shift()!;
        if (!next.done) this.#invoke(next);
      }
    } finally {
      this.#draining = false;
    }
  }

  #release(): void {
    if (--this.#remaining === 0 && !this.#detached) this.ctx.onDone();
  }

  /** No parked call starts any more: the limiter's timers stop and the queue for a running place empties. */
  #unpark(): void {
    for (const t of this.#timers) t.cancel();
    this.#timers.clear();
    this.#waiting.length = 0;
  }

  /**
   * Cancel the batch: running calls are aborted (what one reports from its abort listener is
   * its result), parked ones (permission, limiter, a running place) resolved without running.
   * Every unfinished call gets a result, so each tool call in history stays paired.
   */
  cancel(reason: string): void {
    this.#unpark(); // each gets its result below, none is started any more
    for (const s of this.#slots) {
      if (s.done) continue;
      s.stopAsking(reason);
      const ran = s.running;
      s.controller.abort(new CallAborted('cancel', reason));
      if (ran) s.fail(reason);
      else s.refuse(reason, 'cancelled');
    }
    // Cancelled before it started: release the dispatch hold so the batch can end.
    if (!this.#started) {
      this.#started = true;
      this.#release();
    }
  }

  /** Agent closed: abort everything, report nothing more. Returns the calls left without a result. */
  detach(): ToolCall[] {
    this.#detached = true;
    this.#unpark();
    const unfinished: ToolCall[] = [];
    for (const s of this.#slots) {
      if (s.done) continue;
      s.done = true;
      s.timer?.cancel();
      s.stopAsking('agent closed');
      s.controller.abort(new CallAborted('close', 'agent closed'));
      unfinished.push(s.call);
    }
    return unfinished;
  }
}
