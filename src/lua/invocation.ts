// One tool call and its family of tasks (clm.spawn), with every rule of clm-tool(5): only the
// main coroutine completes, fails, spawns, waits, reads or cancels; returning with live tasks
// cancels them and fails the call; completing with live tasks or unobserved task errors fails
// it; cancel, timeout and teardown end the whole family. Completing or failing ends the call:
// its tasks are cancelled, and the main coroutine may finish what it is doing but not wait on
// anything (http.*, clm.sleep raise) — work nobody will read must not go on in the background.
// All bookkeeping lives here, per call, so two concurrent calls of one plugin never share anything.

import { LUA_REGISTRYINDEX, type LuaPtr } from './wasm.js';
import { LuaError, type Sandbox } from './state.js';
import type { Budget, Coroutine, CoroutineOwner, Scheduler } from './scheduler.js';
import type { ToolReg } from './tool-reg.js';

/** What a call needs of its plugin (a narrow view, so the call does not depend on the whole Plugin). */
export interface InvocationHost {
  readonly name: string;
  readonly sb: Sandbox;
  readonly scheduler: Scheduler;
  readonly taskHandles: Map<number, Task>;
  readonly logEnabled: boolean;
  log(line: string): void;
  endInvocation(inv: Invocation): void;
}

export type CallResult = { ok: true; out: string | Uint8Array } | { ok: false; error: string };

/** Main coroutine parked in task:wait / clm.wait_any / clm.await_all / clm.try_all. */
export interface Waiter {
  ready(): boolean;
  /** Push the waiting function's results (runs inside the resumed coroutine). */
  push(L: LuaPtr): number;
  dispose?(): void;
}

export const RETURNED_WITHOUT_COMPLETING = 'plugin returned without calling ctx:complete/ctx:fail';

export class Task {
  state: 'pending' | 'ok' | 'failed' | 'cancelled' = 'pending';
  error = '';
  observed = false;
  /** Stack slice of the finished coroutine holding its return values. */
  base = 0;
  nvalues = 0;
  /** Registry ref of the outcome table once built (the same table on every read). */
  outcomeRef = 0;
  constructor(
    readonly id: number,
    readonly inv: Invocation,
    readonly co: Coroutine,
  ) {}
  get terminal(): boolean {
    return this.state !== 'pending';
  }
}

export class Invocation implements CoroutineOwner {
  readonly budget: Budget;
  main!: Coroutine;
  readonly tasks: Task[] = [];
  /** The result went to the agent (complete, fail, error, timeout or cancel). */
  reported = false;
  ended = false;
  httpTotal = 0;
  /** Id of this call's ctx handle. */
  ctxId = 0;
  private waiter: Waiter | null = null;

  constructor(
    readonly id: number,
    readonly plugin: InvocationHost,
    readonly tool: ToolReg,
    readonly argsRaw: string,
    private readonly sink: (res: CallResult) => void,
  ) {
    this.budget = { used: 0, limit: tool.cpuMs, resumes: 0 };
  }

  get watchId(): number {
    return this.id;
  }

  private report(res: CallResult): void {
    if (this.reported) return;
    this.reported = true;
    this.sink(res);
  }

  private liveTasks(): Task[] {
    return this.tasks.filter((t) => !t.terminal);
  }

  // ---- ctx (main coroutine only) ----

  requireMain(co: Coroutine | null, what: string): void {
    if (co !== this.main) {
      throw new LuaError(
        co && co.owner === this
          ? `${what} may only be called from the main tool coroutine, not from a task`
          : `${what} may only be called from the main coroutine of its own tool call`,
      );
    }
  }

  /** A call that reported its result waits on nothing more. */
  requireOpen(what: string): void {
    if (this.reported) throw new LuaError(`${what}: the tool call has ended (ctx:complete or ctx:fail was called)`);
  }

  complete(co: Coroutine | null, out: string | Uint8Array): void {
    this.requireMain(co, 'ctx:complete');
    if (this.reported) throw new LuaError('tool already completed');
    const live = this.liveTasks();
    if (live.length) {
      for (const t of live) this.cancelTask(t, 'task cancelled: the tool call completed');
      this.report({ ok: false, error: `ctx:complete called while ${live.length} task(s) were still running (they were cancelled)` });
      return;
    }
    const unobserved = this.tasks.filter((t) => t.state === 'failed' && !t.observed);
    if (unobserved.length) {
      for (const t of unobserved) t.observed = true;
      this.report({ ok: false, error: `ctx:complete called with ${unobserved.length} unobserved task error(s): ${unobserved[0].error}` });
      return;
    }
    this.report({ ok: true, out });
  }

  fail(co: Coroutine | null, message: string): void {
    this.requireMain(co, 'ctx:fail');
    if (this.reported) throw new LuaError('tool already completed');
    for (const t of this.liveTasks()) this.cancelTask(t, 'task cancelled: the tool call failed');
    this.report({ ok: false, error: message });
  }

  // ---- coroutine outcomes ----

  onReturn(co: Coroutine, nres: number): void {
    if (co === this.main) {
      const live = this.liveTasks().length;
      if (!this.reported) {
        this.report({
          ok: false,
          error: live
            ? `${RETURNED_WITHOUT_COMPLETING} (it returned with ${live} live task(s), which were cancelled)`
            : RETURNED_WITHOUT_COMPLETING,
        });
      }
      this.end('task cancelled: invoke returned');
      return;
    }
    const t = this.taskOf(co);
    if (!t || t.terminal) return;
    t.state = 'ok';
    t.nvalues = nres;
    t.base = this.plugin.sb.m._lua_gettop(co.L) - nres;
    this.poke();
  }

  onError(co: Coroutine, message: string): void {
    if (co === this.main) {
      if (!this.reported) this.report({ ok: false, error: message });
      else this.plugin.log(`lua plugin ${this.plugin.name}: ${this.tool.name}: error after completing: ${message}`);
      this.end('task cancelled: the tool call failed');
      return;
    }
    const t = this.taskOf(co);
    if (!t || t.terminal) return;
    t.state = 'failed';
    t.error = message;
    this.plugin.scheduler.release(co);
    this.poke();
  }

  onTimeout(_co: Coroutine): void {
    this.report({ ok: false, error: `plugin exceeded execution time budget (${this.budget.limit} ms of CPU time)` });
    this.end('task cancelled: the tool call timed out');
  }

  /** Tool cancel / timeout from the agent, or teardown; the result says what the call was waiting on. */
  cancel(reason: string): void {
    const on = this.main?.waitingOn;
    this.report({ ok: false, error: on ? `${reason} (waiting in ${on})` : reason });
    this.end(`task cancelled: ${reason}`);
  }

  /** Take down the whole family and release everything it holds in the Lua state. */
  end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.waiter?.dispose?.();
    this.waiter = null;
    const { scheduler, sb } = this.plugin;
    if (this.main.alive) scheduler.abandon(this.main);
    else scheduler.release(this.main);
    for (const t of this.tasks) {
      if (!t.terminal) this.cancelTask(t, reason);
      scheduler.release(t.co);
      if (t.outcomeRef && !sb.broken) sb.m._luaL_unref(sb.L, LUA_REGISTRYINDEX, t.outcomeRef);
      t.outcomeRef = 0;
      this.plugin.taskHandles.delete(t.id);
    }
    this.plugin.endInvocation(this);
    if (this.plugin.logEnabled) {
      this.plugin.log(
        `lua budget [${this.tool.name}]: cpu=${this.budget.used.toFixed(1)}/${this.budget.limit} ms resumes=${this.budget.resumes} ` +
          `mem=${sb.used}/${sb.limit} peak=${sb.peak} http=${this.httpTotal} tasks=${this.tasks.length}`,
      );
    }
  }

  // ---- tasks ----

  private taskOf(co: Coroutine): Task | undefined {
    return this.tasks.find((t) => t.co === co);
  }

  addTask(t: Task): void {
    this.tasks.push(t);
  }

  cancelTask(t: Task, reason: string): boolean {
    if (t.state === 'cancelled') return true;
    if (t.terminal) return false;
    t.state = 'cancelled';
    t.error = reason;
    this.plugin.scheduler.abandon(t.co);
    return true;
  }

  /** Build (once) and push the outcome table of a terminal task; reading a failure observes it. */
  pushOutcome(L: LuaPtr, t: Task): void {
    const { m, mem } = this.plugin.sb;
    if (!m._lua_checkstack(L, t.nvalues + 4)) throw new LuaError('too many task results');
    if (t.outcomeRef) {
      m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(t.outcomeRef));
    } else {
      m._lua_createtable(L, 0, 3);
      m._lua_pushboolean(L, t.state === 'ok' ? 1 : 0);
      m._lua_setfield(L, -2, mem.cstr('ok'));
      if (t.state === 'ok') {
        if (t.nvalues >= 1) {
          const L1 = t.co.L;
          if (t.nvalues > 1) m._lua_createtable(L, t.nvalues, 0);
          for (let i = 1; i <= t.nvalues; i++) {
            // Copy (not move) so a memory error half way leaves the task's values intact.
            m._lua_pushvalue(L1, t.base + i);
            m._lua_xmove(L1, L, 1);
            if (t.nvalues > 1) m._lua_rawseti(L, -2, BigInt(i));
          }
          m._lua_setfield(L, -2, mem.cstr('value'));
        }
      } else {
        mem.push(L, t.error);
        m._lua_setfield(L, -2, mem.cstr('error'));
        if (t.state === 'cancelled') {
          m._lua_pushboolean(L, 1);
          m._lua_setfield(L, -2, mem.cstr('cancelled'));
        }
      }
      m._lua_pushvalue(L, -1);
      t.outcomeRef = m._luaL_ref(L, LUA_REGISTRYINDEX);
      if (t.state === 'ok') this.plugin.scheduler.release(t.co);
    }
    if (t.state === 'failed') t.observed = true;
  }

  /** Push a task's normalized value (nil, the one value, or an array of them). */
  pushValueOf(L: LuaPtr, t: Task): void {
    const { m, mem } = this.plugin.sb;
    this.pushOutcome(L, t);
    m._lua_getfield(L, -1, mem.cstr('value'));
    m._lua_rotate(L, -2, 1);
    m._lua_settop(L, -2);
  }

  // ---- waiting ----

  /** Return the waiter's results now, or park the main coroutine in `what` until it is ready. */
  wait(L: LuaPtr, co: Coroutine, what: string, w: Waiter): number {
    if (w.ready()) {
      w.dispose?.();
      return w.push(L);
    }
    this.plugin.scheduler.requireYieldable(L);
    this.waiter = w;
    co.waitingOn = what;
    co.resumeWith = (L) => w.push(L);
    return this.plugin.scheduler.yieldNow(L);
  }

  /** Something changed (a task ended, a timer fired): wake the main coroutine if it can go on. */
  poke(): void {
    const w = this.waiter;
    if (!w?.ready()) return;
    this.waiter = null;
    w.dispose?.();
    this.plugin.scheduler.resume(this.main);
  }
}
