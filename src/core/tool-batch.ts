// One batch of tool calls from one model reply: permission gate, optional dispatch limiter,
// a cap on calls running at once (the rest queue, so a reply with 1,000 shell_exec calls does
// not start 1,000 processes together), per-call timeout, exactly-once completion (late
// completions are dropped), results reported in completion order.

import { messageOf } from './errors.js';
import type { Cancelable, Host } from './host.js';
import type { TokenBucket } from './ratelimit.js';
import { callLimits, type ToolRegistry } from './tool-registry.js';
import { clampOutput, outputText } from './tool-output.js';
import type { PermissionDecision, PermissionRequest, ToolCall, ToolInvocation, ToolOutcome } from './types.js';

export interface BatchContext {
  registry: ToolRegistry;
  host: Host;
  toolLimiter: TokenBucket | null;
  /** Calls running at once (default DEFAULT_MAX_PARALLEL_TOOLS; 0 = no limit). */
  maxParallel?: number;
  /** A call is dispatched (before the permission gate); `args` is "{}" when the model sent none. */
  onBegin(id: string, name: string, args: string): void;
  /** Who decides gated calls (read at each call); none ⇒ they are denied. */
  permission(): ((req: PermissionRequest) => void) | undefined;
  /** A finished call: the agent records it (history, callbacks). */
  onResult(call: ToolCall, content: string, outcome: ToolOutcome): void;
  /** Every call finished. */
  onDone(): void;
  notify(text: string): void;
  log(line: string): void;
}

/** After a timeout aborts a call, how long the tool may take to report what it has (partial output). */
export const TIMEOUT_GRACE_MS = 500;
export const DEFAULT_MAX_PARALLEL_TOOLS = 16;

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
  notify(text: string): void {
    this.#batch.ctx.notify(text);
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
      s.fail(`unknown tool '${name}'`);
      return;
    }
    if (t.def.noPrompt || t.remembered === 'allow') {
      this.#run(s);
      return;
    }
    if (t.remembered === 'deny') {
      s.fail('denied by user (remembered)');
      return;
    }
    const ask = this.ctx.permission();
    if (!ask) {
      s.fail('denied: no permission policy');
      return;
    }
    const asking = new AbortController();
    s.asking = asking;
    ask({
      id: s.call.id,
      name,
      args,
      signal: asking.signal,
      respond: (d: PermissionDecision) => {
        if (s.asking !== asking || s.done || this.#detached) return;
        s.asking = null;
        if (d === 'allow_always') t.remembered = 'allow';
        if (d === 'deny_always') t.remembered = 'deny';
        if (d === 'allow_once' || d === 'allow_always') this.#run(s);
        else s.fail('denied by user');
      },
    });
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
      s.fail(`unknown tool '${s.name}'`);
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
        s.controller.abort(new Error(`timed out after ${s.timeoutMs} ms`));
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
  finish(s: Slot, content: string, outcome: ToolOutcome): void {
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
    this.ctx.onResult(s.call, content, outcome);
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
   * Cancel the batch: running calls are aborted, parked ones (permission, limiter) resolved.
   * Every unfinished call gets a result, so each tool call in history stays paired.
   */
  cancel(reason: string): void {
    this.#unpark(); // each gets its result below, none is started any more
    for (const s of this.#slots) {
      if (s.done) continue;
      s.stopAsking(reason);
      this.finish(s, `[tool failed: ${reason}]`, 'failed');
      s.controller.abort(new Error(reason));
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
      s.controller.abort(new Error('agent closed'));
      unfinished.push(s.call);
    }
    return unfinished;
  }
}
