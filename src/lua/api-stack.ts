// Stack plumbing shared by the plugin API: typed arguments, `nil, err` returns, the handles (full
// userdata [tag, id]) that stand for a ctx or a task inside Lua, and which tool call is calling.

import { LUA_REGISTRYINDEX, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_TUSERDATA, TYPE_NAMES, type LuaPtr } from './wasm.js';
import { LuaError, type Sandbox } from './state.js';
import { Invocation, type InvocationHost, type Task } from './invocation.js';
import type { Coroutine } from './scheduler.js';
import type { ToolReg } from './tool-reg.js';
import type { FileGuard } from '../sandbox/file-guard.js';

// The tag keeps a task handle from passing as a ctx.
export const TAG_CTX = 0x43545831;
export const TAG_TASK = 0x5441534b;

/** A string argument (numbers are converted, as Lua does). */
export function strArg(sb: Sandbox, L: LuaPtr, idx: number, what: string): string {
  const t = sb.m._lua_type(L, idx);
  if (t !== LUA_TSTRING && t !== LUA_TNUMBER) throw new LuaError(`${what} must be a string, got ${TYPE_NAMES[t] ?? 'no value'}`);
  return sb.mem.str(L, idx)!;
}

/** The same argument as bytes (binary-safe). */
export function bytesArg(sb: Sandbox, L: LuaPtr, idx: number, what: string): Uint8Array {
  const t = sb.m._lua_type(L, idx);
  if (t !== LUA_TSTRING && t !== LUA_TNUMBER) throw new LuaError(`${what} must be a string, got ${TYPE_NAMES[t] ?? 'no value'}`);
  return sb.mem.bytes(L, idx)!;
}

/** Return `nil, message`. */
export function nilErr(sb: Sandbox, L: LuaPtr, message: string): number {
  sb.m._lua_pushnil(L);
  sb.mem.push(L, message);
  return 2;
}

/** A message argument: a string as it is, anything else as its error text, `ifNil` for nil or none. */
export function messageArg(sb: Sandbox, L: LuaPtr, idx: number, ifNil?: string): string {
  const t = sb.m._lua_type(L, idx);
  if (t === LUA_TSTRING || t === LUA_TNUMBER) return sb.mem.str(L, idx)!;
  return ifNil !== undefined && t <= LUA_TNIL ? ifNil : sb.errorText(L, idx);
}

/** A metatable named `name` whose __index holds `methods`; returns its registry reference. */
export function metatable(sb: Sandbox, L: LuaPtr, name: string, methods: Record<string, (L: LuaPtr) => number>): number {
  const { m, mem } = sb;
  m._lua_createtable(L, 0, 3);
  m._lua_createtable(L, 0, Object.keys(methods).length);
  for (const [k, f] of Object.entries(methods)) sb.setFunction(L, k, f);
  m._lua_setfield(L, -2, mem.cstr('__index'));
  mem.push(L, name);
  m._lua_setfield(L, -2, mem.cstr('__name'));
  m._lua_pushboolean(L, 0);
  m._lua_setfield(L, -2, mem.cstr('__metatable'));
  return m._luaL_ref(L, LUA_REGISTRYINDEX);
}

export function pushHandle(sb: Sandbox, L: LuaPtr, tag: number, id: number, meta: number): void {
  const { m } = sb;
  const ptr = m._lua_newuserdatauv(L, 8, 0);
  m.HEAPU32[ptr >> 2] = tag;
  m.HEAPU32[(ptr >> 2) + 1] = id;
  m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(meta));
  m._lua_setmetatable(L, -2);
}

/** The id of the handle at `idx` when it carries `tag`, else null. */
export function handleId(sb: Sandbox, L: LuaPtr, idx: number, tag: number): number | null {
  const { m } = sb;
  if (m._lua_type(L, idx) !== LUA_TUSERDATA) return null;
  const ptr = m._lua_touserdata(L, idx);
  if (m.HEAPU32[ptr >> 2] !== tag) return null;
  return m.HEAPU32[(ptr >> 2) + 1];
}

/** The calling coroutine and its tool call; an error at load time. */
export function invocationOf(p: ApiHost, L: LuaPtr, what: string): { co: Coroutine; inv: Invocation } {
  const co = p.scheduler.coroutineOf(L);
  if (!co || !(co.owner instanceof Invocation)) {
    throw new LuaError(`${what} may only be called from a tool invocation (invoke or a task), not at load time`);
  }
  return { co, inv: co.owner };
}

/** Same, restricted to the main coroutine (the only one that spawns, waits, reads and cancels). */
export function mainOf(p: ApiHost, L: LuaPtr, what: string): { co: Coroutine; inv: Invocation } {
  const r = invocationOf(p, L, what);
  r.inv.requireMain(r.co, what);
  return r;
}

/** What the API's functions need of their plugin (a narrow view, so they do not depend on the whole Plugin). */
export interface ApiHost extends InvocationHost {
  readonly index: number;
  readonly ctxHandles: Map<number, Invocation>;
  readonly taskHandles: Map<number, Task>;
  /** Tools registered by the running load; null outside load. */
  readonly staged: ToolReg[] | null;
  httpInFlight: number;
  /** The sandbox's check of clm.read_file / clm.write_file; null: unconfined. */
  readonly files: FileGuard | null;
  configFor(toolName: string | null): unknown;
  isTaken(name: string): boolean;
  stage(reg: ToolReg): void;
  nextHandleId(): number;
}

/** What the API's functions of one plugin share (the references are set while installing it). */
export interface ApiScope {
  readonly p: ApiHost;
  readonly sb: Sandbox;
  /** Registry references: the `clm` table, and the `clm.config` table it was created with. */
  clmRef: number;
  initialConfigRef: number;
  /** Registry references of the ctx and task handle metatables. */
  ctxMeta: number;
  taskMeta: number;
}
