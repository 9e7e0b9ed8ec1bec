// JSON between JS and Lua, and the plugin-visible `json` module.
//
// Choices (clm-tool(5) leaves them open; documented in docs for plugin authors):
// - json.decode(text) returns `value` or `nil, err` (clm-tool(5)'s form).
//   Input over 2 MiB is rejected the same way. JSON null decodes to the json.null sentinel.
//   Integral numbers become Lua integers, others floats. Empty objects and empty arrays both
//   decode to an empty table.
// - json.encode: nil and json.null give null; a table is an array when its keys are exactly
//   1..n (n >= 1), otherwise an object with keys sorted (stable output across runs); integer and
//   float keys become their decimal text, other key types are skipped; an empty table is `{}`;
//   json.null inside tables encodes as null; NaN/inf become null;
//   functions, userdata and threads, and nesting deeper than 64 (e.g. a cycle), raise an error.
// - For tool schemas (schema mode), an empty table under the keywords "required" or "enum" is
//   `[]` (they are arrays by definition), so `required = {}` survives; inside "properties" and
//   similar maps the keys are property names, not keywords, and are left alone.

import { LUA_TNIL, LUA_TBOOLEAN, LUA_TLIGHTUSERDATA, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, TYPE_NAMES, type LuaPtr } from './wasm.js';
import { LuaError, type Sandbox } from './state.js';
import { JSON_DECODE_LIMIT } from './limits.js';

const MAX_DEPTH = 64;
const MAX_DECODE_DEPTH = 200;

/** Push a JSON-shaped JS value (null ⇒ json.null). May raise a Lua memory error. */
export function pushValue(sb: Sandbox, L: LuaPtr, v: unknown, depth = 0): void {
  const m = sb.m;
  switch (typeof v) {
    case 'string':
      sb.mem.push(L, v);
      return;
    case 'number':
      if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) m._lua_pushinteger(L, BigInt(v));
      else m._lua_pushnumber(L, v);
      return;
    case 'boolean':
      m._lua_pushboolean(L, v ? 1 : 0);
      return;
    case 'object':
      break;
    default:
      m._lua_pushnil(L);
      return; // undefined, functions: not representable
  }
  if (v === null) {
    m._lua_pushlightuserdata(L, sb.nullPtr);
    return;
  }
  if (depth >= MAX_DECODE_DEPTH || !m._lua_checkstack(L, 4)) throw new LuaError(`nesting deeper than ${MAX_DECODE_DEPTH} levels`, false);
  if (Array.isArray(v)) {
    m._lua_createtable(L, v.length, 0);
    for (let i = 0; i < v.length; i++) {
      pushValue(sb, L, v[i], depth + 1);
      m._lua_rawseti(L, -2, BigInt(i + 1));
    }
    return;
  }
  const keys = Object.keys(v as object);
  m._lua_createtable(L, 0, keys.length);
  for (const k of keys) {
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined || typeof x === 'function') continue;
    sb.mem.push(L, k);
    pushValue(sb, L, x, depth + 1);
    m._lua_rawset(L, -3);
  }
}

/** Decode JSON text onto the stack; returns an error message instead when it is not valid JSON. */
export function pushDecoded(sb: Sandbox, L: LuaPtr, text: string): string | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  pushValue(sb, L, v);
  return null;
}

/** Schema keywords whose value is always an array. */
const ARRAY_KEYWORDS = new Set(['required', 'enum']);
/** Schema keywords whose value maps names (not keywords) to schemas. */
const NAME_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas']);

/** plain: json.encode; schema: a JSON-Schema object; names: a map of names to schemas. */
type Mode = 'plain' | 'schema' | 'names';

/** Encode the Lua value at idx as compact JSON. Throws LuaError for values JSON cannot hold. */
export function encodeValue(sb: Sandbox, L: LuaPtr, idx: number, opts: { schema?: boolean } = {}): string {
  const abs = idx > 0 ? idx : sb.m._lua_gettop(L) + 1 + idx;
  // The text must fit in the plugin's memory once returned; stop before building more than that
  // (one string referenced a thousand times would otherwise grow far past the cap outside Lua).
  const budget = { left: Math.max(0, sb.limit - sb.used) };
  return encodeAt(sb, L, abs, 0, false, opts.schema ? 'schema' : 'plain', budget);
}

function spend(budget: { left: number }, s: string): string {
  budget.left -= s.length;
  if (budget.left < 0) throw new LuaError('not enough memory');
  return s;
}

function childMode(mode: Mode, key: string): Mode {
  if (mode === 'names') return 'schema';
  if (mode === 'plain' || ARRAY_KEYWORDS.has(key)) return 'plain';
  // Other keywords hold subschemas (items, anyOf, not, ...) or plain values where the
  // difference cannot matter.
  return NAME_MAPS.has(key) ? 'names' : 'schema';
}

function encodeAt(sb: Sandbox, L: LuaPtr, idx: number, depth: number, emptyIsArray: boolean, mode: Mode, budget: { left: number }): string {
  const m = sb.m;
  const t = m._lua_type(L, idx);
  switch (t) {
    case LUA_TNIL:
      return 'null';
    case LUA_TBOOLEAN:
      return m._lua_toboolean(L, idx) ? 'true' : 'false';
    case LUA_TNUMBER: {
      if (m._lua_isinteger(L, idx)) return m._lua_tointegerx(L, idx, 0).toString();
      const n = m._lua_tonumberx(L, idx, 0);
      return Number.isFinite(n) ? JSON.stringify(n) : 'null';
    }
    case LUA_TSTRING:
      return spend(budget, JSON.stringify(sb.mem.str(L, idx)));
    case LUA_TLIGHTUSERDATA:
      if (m._lua_touserdata(L, idx) === sb.nullPtr) return 'null';
      throw new LuaError('json.encode: cannot encode a userdata value');
    case LUA_TTABLE:
      break;
    default:
      throw new LuaError(`json.encode: cannot encode a ${TYPE_NAMES[t]} value`);
  }
  if (depth >= MAX_DEPTH) throw new LuaError(`json.encode: tables nested deeper than ${MAX_DEPTH} levels (a cycle?)`);
  if (!m._lua_checkstack(L, 4)) throw new LuaError('json.encode: nesting too deep');
  const entries: { key: string; num: number; json: string }[] = [];
  let sequence = true;
  let maxInt = 0;
  m._lua_pushnil(L);
  while (m._lua_next(L, idx) !== 0) {
    const kt = m._lua_type(L, -2);
    let key: string | null = null;
    let num = NaN;
    if (kt === LUA_TSTRING) {
      key = sb.mem.str(L, -2);
      sequence = false;
    } else if (kt === LUA_TNUMBER) {
      if (m._lua_isinteger(L, -2)) {
        const big = m._lua_tointegerx(L, -2, 0);
        key = big.toString();
        num = Number(big);
        if (num >= 1) {
          if (num > maxInt) maxInt = num;
        } else sequence = false;
      } else {
        const f = m._lua_tonumberx(L, -2, 0);
        key = String(f);
        sequence = false;
      }
    } else {
      sequence = false; // boolean/table/... keys have no JSON form: skipped
    }
    if (key !== null) {
      const arrayKeyword = mode === 'schema' && ARRAY_KEYWORDS.has(key);
      entries.push({ key, num, json: encodeAt(sb, L, m._lua_gettop(L), depth + 1, arrayKeyword, childMode(mode, key), budget) });
    }
    m._lua_settop(L, -2);
  }
  if (entries.length === 0) return emptyIsArray ? '[]' : '{}';
  if (sequence && maxInt === entries.length) {
    entries.sort((a, b) => a.num - b.num);
    return `[${entries.map((e) => e.json).join(',')}]`;
  }
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return `{${entries.map((e) => `${JSON.stringify(e.key)}:${e.json}`).join(',')}}`;
}

/** Install the global `json` table. */
export function installJson(sb: Sandbox, L: LuaPtr): void {
  const m = sb.m;
  m._lua_createtable(L, 0, 3);
  sb.setFunction(L, 'encode', (L) => {
    if (m._lua_gettop(L) < 1) m._lua_pushnil(L);
    sb.mem.push(L, encodeValue(sb, L, 1));
    return 1;
  });
  sb.setFunction(L, 'decode', (L) => {
    if (m._lua_type(L, 1) !== LUA_TSTRING) {
      m._lua_pushnil(L);
      sb.mem.push(L, 'json.decode: expected a string');
      return 2;
    }
    const bytes = sb.mem.view(L, 1)!;
    if (bytes.length > JSON_DECODE_LIMIT) {
      m._lua_pushnil(L);
      sb.mem.push(L, `json.decode: input too large (${bytes.length} > ${JSON_DECODE_LIMIT} bytes)`);
      return 2;
    }
    const top = m._lua_gettop(L);
    let err: string | null;
    try {
      err = pushDecoded(sb, L, sb.mem.str(L, 1)!);
    } catch (e) {
      if (!(e instanceof LuaError)) throw e;
      m._lua_settop(L, top);
      m._lua_pushnil(L);
      sb.mem.push(L, `json.decode: ${e.message}`);
      return 2;
    }
    if (err === null) return 1;
    m._lua_pushnil(L);
    sb.mem.push(L, `json.decode: invalid JSON: ${err}`);
    return 2;
  });
  m._lua_pushlightuserdata(L, sb.nullPtr);
  m._lua_setfield(L, -2, sb.mem.cstr('null'));
  m._lua_setglobal(L, sb.mem.cstr('json'));
}
