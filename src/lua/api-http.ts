// http.get and http.post: from a tool call only, within the per-plugin and per-call limits;
// the coroutine parks until the answer (`{status, body}`) or `nil, err`.

import { LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, type LuaPtr } from './wasm.js';
import { LuaError } from './state.js';
import { HTTP_MAX_IN_FLIGHT, HTTP_MAX_PER_CALL } from './limits.js';
import { httpRequest } from './http.js';
import { bytesArg, invocationOf, nilErr, strArg, type ApiScope } from './api-stack.js';

export function httpCall(s: ApiScope, L: LuaPtr, method: 'GET' | 'POST'): number {
  const { p, sb } = s;
  const what = method === 'GET' ? 'http.get' : 'http.post';
  const { co, inv } = invocationOf(p, L, what);
  inv.requireOpen(what);
  const { m, mem } = sb;
  const url = strArg(sb, L, 1, `${what}: url`);
  let body: Uint8Array | undefined;
  let hidx = 2;
  if (method === 'POST') {
    body = bytesArg(sb, L, 2, `${what}: body`);
    hidx = 3;
  }
  const headers: Record<string, string> = {};
  const lower = new Set<string>();
  const ht = m._lua_type(L, hidx);
  if (ht === LUA_TTABLE) {
    m._lua_settop(L, hidx);
    m._lua_pushnil(L);
    while (m._lua_next(L, hidx) !== 0) {
      const vt = m._lua_type(L, -1);
      if (m._lua_type(L, -2) !== LUA_TSTRING || (vt !== LUA_TSTRING && vt !== LUA_TNUMBER)) {
        throw new LuaError(`${what}: headers must map strings to strings`);
      }
      const k = mem.str(L, -2)!;
      headers[k] = mem.str(L, -1)!;
      lower.add(k.toLowerCase());
      m._lua_settop(L, -2);
    }
  } else if (ht !== LUA_TNIL && ht !== -1) {
    throw new LuaError(`${what}: headers must be a table`);
  }
  if (method === 'POST' && !lower.has('content-type')) headers['Content-Type'] = 'application/json';
  if (!lower.has('user-agent')) headers['User-Agent'] = `clm (${inv.tool.name})`;
  // fetch also speaks data: (and may learn file:): plugins get the network, nothing else.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https')
    return nilErr(sb, L, `${what}: only http and https URLs are allowed (got ${scheme}:)`);
  // Over a limit the request fails (nil, err) rather than queuing, as clm-tool(5) says.
  if (p.httpInFlight >= HTTP_MAX_IN_FLIGHT)
    return nilErr(sb, L, `${what}: too many requests in flight (at most ${HTTP_MAX_IN_FLIGHT} per plugin)`);
  if (inv.httpTotal >= HTTP_MAX_PER_CALL)
    return nilErr(sb, L, `${what}: request limit exceeded (at most ${HTTP_MAX_PER_CALL} per tool call)`);
  p.scheduler.requireYieldable(L);
  inv.httpTotal++;
  p.httpInFlight++;
  return p.scheduler.park(L, co, what, (done) => {
    const ac = new AbortController();
    void httpRequest({ method, url, headers, body, signal: ac.signal }, what).then((res) => {
      p.httpInFlight--;
      done((L) => {
        if ('error' in res) return nilErr(sb, L, res.error);
        m._lua_createtable(L, 0, 2);
        m._lua_pushinteger(L, BigInt(res.status));
        m._lua_setfield(L, -2, mem.cstr('status'));
        mem.push(L, res.body);
        m._lua_setfield(L, -2, mem.cstr('body'));
        return 1;
      });
    });
    return () => ac.abort();
  });
}
