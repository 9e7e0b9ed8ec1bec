// What every Lua state clm creates starts from — a plugin's sandbox (state.ts) and the config
// evaluation state (../config/lua-state.ts) alike: an allocator capped per state, a panic
// handler that throws instead of abort()ing the wasm instance, only the base, string, table,
// math and utf8 libraries, and the globals neither kind of state may keep.

import type { LuaMem, LuaModule, LuaPtr } from './wasm.js';

/** Bytes a state's Lua heap holds, its high-water mark, and the cap. The allocator keeps the counts. */
export interface MemoryAccount {
  used: number;
  peak: number;
  readonly limit: number;
  /** Called before an allocation grows the heap; it may throw, abandoning the whole instance. */
  readonly beforeGrowth?: () => void;
}

/**
 * A lua_Alloc over the instance's malloc that refuses to grow past account.limit. A refused
 * allocation makes Lua run an emergency GC and then raise a clean "not enough memory"; the
 * state stays usable.
 */
export function cappedAllocator(m: LuaModule, account: MemoryAccount): number {
  return m.addFunction(
    ((_ud: number, ptr: number, osize: number, nsize: number) => {
      if (nsize === 0) {
        if (ptr) {
          account.used -= osize;
          m._free(ptr);
        }
        return 0;
      }
      const delta = ptr ? nsize - osize : nsize; // ptr == NULL: osize is a type tag
      if (delta > 0) {
        account.beforeGrowth?.();
        if (account.used + delta > account.limit) return 0;
      }
      const np = m._realloc(ptr, nsize);
      if (np) {
        account.used += delta;
        if (account.used > account.peak) account.peak = account.used;
      }
      return np;
    }) as never,
    'iiiii',
  );
}

/**
 * A new state on a capped allocator (0 if Lua could not create one). A panic (an error outside
 * any protected call) would abort() the instance; it throws instead, so the caller survives.
 */
export function newCappedState(m: LuaModule, mem: LuaMem, account: MemoryAccount): LuaPtr {
  const L = m._lua_newstate(cappedAllocator(m, account), 0);
  if (!L) return 0;
  m._lua_atpanic(
    L,
    m.addFunction(
      ((L: LuaPtr) => {
        throw new Error(`Lua panic: ${mem.str(L, -1) ?? 'unknown error'}`);
      }) as never,
      'ii',
    ),
  );
  return L;
}

/** Open base, string, table, math and utf8 — never coroutine, os, io, debug or package. May raise. */
export function openSafeLibraries(m: LuaModule, mem: LuaMem, L: LuaPtr): void {
  m._luaopen_base(L);
  m._lua_settop(L, 0);
  for (const [name, open] of [
    ['string', m._luaopen_string],
    ['table', m._luaopen_table],
    ['math', m._luaopen_math],
    ['utf8', m._luaopen_utf8],
  ] as const) {
    open(L);
    m._lua_setglobal(L, mem.cstr(name));
  }
}

/**
 * Lua that removes what no state may use: loading code from files or text (source is only ever
 * loaded by the host, as text), `string.dump`, print/warn (they would write straight to the
 * terminal), and finalizers: they run with hooks off, so a loop in one would hang the thread
 * past every deadline (5.4 registers a finalizer only if __gc is present at setmetatable time).
 * `who` names the kind of code in the error ("plugins", "config files").
 */
export function removeUnsafeGlobals(who: string): string {
  return `
do
  local rawget, type, error, smt = rawget, type, error, setmetatable
  setmetatable = function(t, mt)
    if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
      error("setmetatable: __gc metamethods are not allowed in ${who}", 2)
    end
    return smt(t, mt)
  end
end
getmetatable("").__metatable = "locked"
dofile, loadfile, load, require, print, warn = nil, nil, nil, nil, nil, nil
string.dump = nil
`;
}
