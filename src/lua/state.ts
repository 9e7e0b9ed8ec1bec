// One sandboxed Lua state in its own wasm instance: the capped allocator, the safe libraries,
// host-function plumbing and protected execution. Knows nothing about tools or scheduling.

import {
  LuaMem,
  leanLuaModule,
  isLongjmp,
  LUA_OK,
  LUA_REGISTRYINDEX,
  LUA_MASKCOUNT,
  upvalueIndex,
  type LuaModule,
  type LuaPtr,
} from './wasm.js';
import { newCappedState, openSafeLibraries, removeUnsafeGlobals, type MemoryAccount } from './base-state.js';
import { HOOK_COUNT, MEMORY_LIMIT } from './limits.js';

/** Thrown by host code to raise a Lua error (position of the calling Lua code is prepended). */
export class LuaError extends Error {
  /** false: raise the message as is, without "chunk:line: ". */
  readonly where: boolean;
  constructor(message: string, where = true) {
    super(message);
    this.where = where;
  }
}

// Runs once per state before any plugin code: removes the globals a plugin must not reach, which
// is simpler in Lua than through the C API; collectgarbage is kept for the host only.
const PRELUDE = `
local gc = collectgarbage
${removeUnsafeGlobals('plugins')}
collectgarbage = nil
return gc
`;

export type HostFn = (L: LuaPtr) => number;

/** The C signature of a host pointer: a lua_CFunction (L) or a lua_KFunction continuation (L, status, ctx). */
const POINTER_SIGS = { function: 'ii', continuation: 'iiii' } as const;

export class Sandbox implements MemoryAccount {
  readonly m: LuaModule;
  readonly mem: LuaMem;
  readonly L: LuaPtr;
  readonly limit: number;
  /** Bytes currently allocated by Lua, and the high-water mark. */
  used = 0;
  peak = 0;
  /** Set when the instance can no longer be trusted (panic, trap, abort). */
  broken: string | null = null;
  /** Light userdata address that stands for JSON null. */
  readonly nullPtr: number;
  /** Count hook target; the scheduler installs itself here. */
  onHook: (L: LuaPtr) => void = () => {};
  readonly hookPtr: number;
  private job: ((L: LuaPtr) => void) | null = null;
  private readonly trampoline: number;
  /** Host functions by id; every one is a C closure over the same dispatcher (see pushFunction). */
  private readonly hostFns: HostFn[] = [];
  private readonly dispatcher: number;
  private gcRef = 0;

  static async create(limit = MEMORY_LIMIT): Promise<Sandbox> {
    return new Sandbox(await leanLuaModule(), limit);
  }

  private constructor(m: LuaModule, limit: number) {
    this.m = m;
    this.mem = new LuaMem(m);
    this.limit = limit;
    // The cap (this object keeps the count); a panic throws, so the caller can mark it broken.
    this.L = newCappedState(m, this.mem, this);
    if (!this.L) throw new Error('cannot create Lua state');
    this.hookPtr = m.addFunction(
      ((L: LuaPtr) => {
        try {
          this.onHook(L);
        } catch (e) {
          if (isLongjmp(e)) throw e;
        }
      }) as never,
      'vii',
    );
    // Each addFunction costs a wasm table slot and ~5 KiB; one dispatcher serves all host
    // functions, which find their implementation through their upvalue.
    this.dispatcher = this.pointer((L) => this.hostFns[m._lua_touserdata(L, upvalueIndex(1))](L), 'function');
    this.trampoline = this.pointer((L) => {
      const job = this.job;
      this.job = null;
      job?.(L);
      return 0;
    }, 'function');
    this.nullPtr = m._malloc(1);
    const err = this.protect((L) => this.openLibraries(L));
    if (err) throw new Error(`cannot set up the Lua sandbox: ${err}`);
  }

  private openLibraries(L: LuaPtr): void {
    const { m, mem } = this;
    openSafeLibraries(m, mem, L);
    const src = new TextEncoder().encode(PRELUDE);
    if (mem.loadText(L, src, '=sandbox') !== LUA_OK) throw new Error(this.errorText(L, -1));
    m._lua_callk(L, 0, 1, 0, 0);
    this.gcRef = m._luaL_ref(L, LUA_REGISTRYINDEX);
  }

  /**
   * A C function or continuation pointer running impl. JS exceptions become Lua errors; never
   * let one unwind Lua's C frames. Each costs a wasm table slot: make few (see pushFunction).
   */
  pointer(impl: HostFn, kind: keyof typeof POINTER_SIGS): number {
    const m = this.m;
    return m.addFunction(
      ((L: LuaPtr) => {
        try {
          return impl(L);
        } catch (e) {
          if (isLongjmp(e)) throw e;
          this.pushError(L, e);
          return m._lua_error(L);
        }
      }) as never,
      POINTER_SIGS[kind],
    );
  }

  private pushError(L: LuaPtr, e: unknown): void {
    const m = this.m;
    if (e instanceof LuaError) {
      if (e.where) {
        m._luaL_where(L, 1);
        this.mem.push(L, e.message);
        m._lua_concat(L, 2);
      } else {
        this.mem.push(L, e.message);
      }
    } else {
      this.mem.push(L, `internal error: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * Run job inside lua_pcall on the main thread, so an allocation failure (or any Lua error)
   * unwinds to here instead of panicking. Returns the error message, or null.
   */
  protect(job: (L: LuaPtr) => void): string | null {
    const { m, L } = this;
    const top = m._lua_gettop(L);
    this.job = job;
    m._lua_pushcclosure(L, this.trampoline, 0);
    const status = m._lua_pcallk(L, 0, 0, 0, 0, 0);
    this.job = null;
    if (status === LUA_OK) return null;
    const msg = this.errorText(L, -1);
    m._lua_settop(L, top);
    return msg;
  }

  /** A readable message for the error value at idx (never runs metamethods). */
  errorText(L: LuaPtr, idx: number): string {
    return this.mem.errorText(L, idx, 'nil');
  }

  /** Install the count hook on a thread. */
  hook(L: LuaPtr): void {
    this.m._lua_sethook(L, this.hookPtr, LUA_MASKCOUNT, HOOK_COUNT);
  }

  /** Full collection through the private reference to collectgarbage (lua_gc is not exported). */
  collect(): void {
    this.protect((L) => {
      const m = this.m;
      m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(this.gcRef));
      m._lua_callk(L, 0, 0, 0, 0);
    });
  }

  /** Push a host function (a closure over the dispatcher). */
  pushFunction(L: LuaPtr, impl: HostFn): void {
    const id = this.hostFns.push(impl) - 1;
    this.m._lua_pushlightuserdata(L, id);
    this.m._lua_pushcclosure(L, this.dispatcher, 1);
  }

  /** Set t[name] = host function for the table at the top of L's stack. */
  setFunction(L: LuaPtr, name: string, impl: HostFn): void {
    this.pushFunction(L, impl);
    this.m._lua_setfield(L, -2, this.mem.cstr(name));
  }
}
