// clm.tool_register: at load time only; the tool is staged and committed if the whole file runs.

import { LUA_REGISTRYINDEX, LUA_TFUNCTION, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, type LuaPtr } from './wasm.js';
import { LuaError } from './state.js';
import { DEFAULT_CALL_BUDGET_MS } from './limits.js';
import { encodeValue, pushValue } from './json.js';
import { Invocation } from './invocation.js';
import { strArg, type ApiScope } from './api-stack.js';

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function toolRegister(s: ApiScope, L: LuaPtr): number {
  const { p, sb } = s;
  const { m, mem } = sb;
  const co = p.scheduler.coroutineOf(L);
  if (!p.staged || !co || co.owner instanceof Invocation) throw new LuaError('clm.tool_register may only be called at load time');
  const name = strArg(sb, L, 1, 'clm.tool_register: name');
  if (!TOOL_NAME.test(name)) throw new LuaError(`clm.tool_register: invalid tool name '${name}' (use 1-64 letters, digits, '_' or '-')`);
  // MCP servers connect after plugins load: without this a plugin could squat on their names.
  if (name.startsWith('mcp__')) throw new LuaError(`clm.tool_register: the prefix 'mcp__' is reserved for MCP server tools ('${name}')`);
  if (p.isTaken(name)) throw new LuaError(`clm.tool_register: a tool named '${name}' is already registered`);
  if (m._lua_type(L, 2) !== LUA_TTABLE) throw new LuaError(`clm.tool_register('${name}'): the second argument must be a table`);
  m._lua_settop(L, 2);

  const field = (key: string) => m._lua_getfield(L, 2, mem.cstr(key));
  let description = '';
  const dt = field('description');
  if (dt === LUA_TSTRING) description = mem.str(L, -1)!;
  else if (dt !== LUA_TNIL) throw new LuaError(`clm.tool_register('${name}'): 'description' must be a string`);
  m._lua_settop(L, 2);

  let parameters: string | null = null;
  const st = field('params_schema');
  if (st === LUA_TTABLE) parameters = encodeValue(sb, L, -1, { schema: true });
  else if (st !== LUA_TNIL) throw new LuaError(`clm.tool_register('${name}'): 'params_schema' must be a table`);
  m._lua_settop(L, 2);

  let timeoutMs: number | null = null;
  const tt = field('timeout_ms');
  if (tt === LUA_TNUMBER) {
    const v = m._lua_tonumberx(L, -1, 0);
    if (!(v >= 0) || !Number.isFinite(v))
      throw new LuaError(`clm.tool_register('${name}'): 'timeout_ms' must be a positive number of milliseconds`);
    if (v >= 1) timeoutMs = Math.floor(v);
  } else if (tt !== LUA_TNIL) {
    throw new LuaError(`clm.tool_register('${name}'): 'timeout_ms' must be a number`);
  }
  m._lua_settop(L, 2);

  field('no_prompt');
  const noPrompt = m._lua_toboolean(L, -1) !== 0;
  m._lua_settop(L, 2);
  field('hidden');
  const hidden = m._lua_toboolean(L, -1) !== 0;
  m._lua_settop(L, 2);

  if (field('invoke') !== LUA_TFUNCTION) throw new LuaError("clm.tool_register: 'invoke' must be a function");
  const invokeRef = m._luaL_ref(L, LUA_REGISTRYINDEX);
  p.stage({
    name,
    invokeRef,
    cpuMs: timeoutMs ?? DEFAULT_CALL_BUDGET_MS,
    info: { plugin: p.index, name, description, parameters, timeoutMs, noPrompt, hidden },
  });

  // clm.config keyed by tool name when the file name has no entry (and the plugin has not
  // replaced the table it was given).
  const byTool = p.configFor(name);
  if (p.configFor(null) === undefined && byTool !== undefined) {
    m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(s.clmRef));
    m._lua_getfield(L, -1, mem.cstr('config'));
    m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(s.initialConfigRef));
    if (m._lua_rawequal(L, -1, -2)) {
      m._lua_settop(L, -3);
      pushValue(sb, L, byTool);
      m._lua_setfield(L, -2, mem.cstr('config'));
    }
  }
  return 0;
}
