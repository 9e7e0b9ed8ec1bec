// The one long-lived Lua state that evaluates secrets.lua, config.lua and agent profiles.
//
// Unlike plugin states this trusts its input (it is the user's own config), so it only needs:
// the base, string, table, math and utf8 libraries (no os, io, debug, package, coroutine; load/loadfile/dofile/require removed; print/warn removed because they would
// write straight to stdout/stderr), a memory cap so `string.rep` cannot eat the process, and a
// deadline so an endless loop is a clear error rather than a hang. Chunks run in a coroutine
// whose count hook *yields* at the deadline: a yield cannot be caught by pcall, an error could.
// It runs in the config evaluator's worker thread (eval-worker.ts), whose watchdog covers what
// the hook cannot: one C-level call that never returns.
//
// A quick state runs on the main thread instead, where nothing could stop such a call: it gives
// up (NeedsWorker) before calling a library function that can run on inside C without end
// (pattern matching, string.rep, table.move, table.sort), and once a chunk has run for
// QUICK_MS — checked by the hook and before every allocation that grows the heap, so one costly
// instruction repeated cannot run on either. Whatever a quick state gives up on is evaluated in
// the worker; what it finishes, it finishes in a few milliseconds without starting a thread.

import {
  LuaMem,
  leanLuaModule,
  LUA_OK,
  LUA_YIELD,
  LUA_MASKCOUNT,
  LUA_TTABLE,
  TYPE_NAMES,
  type LuaModule,
  type LuaPtr,
} from '../lua/wasm.js';
import { newCappedState, openSafeLibraries, removeUnsafeGlobals, type MemoryAccount } from '../lua/base-state.js';
import { luaToJs } from './lua-value.js';
import { ConvertError, NeedsWorker } from './errors.js';
import { CONFIG_BUDGET_MS, type ChunkOutcome, type RunOptions } from './eval-protocol.js';
import { monotonicMs } from '../host/monotonic.js';

/** Default cap on Lua memory for the config state. */
export const CONFIG_MEMORY_LIMIT = 64 * 1024 * 1024;
const HOOK_COUNT = 10_000;
/** After the deadline, this long of failed attempts to stop a chunk politely ends it by force. */
const HARD_KILL_GRACE_MS = 1000;

/** How long a chunk may run in a quick state before it is left to the worker. */
export const QUICK_MS = 100;

/** Thrown through the wasm frames when nothing else stops a chunk; the state is unusable after. */
class HardKill extends Error {}

const PRELUDE = `
${removeUnsafeGlobals('config files')}
clm = { secrets = {} }
`;

/** A quick state's library functions that can run on inside C: each gives up instead. */
const QUICK_PRELUDE = `
local giveUp = ...
for lib, names in pairs({ string = { "find", "match", "gmatch", "gsub", "rep" }, table = { "move", "sort" } }) do
  for _, name in ipairs(names) do
    _G[lib][name] = function() giveUp(lib .. "." .. name) end
  end
end
`;

export class ConfigLua {
  private readonly m: LuaModule;
  private readonly mem: LuaMem;
  private readonly L: LuaPtr;
  private readonly hookPtr: number;
  private deadline = Infinity;
  private killed = false;
  private killedAt = '';
  /** Set once a chunk had to be stopped by force: the Lua state is inconsistent from then on. */
  private broken = false;
  /** Whether this is a quick state (set once its own preludes have run). */
  private quick = false;
  /** A quick state: how long the running chunk may take here, and why it gave up, once it has. */
  private quickMs = QUICK_MS;
  private gaveUp: string | null = null;

  /** A state in a fresh instance; `quick` for the main thread (see the top of this file). */
  static async create(opts: { quick?: boolean; memoryLimit?: number } = {}): Promise<ConfigLua> {
    return new ConfigLua(await leanLuaModule({ tierUp: !opts.quick }), opts.memoryLimit ?? CONFIG_MEMORY_LIMIT, opts.quick ?? false);
  }

  private constructor(m: LuaModule, limit: number, quick: boolean) {
    this.m = m;
    this.mem = new LuaMem(m);
    // Over the cap Lua raises "not enough memory"; a panic throws instead of aborting the instance.
    const memory: MemoryAccount = {
      used: 0,
      peak: 0,
      limit,
      beforeGrowth: quick ? () => this.giveUpAfterDeadline() : undefined,
    };
    this.L = newCappedState(m, this.mem, memory);
    if (!this.L) throw new Error('cannot create the config Lua state');
    this.hookPtr = m.addFunction(((L: LuaPtr) => this.hook(L)) as never, 'vii');

    openSafeLibraries(m, this.mem, this.L);
    const r = this.run(new TextEncoder().encode(PRELUDE), '=prelude');
    if (!r.ok) throw new Error(`cannot set up the config Lua state: ${r.message}`);
    if (quick) this.installGiveUps();
    this.quick = quick;
  }

  private installGiveUps(): void {
    const { m, mem, L } = this;
    if (mem.loadText(L, new TextEncoder().encode(QUICK_PRELUDE), '=quick') !== LUA_OK) throw new Error(this.errorText(L, -1));
    const giveUp = m.addFunction(
      ((L: LuaPtr) => {
        throw new NeedsWorker(`calls ${mem.str(L, 1)}`);
      }) as never,
      'ii',
    );
    m._lua_pushcclosure(L, giveUp, 0);
    if (m._lua_pcallk(L, 1, 0, 0, 0, 0) !== LUA_OK) throw new Error(this.errorText(L, -1));
  }

  private giveUpAfterDeadline(): void {
    if (this.quick && monotonicMs() > this.deadline) throw new NeedsWorker(`runs longer than ${this.quickMs} ms`);
  }

  private hook(L: LuaPtr): void {
    if (monotonicMs() <= this.deadline) return;
    this.giveUpAfterDeadline();
    const m = this.m;
    if (!this.killed) {
      this.killed = true;
      m._luaL_where(L, 0); // "config.lua:12: " of the running function
      this.killedAt = this.mem.str(L, -1) ?? '';
      m._lua_settop(L, -2);
    }
    if (m._lua_isyieldable(L)) {
      m._lua_yieldk(L, 0, 0, 0);
    } else if (monotonicMs() > this.deadline + HARD_KILL_GRACE_MS) {
      // A pcall loop inside a sort comparator or gsub callback can catch every error below.
      // A JS exception unwinds all wasm frames instead (emscripten rethrows non-longjmp values).
      throw new HardKill();
    } else {
      // Inside a sort comparator or gsub callback: raise; the hook fires again (and yields)
      // as soon as control is back in a yieldable frame, even if a pcall catches this.
      this.mem.push(L, 'evaluation time limit exceeded');
      m._lua_error(L);
    }
  }

  /**
   * Load and run one chunk; its first result is converted to JS. Never throws for Lua errors;
   * a quick state throws NeedsWorker when it gives up.
   */
  run(source: Uint8Array, chunkName: string, opts: RunOptions = {}): ChunkOutcome {
    if (this.gaveUp) throw new NeedsWorker(this.gaveUp);
    try {
      return this.runChunk(source, chunkName, opts);
    } catch (e) {
      if (e instanceof ConvertError) return { ok: false, message: e.message, keyPath: e.keyPath };
      if (!(e instanceof NeedsWorker)) throw e;
      this.gaveUp = `${chunkName.replace(/^=/, '')} ${e.message}`;
      throw new NeedsWorker(this.gaveUp);
    }
  }

  private runChunk(source: Uint8Array, chunkName: string, opts: RunOptions): ChunkOutcome {
    const { m, mem, L } = this;
    if (this.broken) return { ok: false, message: 'the config Lua state was stopped by force after an endless loop; restart clm' };
    const top = m._lua_gettop(L);
    const budgetMs = opts.budgetMs ?? CONFIG_BUDGET_MS;
    this.quickMs = Math.min(budgetMs, QUICK_MS);
    // On the main thread parsing counts too (the heap it grows is watched; a hook is not yet set).
    if (this.quick) this.deadline = monotonicMs() + this.quickMs;
    try {
      const co = m._lua_newthread(L); // stays on L's stack until we settop: anchored against GC
      if (mem.loadText(L, source, chunkName) !== LUA_OK) return { ok: false, message: this.errorText(L, -1) };
      m._lua_xmove(L, co, 1);
      m._lua_sethook(co, this.hookPtr, LUA_MASKCOUNT, HOOK_COUNT);
      this.killed = false;
      this.killedAt = '';
      if (!this.quick) this.deadline = monotonicMs() + budgetMs;
      let status: number;
      try {
        status = m._lua_resume(co, L, 0, mem.scratch);
      } catch (e) {
        if (!(e instanceof HardKill)) throw e;
        this.broken = true;
        status = LUA_YIELD;
      } finally {
        this.deadline = Infinity;
      }
      if (this.killed) {
        const secs = budgetMs >= 1000 ? `${budgetMs / 1000} s` : `${budgetMs} ms`;
        return { ok: false, message: `${this.killedAt}evaluation took longer than ${secs} (endless loop?)` };
      }
      if (status === LUA_YIELD) return { ok: false, message: 'unexpected yield' };
      if (status !== LUA_OK) return { ok: false, message: this.errorText(co, -1) };
      const nres = m.HEAP32[mem.scratch >> 2];
      if (nres === 0) return { ok: true, value: undefined, luaType: 'nil' };
      m._lua_settop(co, 1); // the first result only
      m._lua_xmove(co, L, 1);
      const t = m._lua_type(L, -1);
      const value = luaToJs(mem, L, -1, { lenient: opts.lenient });
      if (opts.publishAsSecrets && t === LUA_TTABLE) {
        // clm = { secrets = <result> }, fresh (secrets.lua may have replaced the global) and raw
        // (no metamethods run outside the protected coroutine).
        m._lua_createtable(L, 0, 1);
        mem.push(L, 'secrets');
        m._lua_pushvalue(L, -3);
        m._lua_rawset(L, -3);
        m._lua_setglobal(L, mem.cstr('clm'));
      }
      return { ok: true, value, luaType: TYPE_NAMES[t] ?? 'unknown' };
    } catch (e) {
      // Thrown through the wasm frames (unlike a value that cannot be converted): the state is
      // inconsistent from here on.
      if (!(e instanceof ConvertError)) this.broken = true;
      throw e;
    } finally {
      this.deadline = Infinity;
      if (!this.broken) m._lua_settop(L, top);
    }
  }

  /** A readable message for the error value at idx (never runs metamethods). */
  private errorText(L: LuaPtr, idx: number): string {
    return this.mem.errorText(L, idx, 'error with no message (nil)');
  }
}
