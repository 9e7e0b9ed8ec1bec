// Lua value → plain JS value, for the tables config.lua, secrets.lua and profiles return.
//
// Rules (documented for clm-config(5)):
// - a table whose keys are exactly the integers 1..n (n >= 1) becomes an array, in order;
// - any other table becomes an object: string keys as is, number keys as their decimal text,
//   keys of other types are ignored; keys are sorted so the result does not depend on Lua's
//   hash order; an empty table becomes {} (validation accepts {} wherever a list is expected);
// - integers become numbers (beyond 2^53 precision is lost), strings are decoded as UTF-8;
// - functions, userdata and threads cannot be config values: in strict mode (config.lua and
//   profiles) that is an error naming the key path, in lenient mode (secrets.lua) they are
//   left out; tables nested deeper than 64 levels (a table that contains itself) are an error.
//
// Nothing here allocates Lua memory (no lua_tolstring on numbers), so it needs no protection.

import { LUA_TBOOLEAN, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, TYPE_NAMES, type LuaMem, type LuaPtr } from '../lua/wasm.js';
import { childPath } from './key-path.js';
import { ConvertError } from './errors.js';
import { tableValue } from './table-value.js';

const MAX_DEPTH = 64;

export interface ConvertOptions {
  /** Leave out values JSON cannot hold instead of failing. */
  lenient?: boolean;
}

/** Convert the value at idx. Stack-neutral. */
export function luaToJs(mem: LuaMem, L: LuaPtr, idx: number, opts: ConvertOptions = {}): unknown {
  const abs = idx > 0 ? idx : mem.m._lua_gettop(L) + 1 + idx;
  return convert(mem, L, abs, opts, '', 0);
}

function number(mem: LuaMem, L: LuaPtr, idx: number): number {
  const m = mem.m;
  return m._lua_isinteger(L, idx) ? Number(m._lua_tointegerx(L, idx, 0)) : m._lua_tonumberx(L, idx, 0);
}

function convert(mem: LuaMem, L: LuaPtr, idx: number, opts: ConvertOptions, path: string, depth: number): unknown {
  const m = mem.m;
  const t = m._lua_type(L, idx);
  switch (t) {
    case LUA_TBOOLEAN:
      return m._lua_toboolean(L, idx) !== 0;
    case LUA_TNUMBER:
      return number(mem, L, idx);
    case LUA_TSTRING:
      return mem.str(L, idx) ?? '';
    case LUA_TTABLE:
      break;
    default:
      if (t <= 0) return undefined; // nil / none
      if (opts.lenient) return undefined;
      throw new ConvertError(path, `a ${TYPE_NAMES[t] ?? 'userdata'} cannot be a config value`);
  }
  if (depth >= MAX_DEPTH) throw new ConvertError(path, `tables nested deeper than ${MAX_DEPTH} levels (does a table contain itself?)`);
  if (!m._lua_checkstack(L, 4)) throw new ConvertError(path, 'Lua stack exhausted');

  const entries: [string | number, unknown][] = [];
  let intKeys = true;
  let maxInt = 0;
  m._lua_pushnil(L);
  while (m._lua_next(L, idx)) {
    // key at -2, value at -1
    const top = m._lua_gettop(L);
    const kt = m._lua_type(L, top - 1);
    let key: string | number | undefined;
    if (kt === LUA_TSTRING) {
      key = mem.str(L, top - 1) ?? '';
      intKeys = false;
    } else if (kt === LUA_TNUMBER) {
      if (m._lua_isinteger(L, top - 1)) {
        key = Number(m._lua_tointegerx(L, top - 1, 0));
        if (key >= 1) maxInt = Math.max(maxInt, key);
        else intKeys = false;
      } else {
        key = String(m._lua_tonumberx(L, top - 1, 0));
        intKeys = false;
      }
    } else {
      intKeys = false; // boolean or table keys: not representable, ignored
    }
    if (key !== undefined) {
      const v = convert(mem, L, top, opts, childPath(path, key), depth + 1);
      if (v !== undefined) entries.push([key, v]);
      else if (typeof key === 'number') intKeys = false; // a dropped element would leave a hole
    }
    m._lua_settop(L, top - 1);
  }

  return tableValue(entries, intKeys && maxInt === entries.length);
}
