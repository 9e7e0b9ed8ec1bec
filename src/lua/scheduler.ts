// Coroutines of one plugin state and the loop that resumes them: CPU budgets enforced by the
// count hook (yield-to-kill, which pcall cannot catch), ~20 ms time slices so one plugin cannot
// starve the others, async host operations that park a coroutine until a promise settles, and
// the watchdog stamp around every lua_resume.

import { LUA_OK, LUA_YIELD, LUA_REGISTRYINDEX, LUA_MASKCOUNT, type LuaPtr } from './wasm.js';
import { LuaError, type Sandbox } from './state.js';
import { SLICE_MS } from './limits.js';

/** CPU time shared by one tool call's coroutines (or one load). Time spent waiting does not count. */
export interface Budget {
  used: number;
  limit: number;
  /** Resumes charged to it: each time slice, and each return from a wait, is one. */
  resumes: number;
}

/** Who a coroutine reports to: a tool invocation or a plugin load. */
export interface CoroutineOwner {
  readonly budget: Budget;
  /** The call id stamped for the watchdog (-1 for a load). */
  readonly watchId: number;
  onReturn(co: Coroutine, nres: number): void;
  onError(co: Coroutine, message: string): void;
  onTimeout(co: Coroutine): void;
}

export interface Watch {
  enter(plugin: number, call: number): void;
  leave(): void;
}

export class Coroutine {
  alive = true;
  /** The hook asked for a time-slice yield. */
  sliceYield = false;
  /** The hook found the budget spent; the coroutine is never resumed again. */
  killed = false;
  /** Pushes the results of the host call that yielded, inside the resumed coroutine (protected). */
  resumeWith: ((L: LuaPtr) => number) | null = null;
  /** Cancels the async operation the coroutine is parked on. */
  cancelOp: (() => void) | null = null;
  /** The host function it is parked in (`http.get`, `clm.sleep`, `clm.await_all`, …), null while it runs. */
  waitingOn: string | null = null;
  constructor(
    readonly L: LuaPtr,
    readonly ref: number,
    readonly owner: CoroutineOwner,
  ) {}
}

export class Scheduler {
  private readonly threads = new Map<LuaPtr, Coroutine>();
  private current: { co: Coroutine; start: number } | null = null;
  /** Continuation used by every yielding host function. */
  private readonly kPtr: number;

  constructor(
    private readonly sb: Sandbox,
    private readonly pluginIndex: number,
    private readonly watch: Watch | null,
    /** The instance trapped or panicked: the plugin must be taken out of service. */
    private readonly onCrash: (message: string) => void,
  ) {
    sb.onHook = (L) => this.hook(L);
    this.kPtr = sb.pointer((L) => {
      const co = this.threads.get(L);
      const push = co?.resumeWith;
      if (co) co.resumeWith = null;
      return push ? push(L) : 0;
    }, 'continuation');
  }

  /** The coroutine running on L (null: the main state or an unknown thread). */
  coroutineOf(L: LuaPtr): Coroutine | null {
    return this.threads.get(L) ?? null;
  }

  /**
   * A new coroutine: setup (running in protected mode on the main state) pushes the body
   * function and its arguments onto L1 and returns the argument count.
   */
  create(owner: CoroutineOwner, setup: (L1: LuaPtr, L: LuaPtr) => number): { co: Coroutine; nargs: number } | { error: string } {
    const { m } = this.sb;
    let co: Coroutine | null = null;
    let nargs = 0;
    const err = this.sb.protect((L) => {
      const L1 = m._lua_newthread(L);
      const ref = m._luaL_ref(L, LUA_REGISTRYINDEX);
      this.sb.hook(L1);
      co = new Coroutine(L1, ref, owner);
      this.threads.set(L1, co);
      nargs = setup(L1, L);
    });
    if (err !== null) {
      if (co) this.release(co);
      return { error: err };
    }
    return { co: co!, nargs };
  }

  /** Track a thread created inside a host call (clm.spawn); the caller holds ref in the registry. */
  adopt(L1: LuaPtr, ref: number, owner: CoroutineOwner): Coroutine {
    const co = new Coroutine(L1, ref, owner);
    this.threads.set(L1, co);
    return co;
  }

  /** Run co until it yields, returns or fails. */
  resume(co: Coroutine, nargs = 0): void {
    const { m, mem } = this.sb;
    if (!co.alive || this.sb.broken) return;
    co.waitingOn = null;
    const start = performance.now();
    this.current = { co, start };
    this.watch?.enter(this.pluginIndex, co.owner.watchId);
    let status: number;
    try {
      status = m._lua_resume(co.L, 0, nargs, mem.scratch);
    } catch (e) {
      this.current = null;
      this.watch?.leave();
      this.crash(e);
      return;
    }
    this.current = null;
    this.watch?.leave();
    co.owner.budget.used += performance.now() - start;
    co.owner.budget.resumes++;
    if (co.killed) {
      this.abandon(co);
      co.owner.onTimeout(co);
      return;
    }
    const nres = m.HEAP32[mem.scratch >> 2];
    if (status === LUA_YIELD) {
      if (nres) m._lua_settop(co.L, -nres - 1);
      if (co.sliceYield) {
        co.sliceYield = false;
        setImmediate(() => this.resume(co));
      }
      // Otherwise a host function parked it; its operation resumes it.
      return;
    }
    co.alive = false;
    if (status === LUA_OK) co.owner.onReturn(co, nres);
    else co.owner.onError(co, this.sb.errorText(co.L, -1));
  }

  /** Resume on a later loop turn (tasks never run before clm.spawn returns). */
  later(co: Coroutine, nargs = 0): void {
    setImmediate(() => this.resume(co, nargs));
  }

  /**
   * Park the running coroutine in host function `what` until `start`'s operation calls
   * `done(push)`; push then supplies the host function's results. Returns what the host
   * function must return (lua_yieldk never returns; it unwinds).
   */
  park(L: LuaPtr, co: Coroutine, what: string, start: (done: (push: (L: LuaPtr) => number) => void) => (() => void) | null): number {
    this.requireYieldable(L);
    co.waitingOn = what;
    let settled = false;
    let starting = true;
    const cancel = start((push) => {
      if (settled) return;
      settled = true;
      co.cancelOp = null;
      const go = () => {
        if (!co.alive) return;
        co.resumeWith = push;
        this.resume(co);
      };
      // Never resume a coroutine from inside its own running host call.
      if (starting) queueMicrotask(go);
      else go();
    });
    starting = false;
    if (!settled) co.cancelOp = cancel;
    return this.yieldNow(L);
  }

  /** Yield the running coroutine; whoever holds it resumes it after setting its resumeWith. */
  yieldNow(L: LuaPtr): number {
    return this.sb.m._lua_yieldk(L, 0, 0, this.kPtr);
  }

  requireYieldable(L: LuaPtr): void {
    if (!this.sb.m._lua_isyieldable(L))
      throw new LuaError('attempt to yield across a C-call boundary (e.g. from a table.sort comparator or a gsub callback)');
  }

  /** Stop a coroutine for good: cancel what it waits on and let Lua collect it. */
  abandon(co: Coroutine): void {
    co.alive = false;
    const cancel = co.cancelOp;
    co.cancelOp = null;
    co.resumeWith = null;
    cancel?.();
    this.release(co);
  }

  /** Drop the registry reference and the lookup entry (the thread's values become garbage). */
  release(co: Coroutine): void {
    if (!this.threads.has(co.L)) return;
    this.threads.delete(co.L);
    if (!this.sb.broken) this.sb.m._luaL_unref(this.sb.L, LUA_REGISTRYINDEX, co.ref);
  }

  private hook(L: LuaPtr): void {
    const cur = this.current;
    if (!cur || cur.co.L !== L) return;
    const { m } = this.sb;
    const elapsed = performance.now() - cur.start;
    const co = cur.co;
    if (co.owner.budget.used + elapsed > co.owner.budget.limit) {
      co.killed = true;
      // A yield from a hook cannot be caught by pcall. Where yielding is impossible (inside a
      // sort comparator or gsub callback) raise instead, to get back to a point that can.
      if (m._lua_isyieldable(L)) {
        m._lua_yieldk(L, 0, 0, 0);
      } else {
        // Check every instruction from now on, so the first one back in yieldable code ends it.
        m._lua_sethook(L, this.sb.hookPtr, LUA_MASKCOUNT, 1);
        this.sb.mem.push(L, 'execution time budget exceeded');
        m._lua_error(L);
      }
      return;
    }
    if (elapsed > SLICE_MS && m._lua_isyieldable(L)) {
      co.sliceYield = true;
      m._lua_yieldk(L, 0, 0, 0);
    }
  }

  private crash(e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    this.sb.broken = msg;
    this.onCrash(msg);
  }
}
