// The methods of a tool call's ctx: complete, fail, args_raw, log.

import { LUA_TNUMBER, LUA_TSTRING, TYPE_NAMES, type LuaPtr } from './wasm.js';
import { LuaError } from './state.js';
import type { Invocation } from './invocation.js';
import { handleId, messageArg, TAG_CTX, type ApiScope } from './api-stack.js';

export function ctxMethods(s: ApiScope): Record<string, (L: LuaPtr) => number> {
  return {
    complete: (L) => complete(s, L),
    fail: (L) => fail(s, L),
    args_raw: (L) => argsRaw(s, L),
    log: (L) => log(s, L),
  };
}

function ctxOf(s: ApiScope, L: LuaPtr, what: string): Invocation {
  const id = handleId(s.sb, L, 1, TAG_CTX);
  if (id === null) throw new LuaError(`${what}: expected a ctx (call it as ctx:${what.split(':')[1] ?? ''}(...))`);
  const inv = s.p.ctxHandles.get(id);
  if (!inv) throw new LuaError(`${what}: this ctx belongs to a tool call that has ended`);
  return inv;
}

function complete(s: ApiScope, L: LuaPtr): number {
  const inv = ctxOf(s, L, 'ctx:complete');
  const co = s.p.scheduler.coroutineOf(L);
  inv.requireMain(co, 'ctx:complete');
  const t = s.sb.m._lua_type(L, 2);
  if (t !== LUA_TSTRING && t !== LUA_TNUMBER)
    throw new LuaError(`ctx:complete: result must be a string, got ${TYPE_NAMES[t] ?? 'no value'}`);
  inv.complete(co, s.sb.mem.text(L, 2)!);
  return 0;
}

function fail(s: ApiScope, L: LuaPtr): number {
  const inv = ctxOf(s, L, 'ctx:fail');
  const co = s.p.scheduler.coroutineOf(L);
  inv.requireMain(co, 'ctx:fail');
  inv.fail(co, messageArg(s.sb, L, 2, 'failed'));
  return 0;
}

function argsRaw(s: ApiScope, L: LuaPtr): number {
  const inv = ctxOf(s, L, 'ctx:args_raw');
  s.sb.mem.push(L, inv.argsRaw);
  return 1;
}

function log(s: ApiScope, L: LuaPtr): number {
  if (!s.p.logEnabled) return 0; // free when CLM_DEBUG_LOG is unset
  const inv = ctxOf(s, L, 'ctx:log');
  s.p.log(`lua plugin ${inv.tool.name}: ${messageArg(s.sb, L, 2)}`);
  return 0;
}
