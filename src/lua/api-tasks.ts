// Concurrency inside one tool call: clm.sleep, clm.spawn, clm.wait_any, clm.await_all,
// clm.try_all, and the methods of task handles (wait, result, cancel).

import { LUA_REGISTRYINDEX, LUA_TFUNCTION, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, type LuaPtr } from './wasm.js';
import { LuaError } from './state.js';
import { SLEEP_MAX_MS, WAIT_ANY_MAX } from './limits.js';
import { Task, type Invocation, type Waiter } from './invocation.js';
import type { Coroutine } from './scheduler.js';
import { handleId, invocationOf, mainOf, nilErr, pushHandle, TAG_TASK, type ApiScope } from './api-stack.js';

export function taskFunctions(s: ApiScope): Record<string, (L: LuaPtr) => number> {
  return {
    sleep: (L) => sleep(s, L),
    spawn: (L) => spawn(s, L),
    wait_any: (L) => waitAny(s, L),
    await_all: (L) => awaitAll(s, L),
    try_all: (L) => tryAll(s, L),
  };
}

export function taskMethods(s: ApiScope): Record<string, (L: LuaPtr) => number> {
  return {
    wait: (L) => taskWait(s, L),
    result: (L) => taskResult(s, L),
    cancel: (L) => taskCancel(s, L),
  };
}

function taskOf(s: ApiScope, L: LuaPtr, idx: number, inv: Invocation, what: string): Task {
  const id = handleId(s.sb, L, idx, TAG_TASK);
  if (id === null) throw new LuaError(`${what}: expected a task handle`);
  const t = s.p.taskHandles.get(id);
  if (!t || t.inv !== inv) throw new LuaError(`${what}: the task does not belong to this tool call`);
  return t;
}

function taskList(s: ApiScope, L: LuaPtr, inv: Invocation, what: string, unique: boolean, max: number): Task[] {
  const { m } = s.sb;
  if (m._lua_type(L, 1) !== LUA_TTABLE) throw new LuaError(`${what}: expected an array of tasks`);
  const n = m._lua_rawlen(L, 1);
  if (n > max) throw new LuaError(`${what}: at most ${max} tasks may be waited on at once (got ${n})`);
  const list: Task[] = [];
  for (let i = 1; i <= n; i++) {
    m._lua_rawgeti(L, 1, BigInt(i));
    const t = taskOf(s, L, -1, inv, `${what} (element ${i})`);
    m._lua_settop(L, -2);
    if (unique && list.includes(t)) throw new LuaError(`${what}: task at index ${i} appears more than once`);
    list.push(t);
  }
  return list;
}

function sleep(s: ApiScope, L: LuaPtr): number {
  const { co, inv } = invocationOf(s.p, L, 'clm.sleep');
  inv.requireOpen('clm.sleep');
  const { m } = s.sb;
  if (m._lua_type(L, 1) !== LUA_TNUMBER) throw new LuaError('clm.sleep: ms must be a number');
  const raw = Math.floor(m._lua_tonumberx(L, 1, 0));
  const ms = Number.isNaN(raw) ? 0 : Math.min(SLEEP_MAX_MS, Math.max(0, raw));
  return s.p.scheduler.park(L, co, 'clm.sleep', (done) => {
    const timer = setTimeout(() => done(() => 0), ms);
    return () => clearTimeout(timer);
  });
}

function spawn(s: ApiScope, L: LuaPtr): number {
  const { p, sb } = s;
  const { inv } = mainOf(p, L, 'clm.spawn');
  const { m } = sb;
  if (m._lua_type(L, 1) !== LUA_TFUNCTION) throw new LuaError('clm.spawn: expected a function');
  if (inv.reported) throw new LuaError('clm.spawn: the tool call has already completed');
  m._lua_settop(L, 1);
  // Runs inside this host call, so a memory error surfaces as a Lua error here.
  const L1 = m._lua_newthread(L);
  const ref = m._luaL_ref(L, LUA_REGISTRYINDEX);
  sb.hook(L1);
  m._lua_pushvalue(L, 1);
  m._lua_xmove(L, L1, 1);
  const co = p.scheduler.adopt(L1, ref, inv);
  const id = p.nextHandleId();
  const task = new Task(id, inv, co);
  inv.addTask(task);
  p.taskHandles.set(id, task);
  pushHandle(sb, L, TAG_TASK, id, s.taskMeta);
  p.scheduler.later(co); // never before clm.spawn returns
  return 1;
}

function waitAny(s: ApiScope, L: LuaPtr): number {
  const { co, inv } = mainOf(s.p, L, 'clm.wait_any');
  const { m } = s.sb;
  const list = taskList(s, L, inv, 'clm.wait_any', true, WAIT_ANY_MAX);
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
      if (i < 0) return nilErr(s.sb, L, 'timeout');
      m._lua_pushinteger(L, BigInt(i + 1));
      return 1;
    },
    dispose: () => {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
  if (!w.ready() && timeout !== null) {
    timer = setTimeout(() => {
      timedOut = true;
      timer = null;
      inv.poke();
    }, timeout);
  }
  return inv.wait(L, co, 'clm.wait_any', w);
}

function awaitAll(s: ApiScope, L: LuaPtr): number {
  const { co, inv } = mainOf(s.p, L, 'clm.await_all');
  const { m } = s.sb;
  const list = taskList(s, L, inv, 'clm.await_all', false, Infinity);
  return inv.wait(L, co, 'clm.await_all', {
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

function tryAll(s: ApiScope, L: LuaPtr): number {
  const { co, inv } = mainOf(s.p, L, 'clm.try_all');
  const { m } = s.sb;
  const list = taskList(s, L, inv, 'clm.try_all', false, Infinity);
  const failed = () => list.find((t) => t.state === 'failed' || t.state === 'cancelled');
  return inv.wait(L, co, 'clm.try_all', {
    ready: () => failed() !== undefined || list.every((t) => t.state === 'ok'),
    push: (L) => {
      const bad = failed();
      if (bad) {
        for (const t of list) if (!t.terminal) inv.cancelTask(t, 'task cancelled: another task in clm.try_all failed');
        // try_all answered for the whole set: every failure in it counts as seen, not just the first.
        for (const t of list) if (t.state === 'failed') t.observed = true;
        return nilErr(s.sb, L, bad.error);
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

function taskArg(s: ApiScope, L: LuaPtr, what: string): { co: Coroutine; inv: Invocation; task: Task } {
  const { co, inv } = mainOf(s.p, L, what);
  return { co, inv, task: taskOf(s, L, 1, inv, what) };
}

function taskWait(s: ApiScope, L: LuaPtr): number {
  const { co, inv, task } = taskArg(s, L, 'task:wait');
  return inv.wait(L, co, 'task:wait', {
    ready: () => task.terminal,
    push: (L) => {
      s.sb.m._lua_pushboolean(L, 1);
      return 1;
    },
  });
}

function taskResult(s: ApiScope, L: LuaPtr): number {
  const { inv, task } = taskArg(s, L, 'task:result');
  if (!task.terminal) {
    s.sb.m._lua_pushnil(L);
    return 1;
  }
  inv.pushOutcome(L, task);
  return 1;
}

function taskCancel(s: ApiScope, L: LuaPtr): number {
  const { inv, task } = taskArg(s, L, 'task:cancel');
  const t = s.sb.m._lua_type(L, 2);
  const reason = t === LUA_TSTRING || t === LUA_TNUMBER ? s.sb.mem.str(L, 2)! : 'task cancelled';
  s.sb.m._lua_pushboolean(L, inv.cancelTask(task, reason) ? 1 : 0);
  return 1;
}
