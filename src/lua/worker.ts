// The Lua host worker: every plugin's wasm instance lives here, off the agent's event loop.
// Messages arrive and leave in batches (one postMessage per turn) to keep the per-call cost low.

import './quiet.js'; // first: before anything can print
import { parentPort } from 'node:worker_threads';
import { FileGuard } from '../sandbox/file-guard.js';
import { Plugin, type PluginEnv } from './plugin.js';
import type { Watch } from './scheduler.js';
import type { CallResult } from './invocation.js';
import {
  SAB_BYTES,
  W_CALL,
  W_INSIDE,
  W_PLUGIN,
  W_SINCE_F64,
  wallNow,
  type InitMessage,
  type LoadError,
  type ToMain,
  type ToolInfo,
  type ToWorker,
} from './protocol.js';

const port = parentPort;
if (!port) throw new Error('lua worker: must run as a worker thread');

let outbox: ToMain[] = [];
function send(msg: ToMain): void {
  if (outbox.length === 0) queueMicrotask(flush);
  outbox.push(msg);
}
function flush(): void {
  const batch = outbox;
  outbox = [];
  if (batch.length) port!.postMessage(batch);
}

/** Stamps "plugin k inside Lua since T" for the main thread's watchdog. */
class SabWatch implements Watch {
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  constructor(sab: SharedArrayBuffer) {
    if (sab.byteLength < SAB_BYTES) throw new Error('lua worker: watchdog buffer too small');
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
  }
  enter(plugin: number, call: number): void {
    // Results finished so far leave before Lua runs again: if this entry runs away and the
    // watchdog ends the worker, they are not lost with it.
    if (outbox.length) flush();
    this.f64[W_SINCE_F64] = wallNow();
    this.i32[W_PLUGIN] = plugin;
    this.i32[W_CALL] = call;
    Atomics.store(this.i32, W_INSIDE, 1);
  }
  leave(): void {
    Atomics.store(this.i32, W_INSIDE, 0);
  }
}

const owners = new Map<string, Plugin>();
const calls = new Map<number, Plugin>();
const plugins: Plugin[] = [];
let ready = false;
let closing = false;
const queued: ToWorker[] = [];

async function init(msg: InitMessage): Promise<void> {
  const env: PluginEnv = {
    taken: new Set(msg.reserved),
    toolsConfig: msg.toolsConfig,
    logEnabled: msg.log,
    log: (line) => send({ t: 'log', line }),
    watch: new SabWatch(msg.sab),
    files: msg.sandbox ? new FileGuard(msg.sandbox) : null,
  };
  const errors: LoadError[] = [];
  const tools: ToolInfo[] = [];
  // Instances are created in parallel; the files then run one by one in name order, so the
  // first plugin to claim a tool name keeps it, every time.
  const created = await Promise.all(
    msg.plugins.map((spec) =>
      Plugin.create({ index: spec.index, name: spec.name, file: spec.file }, env).then(
        (p) => ({ p }),
        (e: Error) => ({ e }),
      ),
    ),
  );
  for (let i = 0; i < msg.plugins.length; i++) {
    const spec = msg.plugins[i];
    const c = created[i];
    if ('e' in c) {
      errors.push({ plugin: spec.name, file: spec.file, message: c.e.message });
      continue;
    }
    try {
      const infos = await c.p.load(spec.source);
      if (infos.length === 0) continue; // nothing to serve: let the instance go
      plugins.push(c.p);
      for (const info of infos) {
        owners.set(info.name, c.p);
        tools.push(info);
      }
    } catch (e) {
      errors.push({ plugin: spec.name, file: spec.file, message: (e as Error).message });
    }
  }
  ready = true;
  send({ t: 'loaded', tools, errors });
  for (const m of queued.splice(0)) handle(m);
}

function call(id: number, tool: string, args: string): void {
  const p = owners.get(tool);
  if (!p) {
    send({ t: 'done', id, ok: false, error: `tool '${tool}' is not loaded (its plugin failed to load or was disabled)` });
    return;
  }
  calls.set(id, p);
  let answered = false;
  const sink = (res: CallResult) => {
    if (answered) return;
    answered = true;
    calls.delete(id);
    send(res.ok ? { t: 'done', id, ok: true, out: res.out } : { t: 'done', id, ok: false, error: res.error });
  };
  try {
    p.invoke(id, tool, args, sink);
  } catch (e) {
    // A bug or a dead instance must cost this call, not the worker.
    send({ t: 'log', line: `lua plugin ${p.name}: internal error: ${(e as Error).stack ?? String(e)}` });
    sink({ ok: false, error: `internal error in the plugin runtime: ${(e as Error).message}` });
  }
}

function handle(m: ToWorker): void {
  switch (m.t) {
    case 'init':
      void init(m);
      return;
    case 'call':
      if (!ready) {
        queued.push(m);
        return;
      }
      if (closing) {
        send({ t: 'done', id: m.id, ok: false, error: 'plugin host is shutting down' });
        return;
      }
      call(m.id, m.tool, m.args);
      return;
    case 'cancel': {
      if (!ready) {
        const i = queued.findIndex((q) => q.t === 'call' && q.id === m.id);
        if (i >= 0) queued.splice(i, 1);
        return;
      }
      calls.get(m.id)?.cancel(m.id, m.reason);
      return;
    }
    case 'close':
      closing = true;
      for (const p of plugins) p.close('plugin host shutting down');
      send({ t: 'closed' });
      return;
  }
}

port.on('message', (batch: ToWorker[]) => {
  for (const m of batch) handle(m);
});
