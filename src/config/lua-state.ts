// The one long-lived Lua state that evaluates secrets.lua, config.lua and agent profiles.
//
// Unlike plugin states this trusts its input (it is the user's own config), so it only needs:
// the base, string, table, math and utf8 libraries (no os, io, debug, package, coroutine; load/loadfile/dofile/require removed; print/warn removed because they would
// write straight to stdout/stderr), a memory cap so `string.rep` cannot eat the process, and a
// deadline so an endless loop is a clear error rather than a hang. Chunks run in a coroutine
// whose count hook *yields* at the deadline: a yield cannot be caught by pcall, an error could.
// It runs in the config evaluator's worker thread (eval-worker.ts), whose watchdog covers what
// the hook cannot: one C-level call that never returns. Loaded only when a config.lua exists.

import {
  LuaMem,
  newLuaModule,
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
import { CONFIG_BUDGET_MS } from './eval-protocol.js';

export { CONFIG_BUDGET_MS };

/** Default cap on Lua memory for the config state. */
export const CONFIG_MEMORY_LIMIT = 64 * 1024 * 1024;
const HOOK_COUNT = 10_000;
/** After the deadline, this long of failed attempts to stop a chunk politely ends it by force. */
const HARD_KILL_GRACE_MS = 1000;

/** Thrown through the wasm frames when nothing else stops a chunk; the state is unusable after. */
class HardKill extends Error {}

const PRELUDE = `
${removeUnsafeGlobals('config files')}
clm = { secrets = {} }
`;

export type ChunkOutcome =
  /**
   * In a state watching secrets (watchSecrets) — inspected: a library call was given one;
   * varies: the first call made whose result differs from run to run (math.random, …).
   */
  | { ok: true; value: unknown; luaType: string; inspected?: boolean; varies?: string }
  | { ok: false; message: string; inspected?: boolean; varies?: string };

export interface RunOptions {
  budgetMs?: number;
  /** Leave out unconvertible values instead of failing (secrets.lua). */
  lenient?: boolean;
  /** When the chunk returns a table, make it `clm.secrets`. */
  publishAsSecrets?: boolean;
  /**
   * Run in the worker's state for this set of sentinel secrets, whose clm.secrets holds
   * sentinels starting with this marker (see secret-sentinels.ts), instead of the real one.
   */
  probe?: string;
}

/**
 * Lua for a state whose secrets are sentinels: every library function that could look into a
 * string (string.*, utf8.*, math.*, tonumber, rawequal, rawlen, table.sort over strings, and
 * string.format beyond plain %s) calls mark() when given one holding a sentinel. mark raises,
 * so nothing runs on a sentinel (a pattern that would run away on it never starts), and records
 * it where no pcall can undo it. Passing a secret along, concatenating it, table.concat and
 * tostring stay free: the result then holds the sentinel and substituting gives the real value.
 *
 * It also reports, through vary(), calls whose result differs from run to run although every
 * file is the same (math.random, math.randomseed, collectgarbage, and an address from tostring
 * or string.format): an evaluation that made one is not kept.
 */
const WATCH_SECRETS = `
local mark, vary, marker = ...
local find, gsub, format, sort = string.find, string.gsub, string.format, table.sort
-- Local names unlike the globals: an assignment to a global below must not hit a local instead.
local type, select, pairs, rawget = type, select, pairs, rawget
local len, tostr, cg = rawlen, tostring, collectgarbage
local primitive = { ["nil"] = true, boolean = true, number = true, string = true }
local function holds(...)
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) == "string" and find(v, marker, 1, true) then return true end
  end
  return false
end
local function guard(name, f)
  return function(...)
    if holds(...) then mark(name) end
    return f(...)
  end
end
for _, lib in pairs({ string, utf8, math }) do
  for k, f in pairs(lib) do
    if type(f) == "function" then lib[k] = guard(k, f) end
  end
end
-- Whether text shows the address of one of the values (tostring's "table: 0x…", %p).
local function addressIn(text, ...)
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if not primitive[type(v)] and type(text) == "string" and find(text, format("%p", v), 1, true) then return true end
  end
  return false
end
string.format = function(fmt, ...)
  if holds(fmt) or (holds(...) and type(fmt) == "string" and find(gsub(fmt, "%%%%", ""), "%%[^s]")) then mark("string.format") end
  local out = format(fmt, ...)
  if addressIn(out, ...) then vary("string.format") end
  return out
end
tostring = function(...)
  local out = tostr(...)
  if addressIn(out, (...)) then vary("tostring") end
  return out
end
for _, name in pairs({ "random", "randomseed" }) do
  local f = math[name]
  math[name] = function(...)
    vary("math." .. name)
    return f(...)
  end
end
collectgarbage = function(...)
  vary("collectgarbage")
  return cg(...)
end
tonumber, rawequal, rawlen = guard("tonumber", tonumber), guard("rawequal", rawequal), guard("rawlen", rawlen)
table.sort = function(t, ...)
  if type(t) == "table" then
    for i = 1, len(t) do
      if holds(rawget(t, i)) then mark("table.sort") end
    end
  end
  return sort(t, ...)
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
  /** Whether watchSecrets is on, and whether a library call was given a sentinel since. */
  private watching = false;
  private inspected = false;
  /** The first call (in a state watching secrets) whose result differs from run to run. */
  private varies: string | undefined;

  static async create(memoryLimit = CONFIG_MEMORY_LIMIT): Promise<ConfigLua> {
    return new ConfigLua(await newLuaModule(), memoryLimit);
  }

  /** Another, independent state in the same wasm instance (cheaper than a new instance). */
  sibling(memoryLimit = CONFIG_MEMORY_LIMIT): ConfigLua {
    return new ConfigLua(this.m, memoryLimit);
  }

  /** Make this state report (and refuse) library calls on strings holding `marker`; see WATCH_SECRETS. */
  watchSecrets(marker: string): void {
    const { m, mem, L } = this;
    const top = m._lua_gettop(L);
    try {
      const src = new TextEncoder().encode(WATCH_SECRETS);
      if (mem.loadText(L, src, '=watch') !== LUA_OK) throw new Error(this.errorText(L, -1));
      const mark = m.addFunction(
        ((L: LuaPtr) => {
          this.inspected = true;
          mem.push(L, "a secret's value is looked into");
          return m._lua_error(L);
        }) as never,
        'ii',
      );
      const vary = m.addFunction(
        ((L: LuaPtr) => {
          this.varies ??= mem.str(L, 1) ?? 'a function';
          return 0;
        }) as never,
        'ii',
      );
      m._lua_pushcclosure(L, mark, 0);
      m._lua_pushcclosure(L, vary, 0);
      mem.push(L, marker);
      if (m._lua_pcallk(L, 3, 0, 0, 0, 0) !== LUA_OK) throw new Error(this.errorText(L, -1));
      this.watching = true;
    } finally {
      m._lua_settop(L, top);
    }
  }

  private constructor(m: LuaModule, limit: number) {
    this.m = m;
    this.mem = new LuaMem(m);
    // Over the cap Lua raises "not enough memory"; a panic throws instead of aborting the instance.
    const memory: MemoryAccount = { used: 0, peak: 0, limit };
    this.L = newCappedState(m, this.mem, memory);
    if (!this.L) throw new Error('cannot create the config Lua state');
    this.hookPtr = m.addFunction(((L: LuaPtr) => this.hook(L)) as never, 'vii');

    openSafeLibraries(m, this.mem, this.L);
    const r = this.run(new TextEncoder().encode(PRELUDE), '=prelude');
    if (!r.ok) throw new Error(`cannot set up the config Lua state: ${r.message}`);
  }

  private hook(L: LuaPtr): void {
    if (performance.now() <= this.deadline) return;
    const m = this.m;
    if (!this.killed) {
      this.killed = true;
      m._luaL_where(L, 0); // "config.lua:12: " of the running function
      this.killedAt = this.mem.str(L, -1) ?? '';
      m._lua_settop(L, -2);
    }
    if (m._lua_isyieldable(L)) {
      m._lua_yieldk(L, 0, 0, 0);
    } else if (performance.now() > this.deadline + HARD_KILL_GRACE_MS) {
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

  /** Load and run one chunk; its first result is converted to JS. Never throws for Lua errors. */
  run(source: Uint8Array, chunkName: string, opts: RunOptions = {}): ChunkOutcome {
    const outcome = this.runChunk(source, chunkName, opts);
    // Sticky: a secret looked into by any chunk of this state spoils them all.
    if (this.watching && this.inspected) outcome.inspected = true;
    if (this.watching && this.varies) outcome.varies = this.varies;
    return outcome;
  }

  private runChunk(source: Uint8Array, chunkName: string, opts: RunOptions): ChunkOutcome {
    const { m, mem, L } = this;
    if (this.broken) return { ok: false, message: 'the config Lua state was stopped by force after an endless loop; restart clm' };
    const top = m._lua_gettop(L);
    const budgetMs = opts.budgetMs ?? CONFIG_BUDGET_MS;
    try {
      const co = m._lua_newthread(L); // stays on L's stack until we settop: anchored against GC
      if (mem.loadText(L, source, chunkName) !== LUA_OK) return { ok: false, message: this.errorText(L, -1) };
      m._lua_xmove(L, co, 1);
      m._lua_sethook(co, this.hookPtr, LUA_MASKCOUNT, HOOK_COUNT);
      this.killed = false;
      this.killedAt = '';
      this.deadline = performance.now() + budgetMs;
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
    } finally {
      if (!this.broken) m._lua_settop(L, top);
    }
  }

  /** A readable message for the error value at idx (never runs metamethods). */
  private errorText(L: LuaPtr, idx: number): string {
    return this.mem.errorText(L, idx, 'error with no message (nil)');
  }
}
