// The Lua host worker's supervisor and watchdog, on the main thread: discovers plugin files,
// runs them in the worker, turns their tools into ToolDefs, and watches the worker. The count hook cannot stop a
// single runaway C call (a pathological string.find), so when the worker has been inside one
// resume for longer than the watchdog limit — in wall time and in the process's CPU time, so a
// loaded machine that starves the worker does not pass for a runaway — the main thread terminates it, fails that call,
// fails the other in-flight calls with a retryable error, and starts a fresh worker that loads
// the plugins again. Nothing here blocks the main event loop.

import { Worker } from 'node:worker_threads';
import type { ToolDef, ToolInvocation } from '../core/types.js';
import type { SandboxPolicy } from '../sandbox/policy.js';
import { discoverPlugins } from './discovery.js';
import { workerLocation } from './paths.js';
import { DEFAULT_CALL_BUDGET_MS, DEFAULT_WATCHDOG_MS, MAX_RUNAWAYS } from './limits.js';
import {
  SAB_BYTES,
  W_CALL,
  W_INSIDE,
  W_PLUGIN,
  W_SINCE_F64,
  wallNow,
  type LoadError,
  type PluginSource,
  type ToMain,
  type ToolInfo,
  type ToWorker,
} from './protocol.js';

export type { LoadError } from './protocol.js';

export interface LoadOptions {
  /** Plugin directories, loaded in this order (e.g. the plugin dir, then agents/<agent>/). */
  dirs: string[];
  /** Names plugins may not take (builtin and MCP tools). */
  reservedNames?: string[];
  /** The `tools` table of config.lua: clm.config is the entry keyed by file name, else by tool name. */
  toolsConfig?: Record<string, unknown>;
  /** Debug log sink (CLM_DEBUG_LOG); absent ⇒ ctx:log is free. */
  log?: (line: string) => void;
  /** Milliseconds one Lua entry may run without yielding (wall and CPU time) before the worker is restarted. */
  watchdogMs?: number;
  /** The process CPU clock (ms) the watchdog reads; a stand-in lets a test play a starved worker. */
  cpuClock?: () => number;
  /** The sandbox policy clm.read_file / clm.write_file obey; absent: unconfined. */
  sandbox?: SandboxPolicy;
}

export interface PluginHost {
  /** Every registered tool, in load order. */
  readonly tools: ToolDef[];
  /** Plugins that failed to load, with messages naming them. */
  readonly errors: LoadError[];
  /** The plugin file that registered tool `name` (`/tools`), or undefined. */
  fileOf(name: string): string | undefined;
  /** Cancel everything (pending HTTP and sleeps included) and stop the worker. */
  close(): Promise<void>;
}

/** Discover and load plugins. Never throws for plugin problems: they are in `errors`. */
export async function loadPlugins(opts: LoadOptions): Promise<PluginHost> {
  const found = await discoverPlugins(opts.dirs);
  const host = new LuaHost(opts, found.plugins, found.errors);
  if (found.plugins.length) await host.start();
  return host;
}

interface Pending {
  inv: ToolInvocation;
  plugin: number;
  onAbort: () => void;
}

/** CPU time of the whole process (every thread), in ms. */
const processCpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const RETRYABLE = 'aborted: the plugin host was restarted (another plugin call ran away); this call may be retried';
const TICK_MS = 100;
const CLOSE_GRACE_MS = 1000;
/** Give up after this many worker deaths in a row without a successful load. */
const MAX_FAILED_STARTS = 3;

class LuaHost implements PluginHost {
  readonly tools: ToolDef[] = [];
  readonly errors: LoadError[];
  // The watchdog's view of the worker; fresh per worker (a terminated one may still write).
  private i32: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private f64: Float64Array<ArrayBufferLike> = new Float64Array(0);
  private readonly watchdogMs: number;
  private worker: Worker | null = null;
  private outbox: ToWorker[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private loading = false;
  private firstLoad: { resolve: () => void } | null = null;
  private loadedOnce = false;
  private readonly excluded = new Set<number>();
  private readonly runaways = new Map<number, number>();
  private failedStarts = 0;
  private dead: string | null = null;
  private closed = false;
  private closeWaiter: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  // The resume being watched: its stamp, and the process CPU clock when the watchdog first saw it.
  private stretch: { since: number; cpuMs: number } | null = null;
  private readonly cpuClock: () => number;

  constructor(
    private readonly opts: LoadOptions,
    private readonly sources: PluginSource[],
    errors: LoadError[],
  ) {
    this.errors = [...errors];
    this.watchdogMs = opts.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    this.cpuClock = opts.cpuClock ?? processCpuMs;
    for (const e of errors) this.log(`lua plugin ${e.plugin}: ${e.message}`);
  }

  start(): Promise<void> {
    return new Promise((resolve) => {
      this.firstLoad = { resolve };
      this.spawn();
    });
  }

  private log(line: string): void {
    this.opts.log?.(line);
  }

  // ---- worker lifecycle ----

  private spawn(): void {
    const sab = new SharedArrayBuffer(SAB_BYTES);
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
    const loc = workerLocation();
    const w = new Worker(loc.script, {
      eval: loc.eval ?? false,
      execArgv: [],
      // Lua memory lives in wasm (capped per plugin); this bounds the worker's own JS heap.
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    this.worker = w;
    this.loading = true;
    w.on('message', (batch: ToMain[]) => {
      if (this.worker === w) for (const m of batch) this.onMessage(m);
    });
    w.on('error', (e) => {
      if (this.worker === w) this.workerDied(`plugin host failed: ${e.message}`);
    });
    w.on('exit', (code) => {
      if (this.worker === w) this.workerDied(`plugin host exited unexpectedly (code ${code})`);
      this.closeWaiter?.();
    });
    this.send({
      t: 'init',
      sab,
      plugins: this.sources.filter((s) => !this.excluded.has(s.index)),
      reserved: this.opts.reservedNames ?? [],
      toolsConfig: sanitizeConfig(this.opts.toolsConfig),
      log: this.opts.log !== undefined,
      sandbox: this.opts.sandbox ?? null,
    });
    this.timer ??= setInterval(() => this.watch(), TICK_MS);
    this.timer.unref();
    this.updateRef();
  }

  private send(m: ToWorker): void {
    if (this.outbox.length === 0) queueMicrotask(() => this.flush());
    this.outbox.push(m);
  }

  private flush(): void {
    const batch = this.outbox;
    this.outbox = [];
    if (batch.length && this.worker) this.worker.postMessage(batch);
  }

  /** Keep the process alive only while something waits on the worker. */
  private updateRef(): void {
    const w = this.worker;
    if (!w) return;
    if (this.loading || this.pending.size > 0 || this.closeWaiter) w.ref();
    else w.unref();
  }

  private onMessage(m: ToMain): void {
    switch (m.t) {
      case 'loaded':
        this.loaded(m.tools, m.errors);
        return;
      case 'done': {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        p.inv.signal.removeEventListener('abort', p.onAbort);
        if (m.ok) p.inv.complete(m.out);
        else p.inv.fail(m.error);
        this.updateRef();
        return;
      }
      case 'log':
        this.log(m.line);
        return;
      case 'closed':
        this.closeWaiter?.();
        return;
    }
  }

  private readonly files = new Map<string, string>();

  fileOf(name: string): string | undefined {
    return this.files.get(name);
  }

  private loaded(infos: ToolInfo[], errors: LoadError[]): void {
    this.loading = false;
    this.failedStarts = 0;
    for (const e of errors) this.log(`lua plugin ${e.plugin}: ${e.message}`);
    if (!this.loadedOnce) {
      this.loadedOnce = true;
      this.errors.push(...errors);
      for (const info of infos) {
        this.tools.push(this.toolDef(info));
        const file = this.sources.find((s) => s.index === info.plugin)?.file;
        if (file) this.files.set(info.name, file);
      }
      this.firstLoad?.resolve();
      this.firstLoad = null;
    }
    this.updateRef();
  }

  /** The worker is gone without our asking: fail what it held, then try again (a few times). */
  private workerDied(reason: string): void {
    this.worker = null;
    this.log(`lua: ${reason}`);
    this.failAll(`${reason}; this call may be retried`);
    this.failedStarts++;
    if (this.closed) return;
    if (this.failedStarts >= MAX_FAILED_STARTS) {
      this.giveUp(reason);
      return;
    }
    this.spawn();
  }

  private giveUp(reason: string): void {
    this.dead = reason;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!this.loadedOnce) {
      this.loadedOnce = true;
      for (const s of this.sources) {
        if (!this.excluded.has(s.index)) this.errors.push({ plugin: s.name, file: s.file, message: `not loaded: ${reason}` });
      }
      this.firstLoad?.resolve();
      this.firstLoad = null;
    }
  }

  private failAll(message: string): void {
    for (const [id, p] of [...this.pending]) {
      this.pending.delete(id);
      p.inv.signal.removeEventListener('abort', p.onAbort);
      p.inv.fail(message);
    }
  }

  // ---- the watchdog ----

  private watch(): void {
    const w = this.worker;
    if (!w || Atomics.load(this.i32, W_INSIDE) !== 1) {
      this.stretch = null;
      return;
    }
    const since = this.f64[W_SINCE_F64]!;
    const now = wallNow();
    const cpu = this.cpuClock();
    if (this.stretch?.since !== since) this.stretch = { since, cpuMs: cpu };
    const elapsed = now - since;
    // The process's CPU time (every thread: at least the worker's) since the watchdog first saw
    // the stretch, at most one tick after it began.
    const used = cpu - this.stretch.cpuMs;
    if (elapsed < this.watchdogMs || used < this.watchdogMs) return;
    const plugin = this.i32[W_PLUGIN];
    const call = this.i32[W_CALL];
    if (Atomics.load(this.i32, W_INSIDE) !== 1) return; // it just came back
    this.runaway(w, plugin, call, elapsed);
  }

  private runaway(w: Worker, plugin: number, call: number, elapsed: number): void {
    this.worker = null;
    void w.terminate();
    const src = this.sources.find((s) => s.index === plugin);
    const name = src?.name ?? `#${plugin}`;
    const what = `a single Lua library call (e.g. string.find or string.match with a pathological pattern) ran for ${(elapsed / 1000).toFixed(1)} s without yielding`;
    const count = (this.runaways.get(plugin) ?? 0) + 1;
    this.runaways.set(plugin, count);
    this.log(`lua plugin ${name}: ${what}; restarting the plugin host`);
    if (call === -1) {
      this.excluded.add(plugin);
      if (src && !this.loadedOnce) this.errors.push({ plugin: name, file: src.file, message: `load aborted: ${what}` });
    } else if (count >= MAX_RUNAWAYS) {
      this.excluded.add(plugin);
      this.log(`lua plugin ${name}: disabled after ${count} runaway calls`);
    }
    const culprit = this.pending.get(call);
    if (culprit) {
      this.pending.delete(call);
      culprit.inv.signal.removeEventListener('abort', culprit.onAbort);
      culprit.inv.fail(`plugin ${name}: ${what}; the call was aborted`);
    }
    this.failAll(RETRYABLE);
    if (!this.closed) this.spawn();
  }

  // ---- tools ----

  private toolDef(info: ToolInfo): ToolDef {
    const def: ToolDef = {
      name: info.name,
      description: info.description,
      invoke: (inv) => this.call(info, inv),
    };
    if (info.parameters !== null) def.parameters = JSON.parse(info.parameters) as object;
    // The call's deadline bounds wall time (waiting on http.*, clm.sleep, tasks) as well as CPU.
    def.timeoutMs = info.timeoutMs ?? DEFAULT_CALL_BUDGET_MS;
    if (info.noPrompt) def.noPrompt = true;
    if (info.hidden) def.hidden = true;
    return def;
  }

  private call(info: ToolInfo, inv: ToolInvocation): void {
    if (inv.done) return;
    if (this.closed) {
      inv.fail('plugin host is closed');
      return;
    }
    if (this.dead) {
      inv.fail(`plugin host unavailable: ${this.dead}`);
      return;
    }
    if (this.excluded.has(info.plugin)) {
      inv.fail(`tool '${info.name}' is disabled: its plugin ran away too often`);
      return;
    }
    if (inv.signal.aborted) {
      inv.fail(abortMessage(inv.signal));
      return;
    }
    const id = this.nextId++;
    // The worker answers a cancel with the reason and what the call was waiting on (`timed out
    // after 1500 ms (waiting in http.get)`): the agent gives a timed-out call a moment to report.
    const onAbort = () => {
      if (this.pending.has(id)) this.send({ t: 'cancel', id, reason: abortMessage(inv.signal) });
    };
    this.pending.set(id, { inv, plugin: info.plugin, onAbort });
    inv.signal.addEventListener('abort', onAbort, { once: true });
    this.send({ t: 'call', id, tool: info.name, args: inv.args });
    this.updateRef();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.failAll('plugin host closed');
    const w = this.worker;
    if (!w) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, CLOSE_GRACE_MS);
      this.closeWaiter = () => {
        clearTimeout(t);
        resolve();
      };
      this.updateRef();
      this.send({ t: 'close' });
    });
    this.worker = null;
    this.closeWaiter = null;
    await w.terminate();
  }
}

function abortMessage(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (typeof r === 'string' && r) return r;
  if (r instanceof Error && r.name !== 'AbortError' && r.message) return r.message;
  return 'cancelled';
}

/** Only JSON-shaped data crosses to the worker (config.lua may hold functions). */
function sanitizeConfig(cfg: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!cfg) return {};
  try {
    return JSON.parse(
      JSON.stringify(cfg, (_k, v: unknown) => (typeof v === 'function' || typeof v === 'bigint' ? undefined : v)),
    ) as Record<string, unknown>;
  } catch {
    return {};
  }
}
