// The plugin-facing API of clm-tool(5): the `clm` and `http` tables and the methods of ctx and
// task handles, assembled here from the files that implement them (api-register, api-files,
// api-tasks, api-http, api-ctx; api-stack holds what they share). Host functions validate
// their arguments and the calling coroutine, then delegate to the Invocation (family rules) or
// the Scheduler (parking on async work).

import { LUA_REGISTRYINDEX, type LuaPtr } from './wasm.js';
import { installJson, pushValue } from './json.js';
import { metatable, pushHandle, TAG_CTX, type ApiHost, type ApiScope } from './api-stack.js';
import { toolRegister } from './api-register.js';
import { readFile, writeFile } from './api-files.js';
import { taskFunctions, taskMethods } from './api-tasks.js';
import { httpCall } from './api-http.js';
import { ctxMethods } from './api-ctx.js';

/** What installing the API gives the plugin: the way to hand a tool call its ctx. */
export interface InstalledApi {
  pushCtx(L: LuaPtr, id: number): void;
}

export function installApi(p: ApiHost, L: LuaPtr): InstalledApi {
  const s: ApiScope = { p, sb: p.sb, clmRef: 0, initialConfigRef: 0, ctxMeta: 0, taskMeta: 0 };
  const { sb } = s;
  const { m, mem } = sb;
  installJson(sb, L);

  // clm
  m._lua_createtable(L, 0, 12);
  sb.setFunction(L, 'tool_register', (L) => toolRegister(s, L));
  sb.setFunction(L, 'read_file', (L) => readFile(sb, L, p.files));
  sb.setFunction(L, 'write_file', (L) => writeFile(sb, L, p.files));
  for (const [name, f] of Object.entries(taskFunctions(s))) sb.setFunction(L, name, f);
  const cfg = p.configFor(null);
  if (cfg === undefined) m._lua_createtable(L, 0, 0);
  else pushValue(sb, L, cfg);
  m._lua_pushvalue(L, -1);
  s.initialConfigRef = m._luaL_ref(L, LUA_REGISTRYINDEX);
  m._lua_setfield(L, -2, mem.cstr('config'));
  m._lua_pushvalue(L, -1);
  s.clmRef = m._luaL_ref(L, LUA_REGISTRYINDEX);
  m._lua_setglobal(L, mem.cstr('clm'));

  // http
  m._lua_createtable(L, 0, 2);
  sb.setFunction(L, 'get', (L) => httpCall(s, L, 'GET'));
  sb.setFunction(L, 'post', (L) => httpCall(s, L, 'POST'));
  m._lua_setglobal(L, mem.cstr('http'));

  s.ctxMeta = metatable(sb, L, 'clm.ctx', ctxMethods(s));
  s.taskMeta = metatable(sb, L, 'clm.task', taskMethods(s));
  return { pushCtx: (L1, id) => pushHandle(sb, L1, TAG_CTX, id, s.ctxMeta) };
}
