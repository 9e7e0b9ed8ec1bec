// The plugin-facing API of clm-tool(5): the `clm` and `http` tables and the methods of ctx and
// task handles. Host functions validate their arguments and the calling coroutine, then
// delegate to the Invocation (family rules) or the Scheduler (parking on async work).

import { errnoText } from '../host/errno-text.js';
import { readRegularFileSync, writeRegularFileSync } from '../host/regular-file.js';
import {
  LUA_REGISTRYINDEX, LUA_TFUNCTION, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, LUA_TUSERDATA, TYPE_NAMES,
  type LuaPtr,
} from './wasm.js';
import { LuaError, type Sandbox } from './state.js';
import { DEFAULT_CALL_BUDGET_MS, HTTP_MAX_IN_FLIGHT, HTTP_MAX_PER_CALL, MEMORY_LIMIT, SLEEP_MAX_MS, WAIT_ANY_MAX } from './limits.js';
import { encodeValue, installJson, pushValue } from './json.js';
import { httpRequest } from './http.js';
import { Invocation, Task, type Waiter } from './invocation.js';
import type { Coroutine } from './scheduler.js';
import type { Plugin } from './plugin.js';

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

// Handles are full userdata [tag, id]; the tag keeps a task handle from passing as a ctx.
const TAG_CTX = 0x43545831;
const TAG_TASK = 0x5441534b;

export function installApi(p: Plugin, L: LuaPtr): void {
  const api = new Api(p);
  api.install(L);
}

class Api {
  private readonly sb: Sandbox;
  private ctxMeta = 0;
  private taskMeta = 0;

  constructor(private readonly p: Plugin) {
    this.sb = p.sb;
  }

  install(L: LuaPtr): void {
    const { m, mem } = this.sb;
    installJson(this.sb, L);

    // clm
    m._lua_createtable(L, 0, 12);
    this.sb.setFunction(L, 'tool_register', (L) => this.toolRegister(L));
    this.sb.setFunction(L, 'read_file', (L) => this.readFile(L));
    this.sb.setFunction(L, 'write_file', (L) => this.writeFile(L));
    this.sb.setFunction(L, 'sleep', (L) => this.sleep(L));
    this.sb.setFunction(L, 'spawn', (L) => this.spawn(L));
    this.sb.setFunction(L, 'wait_any', (L) => this.waitAny(L));
    this.sb.setFunction(L, 'await_all', (L) => this.awaitAll(L));
    this.sb.setFunction(L, 'try_all', (L) => this.tryAll(L));
    const cfg = this.p.configFor(null);
    if (cfg === undefined) m._lua_createtable(L, 0, 0);
    else pushValue(this.sb, L, cfg);
    m._lua_pushvalue(L, -1);
    this.p.initialConfigRef = m._luaL_ref(L, LUA_REGISTRYINDEX);
    m._lua_setfield(L, -2, mem.cstr('config'));
    m._lua_pushvalue(L, -1);
    this.p.clmRef = m._luaL_ref(L, LUA_REGISTRYINDEX);
    m._lua_setglobal(L, mem.cstr('clm'));

    // http
    m._lua_createtable(L, 0, 2);
    this.sb.setFunction(L, 'get', (L) => this.http(L, 'GET'));
    this.sb.setFunction(L, 'post', (L) => this.http(L, 'POST'));
    m._lua_setglobal(L, mem.cstr('http'));

    this.ctxMeta = this.metatable(L, 'clm.ctx', {
      complete: (L) => this.ctxComplete(L),
      fail: (L) => this.ctxFail(L),
      args_raw: (L) => this.ctxArgsRaw(L),
      log: (L) => this.ctxLog(L),
    });
    this.taskMeta = this.metatable(L, 'clm.task', {
      wait: (L) => this.taskWait(L),
      result: (L) => this.taskResult(L),
      cancel: (L) => this.taskCancel(L),
    });
    this.p.pushCtx = (L1, id) => this.pushHandle(L1, TAG_CTX, id, this.ctxMeta);
  }

  private metatable(L: LuaPtr, name: string, methods: Record<string, (L: LuaPtr) => number>): number {
    const { m, mem } = this.sb;
    m._lua_createtable(L, 0, 3);
    m._lua_createtable(L, 0, Object.keys(methods).length);
    for (const [k, f] of Object.entries(methods)) this.sb.setFunction(L, k, f);
    m._lua_setfield(L, -2, mem.cstr('__index'));
    mem.push(L, name);
    m._lua_setfield(L, -2, mem.cstr('__name'));
    m._lua_pushboolean(L, 0);
    m._lua_setfield(L, -2, mem.cstr('__metatable'));
    return m._luaL_ref(L, LUA_REGISTRYINDEX);
  }

  private pushHandle(L: LuaPtr, tag: number, id: number, meta: number): void {
    const { m } = this.sb;
    const ptr = m._lua_newuserdatauv(L, 8, 0);
    m.HEAPU32[ptr >> 2] = tag;
    m.HEAPU32[(ptr >> 2) + 1] = id;
    m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(meta));
    m._lua_setmetatable(L, -2);
  }

  private handleId(L: LuaPtr, idx: number, tag: number): number | null {
    const { m } = this.sb;
    if (m._lua_type(L, idx) !== LUA_TUSERDATA) return null;
    const ptr = m._lua_touserdata(L, idx);
    if (m.HEAPU32[ptr >> 2] !== tag) return null;
    return m.HEAPU32[(ptr >> 2) + 1];
  }

  // ---- argument helpers ----

  private str(L: LuaPtr, idx: number, what: string): string {
    const t = this.sb.m._lua_type(L, idx);
    if (t !== LUA_TSTRING && t !== LUA_TNUMBER) throw new LuaError(`${what} must be a string, got ${TYPE_NAMES[t] ?? 'no value'}`);
    return this.sb.mem.str(L, idx)!;
  }

  private bytes(L: LuaPtr, idx: number, what: string): Uint8Array {
    const t = this.sb.m._lua_type(L, idx);
    if (t !== LUA_TSTRING && t !== LUA_TNUMBER) throw new LuaError(`${what} must be a string, got ${TYPE_NAMES[t] ?? 'no value'}`);
    return this.sb.mem.bytes(L, idx)!;
  }

  private nilErr(L: LuaPtr, message: string): number {
    this.sb.m._lua_pushnil(L);
    this.sb.mem.push(L, message);
    return 2;
  }

  /** The calling coroutine and its tool call; errors at load time. */
  private invocationOf(L: LuaPtr, what: string): { co: Coroutine; inv: Invocation } {
    const co = this.p.scheduler.coroutineOf(L);
    if (!co || !(co.owner instanceof Invocation)) {
      throw new LuaError(`${what} may only be called from a tool invocation (invoke or a task), not at load time`);
    }
    return { co, inv: co.owner };
  }

  /** Same, restricted to the main coroutine (the only one that spawns, waits, reads and cancels). */
  private mainOf(L: LuaPtr, what: string): { co: Coroutine; inv: Invocation } {
    const r = this.invocationOf(L, what);
    r.inv.requireMain(r.co, what);
    return r;
  }

  private ctxOf(L: LuaPtr, what: string): Invocation {
    const id = this.handleId(L, 1, TAG_CTX);
    if (id === null) throw new LuaError(`${what}: expected a ctx (call it as ctx:${what.split(':')[1] ?? ''}(...))`);
    const inv = this.p.ctxHandles.get(id);
    if (!inv) throw new LuaError(`${what}: this ctx belongs to a tool call that has ended`);
    return inv;
  }

  private taskOf(L: LuaPtr, idx: number, inv: Invocation, what: string): Task {
    const id = this.handleId(L, idx, TAG_TASK);
    if (id === null) throw new LuaError(`${what}: expected a task handle`);
    const t = this.p.taskHandles.get(id);
    if (!t || t.inv !== inv) throw new LuaError(`${what}: the task does not belong to this tool call`);
    return t;
  }

  private taskList(L: LuaPtr, inv: Invocation, what: string, unique: boolean, max: number): Task[] {
    const { m } = this.sb;
    if (m._lua_type(L, 1) !== LUA_TTABLE) throw new LuaError(`${what}: expected an array of tasks`);
    const n = m._lua_rawlen(L, 1);
    if (n > max) throw new LuaError(`${what}: at most ${max} tasks may be waited on at once (got ${n})`);
    const list: Task[] = [];
    for (let i = 1; i <= n; i++) {
      m._lua_rawgeti(L, 1, BigInt(i));
      const t = this.taskOf(L, -1, inv, `${what} (element ${i})`);
      m._lua_settop(L, -2);
      if (unique && list.includes(t)) throw new LuaError(`${what}: task at index ${i} appears more than once`);
      list.push(t);
    }
    return list;
  }

  // ---- clm ----

  private toolRegister(L: LuaPtr): number {
    const { m, mem } = this.sb;
    const p = this.p;
    const co = p.scheduler.coroutineOf(L);
    if (!p.staged || !co || co.owner instanceof Invocation) throw new LuaError('clm.tool_register may only be called at load time');
    const name = this.str(L, 1, 'clm.tool_register: name');
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
    if (st === LUA_TTABLE) parameters = encodeValue(this.sb, L, -1, { schema: true });
    else if (st !== LUA_TNIL) throw new LuaError(`clm.tool_register('${name}'): 'params_schema' must be a table`);
    m._lua_settop(L, 2);

    let timeoutMs: number | null = null;
    const tt = field('timeout_ms');
    if (tt === LUA_TNUMBER) {
      const v = m._lua_tonumberx(L, -1, 0);
      if (!(v >= 0) || !Number.isFinite(v)) throw new LuaError(`clm.tool_register('${name}'): 'timeout_ms' must be a positive number of milliseconds`);
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
    p.stage({ name, invokeRef, cpuMs: timeoutMs ?? DEFAULT_CALL_BUDGET_MS, info: { plugin: p.index, name, description, parameters, timeoutMs, noPrompt, hidden } });

    // clm.config keyed by tool name when the file name has no entry (and the plugin has not
    // replaced the table it was given).
    const byTool = p.configFor(name);
    if (p.configFor(null) === undefined && byTool !== undefined) {
      m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(p.clmRef));
      m._lua_getfield(L, -1, mem.cstr('config'));
      m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(p.initialConfigRef));
      if (m._lua_rawequal(L, -1, -2)) {
        m._lua_settop(L, -3);
        pushValue(this.sb, L, byTool);
        m._lua_setfield(L, -2, mem.cstr('config'));
      }
    }
    return 0;
  }

  private readFile(L: LuaPtr): number {
    const path = this.str(L, 1, 'clm.read_file: path');
    let data: Uint8Array;
    try {
      data = readRegularFileSync(path, MEMORY_LIMIT);
    } catch (e) {
      return this.nilErr(L, (e as NodeJS.ErrnoException).code === 'EFBIG' || (e as NodeJS.ErrnoException).code === 'ENOTREG' ? `${path}: ${(e as Error).message}` : errnoText(e));
    }
    this.sb.mem.push(L, data);
    return 1;
  }

  private writeFile(L: LuaPtr): number {
    const path = this.str(L, 1, 'clm.write_file: path');
    const content = this.bytes(L, 2, 'clm.write_file: content');
    try {
      writeRegularFileSync(path, content);
    } catch (e) {
      return this.nilErr(L, errnoText(e));
    }
    this.sb.m._lua_pushboolean(L, 1);
    return 1;
  }

  private sleep(L: LuaPtr): number {
    const { co } = this.invocationOf(L, 'clm.sleep');
    const { m } = this.sb;
    if (m._lua_type(L, 1) !== LUA_TNUMBER) throw new LuaError('clm.sleep: ms must be a number');
    const raw = Math.floor(m._lua_tonumberx(L, 1, 0));
    const ms = Number.isNaN(raw) ? 0 : Math.min(SLEEP_MAX_MS, Math.max(0, raw));
    return this.p.scheduler.park(L, co, (done) => {
      const timer = setTimeout(() => done(() => 0), ms);
      return () => clearTimeout(timer);
    });
  }

  private spawn(L: LuaPtr): number {
    const { inv } = this.mainOf(L, 'clm.spawn');
    const { m } = this.sb;
    if (m._lua_type(L, 1) !== LUA_TFUNCTION) throw new LuaError('clm.spawn: expected a function');
    if (inv.reported) throw new LuaError('clm.spawn: the tool call has already completed');
    m._lua_settop(L, 1);
    // Runs inside this host call, so a memory error surfaces as a Lua error here.
    const L1 = m._lua_newthread(L);
    const ref = m._luaL_ref(L, LUA_REGISTRYINDEX);
    this.sb.hook(L1);
    m._lua_pushvalue(L, 1);
    m._lua_xmove(L, L1, 1);
    const co = this.p.scheduler.adopt(L1, ref, inv);
    const id = this.p.nextHandleId();
    const task = new Task(id, inv, co);
    inv.addTask(task);
    this.p.taskHandles.set(id, task);
    this.pushHandle(L, TAG_TASK, id, this.taskMeta);
    this.p.scheduler.later(co); // never before clm.spawn returns
    return 1;
  }

  private waitAny(L: LuaPtr): number {
    const { co, inv } = this.mainOf(L, 'clm.wait_any');
    const { m } = this.sb;
    const list = this.taskList(L, inv, 'clm.wait_any', true, WAIT_ANY_MAX);
    if (list.length === 0) throw new LuaError('clm.wait_any: no tasks given');
    let timeout: number | null = null;
    const tt = m._lua_type(L, 2);
    if (tt === LUA_TNUMBER) timeout = Math.max(0, m._lua_tonumberx(L, 2, 0));
    else if (tt !== LUA_TNIL && tt !== -1) throw new LuaError('clm.wait_any: timeout_ms must be a number');
    let timedOut = timeout === 0;
    let timer: NodeJS.Timeout | null = null;
    const w: Waiter = {
      ready: () => timedOut || list.some((t) => t.terminal),
      push: (L) => {
        const i = list.findIndex((t) => t.terminal);
        if (i < 0) return this.nilErr(L, 'timeout');
        m._lua_pushinteger(L, BigInt(i + 1));
        return 1;
      },
      dispose: () => { if (timer) clearTimeout(timer); timer = null; },
    };
    if (!w.ready() && timeout !== null) {
      timer = setTimeout(() => { timedOut = true; timer = null; inv.poke(); }, timeout);
    }
    return inv.wait(L, co, w);
  }

  private awaitAll(L: LuaPtr): number {
    const { co, inv } = this.mainOf(L, 'clm.await_all');
    const { m } = this.sb;
    const list = this.taskList(L, inv, 'clm.await_all', false, Infinity);
    return inv.wait(L, co, {
      ready: () => list.every((t) => t.terminal),
      push: (L) => {
        m._lua_createtable(L, list.length, 0);
        list.forEach((t, i) => {
          inv.pushOutcome(L, t);
          m._lua_rawseti(L, -2, BigInt(i + 1));
        });
        return 1;
      },
    });
  }

  private tryAll(L: LuaPtr): number {
    const { co, inv } = this.mainOf(L, 'clm.try_all');
    const { m } = this.sb;
    const list = this.taskList(L, inv, 'clm.try_all', false, Infinity);
    const failed = () => list.find((t) => t.state === 'failed' || t.state === 'cancelled');
    return inv.wait(L, co, {
      ready: () => failed() !== undefined || list.every((t) => t.state === 'ok'),
      push: (L) => {
        const bad = failed();
        if (bad) {
          for (const t of list) if (!t.terminal) inv.cancelTask(t, 'task cancelled: another task in clm.try_all failed');
          // try_all answered for the whole set: every failure in it counts as seen, not just the first.
          for (const t of list) if (t.state === 'failed') t.observed = true;
          return this.nilErr(L, bad.error);
        }
        m._lua_createtable(L, list.length, 0);
        list.forEach((t, i) => {
          inv.pushValueOf(L, t);
          m._lua_rawseti(L, -2, BigInt(i + 1));
        });
        return 1;
      },
    });
  }

  // ---- http ----

  private http(L: LuaPtr, method: 'GET' | 'POST'): number {
    const what = method === 'GET' ? 'http.get' : 'http.post';
    const { co, inv } = this.invocationOf(L, what);
    const { m, mem } = this.sb;
    const url = this.str(L, 1, `${what}: url`);
    let body: Uint8Array | undefined;
    let hidx = 2;
    if (method === 'POST') {
      body = this.bytes(L, 2, `${what}: body`);
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
    if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') return this.nilErr(L, `${what}: only http and https URLs are allowed (got ${scheme}:)`);
    // Over a limit the request fails (nil, err) rather than queuing, as clm-tool(5) says.
    if (this.p.httpInFlight >= HTTP_MAX_IN_FLIGHT) return this.nilErr(L, `${what}: too many requests in flight (at most ${HTTP_MAX_IN_FLIGHT} per plugin)`);
    if (inv.httpTotal >= HTTP_MAX_PER_CALL) return this.nilErr(L, `${what}: request limit exceeded (at most ${HTTP_MAX_PER_CALL} per tool call)`);
    this.p.scheduler.requireYieldable(L);
    inv.httpTotal++;
    this.p.httpInFlight++;
    return this.p.scheduler.park(L, co, (done) => {
      const ac = new AbortController();
      void httpRequest({ method, url, headers, body, signal: ac.signal }).then((res) => {
        this.p.httpInFlight--;
        done((L) => {
          if ('error' in res) return this.nilErr(L, res.error);
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

  // ---- ctx ----

  private ctxComplete(L: LuaPtr): number {
    const inv = this.ctxOf(L, 'ctx:complete');
    const co = this.p.scheduler.coroutineOf(L);
    inv.requireMain(co, 'ctx:complete');
    const t = this.sb.m._lua_type(L, 2);
    if (t !== LUA_TSTRING && t !== LUA_TNUMBER) throw new LuaError(`ctx:complete: result must be a string, got ${TYPE_NAMES[t] ?? 'no value'}`);
    inv.complete(co, this.sb.mem.text(L, 2)!);
    return 0;
  }

  private ctxFail(L: LuaPtr): number {
    const inv = this.ctxOf(L, 'ctx:fail');
    const co = this.p.scheduler.coroutineOf(L);
    inv.requireMain(co, 'ctx:fail');
    const t = this.sb.m._lua_type(L, 2);
    const msg = t === LUA_TSTRING || t === LUA_TNUMBER ? this.sb.mem.str(L, 2)! : t <= LUA_TNIL ? 'failed' : this.sb.errorText(L, 2);
    inv.fail(co, msg);
    return 0;
  }

  private ctxArgsRaw(L: LuaPtr): number {
    const inv = this.ctxOf(L, 'ctx:args_raw');
    this.sb.mem.push(L, inv.argsRaw);
    return 1;
  }

  private ctxLog(L: LuaPtr): number {
    if (!this.p.logEnabled) return 0; // free when CLM_DEBUG_LOG is unset
    const inv = this.ctxOf(L, 'ctx:log');
    const t = this.sb.m._lua_type(L, 2);
    const msg = t === LUA_TSTRING || t === LUA_TNUMBER ? this.sb.mem.str(L, 2)! : this.sb.errorText(L, 2);
    this.p.log(`lua plugin ${inv.tool.name}: ${msg}`);
    return 0;
  }

  // ---- task handles ----

  private taskArg(L: LuaPtr, what: string): { co: Coroutine; inv: Invocation; task: Task } {
    const { co, inv } = this.mainOf(L, what);
    return { co, inv, task: this.taskOf(L, 1, inv, what) };
  }

  private taskWait(L: LuaPtr): number {
    const { co, inv, task } = this.taskArg(L, 'task:wait');
    return inv.wait(L, co, {
      ready: () => task.terminal,
      push: (L) => { this.sb.m._lua_pushboolean(L, 1); return 1; },
    });
  }

  private taskResult(L: LuaPtr): number {
    const { inv, task } = this.taskArg(L, 'task:result');
    if (!task.terminal) {
      this.sb.m._lua_pushnil(L);
      return 1;
    }
    inv.pushOutcome(L, task);
    return 1;
  }

  private taskCancel(L: LuaPtr): number {
    const { inv, task } = this.taskArg(L, 'task:cancel');
    const t = this.sb.m._lua_type(L, 2);
    const reason = t === LUA_TSTRING || t === LUA_TNUMBER ? this.sb.mem.str(L, 2)! : 'task cancelled';
    this.sb.m._lua_pushboolean(L, inv.cancelTask(task, reason) ? 1 : 0);
    return 1;
  }
}

