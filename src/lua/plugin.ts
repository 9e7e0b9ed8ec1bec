// One plugin file: its sandboxed state, load-time run (500 ms budget, tools staged and
// committed only if the whole file runs), and the tool calls it serves.

import { LUA_OK, LUA_REGISTRYINDEX } from './wasm.js';
import { Sandbox } from './state.js';
import { Scheduler, type CoroutineOwner, type Watch } from './scheduler.js';
import { Invocation, type CallResult, type Task } from './invocation.js';
import type { FileGuard } from '../sandbox/file-guard.js';
import { installApi, type InstalledApi } from './api.js';
import { pushValue } from './json.js';
import type { ToolInfo } from './protocol.js';
import type { ToolReg } from './tool-reg.js';
import type { ApiHost } from './api-stack.js';
import { LOAD_BUDGET_MS, LOW_MEMORY_RESERVE } from './limits.js';

export const LOW_MEMORY_MESSAGE = 'plugin is low on memory, refusing to start a new invocation to avoid crashing';
export const MALFORMED_ARGS_MESSAGE = 'invalid tool arguments (malformed JSON)';
export const NON_OBJECT_ARGS_MESSAGE = 'invalid tool arguments (expected a JSON object)';

export interface PluginEnv {
  /** Tool names already taken (builtins, MCP, plugins loaded earlier); grows as plugins load. */
  taken: Set<string>;
  toolsConfig: Record<string, unknown>;
  logEnabled: boolean;
  log(line: string): void;
  watch: Watch | null;
  /** The sandbox's check of clm.read_file / clm.write_file; null: unconfined. */
  files: FileGuard | null;
}

export interface PluginSpec {
  index: number;
  name: string;
  file: string;
}

export class Plugin implements ApiHost {
  readonly index: number;
  readonly name: string;
  readonly file: string;
  readonly scheduler: Scheduler;
  readonly tools = new Map<string, ToolReg>();
  /** Tools registered by the running load; null outside load. */
  staged: ToolReg[] | null = null;
  httpInFlight = 0;
  readonly invocations = new Map<number, Invocation>();
  readonly ctxHandles = new Map<number, Invocation>();
  readonly taskHandles = new Map<number, Task>();
  private readonly api: InstalledApi;
  private handleCounter = 0;
  private loadFailed: ((msg: string) => void) | null = null;

  static async create(spec: PluginSpec, env: PluginEnv): Promise<Plugin> {
    return new Plugin(spec, env, await Sandbox.create());
  }

  private constructor(
    spec: PluginSpec,
    private readonly env: PluginEnv,
    readonly sb: Sandbox,
  ) {
    this.index = spec.index;
    this.name = spec.name;
    this.file = spec.file;
    this.scheduler = new Scheduler(sb, spec.index, env.watch, (msg) => this.crashed(msg));
    let api: InstalledApi | null = null;
    const err = sb.protect((L) => {
      api = installApi(this, L);
    });
    if (err || !api) throw new Error(`cannot install the plugin API: ${err}`);
    this.api = api;
  }

  /** The sandbox's check of the file API (null: unconfined). */
  get files(): FileGuard | null {
    return this.env.files;
  }

  get logEnabled(): boolean {
    return this.env.logEnabled;
  }

  log(line: string): void {
    if (this.env.logEnabled) this.env.log(line);
  }

  /** The tools-config entry for this plugin: by file name, or (given a tool name) by that. */
  configFor(toolName: string | null): unknown {
    const cfg = this.env.toolsConfig;
    const key = toolName ?? this.name;
    const v = Object.hasOwn(cfg, key) ? cfg[key] : undefined;
    return typeof v === 'object' && v !== null ? v : undefined; // only a (sub)table counts
  }

  isTaken(name: string): boolean {
    return this.env.taken.has(name) || (this.staged?.some((t) => t.name === name) ?? false);
  }

  stage(reg: ToolReg): void {
    this.staged?.push(reg);
  }

  nextHandleId(): number {
    return ++this.handleCounter;
  }

  /** Run the file's top-level code; resolves with the tools it registered. */
  load(source: Uint8Array): Promise<ToolInfo[]> {
    const { sb } = this;
    return new Promise<ToolInfo[]>((resolve, reject) => {
      this.staged = [];
      const fail = (msg: string) => {
        this.staged = null;
        this.loadFailed = null;
        reject(new Error(msg));
      };
      this.loadFailed = fail;
      const owner: CoroutineOwner = {
        budget: { used: 0, limit: LOAD_BUDGET_MS, resumes: 0 },
        watchId: -1,
        onReturn: (co) => {
          this.scheduler.release(co);
          const staged = this.staged ?? [];
          this.staged = null;
          this.loadFailed = null;
          for (const t of staged) {
            this.tools.set(t.name, t);
            this.env.taken.add(t.name);
          }
          resolve(staged.map((t) => t.info));
        },
        onError: (co, msg) => {
          this.scheduler.release(co);
          fail(msg);
        },
        onTimeout: () => fail(`plugin exceeded execution time budget (${LOAD_BUDGET_MS} ms at load)`),
      };
      const r = this.scheduler.create(owner, (L1, L) => {
        // Text only: precompiled bytecode is never accepted (5.4 does not verify it).
        if (sb.mem.loadText(L, source, `=${this.name}.lua`) !== LUA_OK) sb.m._lua_error(L);
        sb.m._lua_xmove(L, L1, 1);
        return 0;
      });
      if ('error' in r) {
        fail(r.error);
        return;
      }
      this.scheduler.resume(r.co, 0);
    });
  }

  /** Start one tool call; sink receives its result exactly once. */
  invoke(id: number, toolName: string, argsRaw: string, sink: (res: CallResult) => void): void {
    const { sb } = this;
    if (sb.broken) {
      sink({ ok: false, error: `plugin ${this.name} is out of service: ${sb.broken}` });
      return;
    }
    const tool = this.tools.get(toolName);
    if (!tool) {
      sink({ ok: false, error: `unknown tool '${toolName}'` });
      return;
    }
    if (sb.used + LOW_MEMORY_RESERVE > sb.limit) {
      sb.collect(); // garbage from earlier calls (a failed memory bomb) may be all that is left
      if (sb.used + LOW_MEMORY_RESERVE > sb.limit) {
        sink({ ok: false, error: LOW_MEMORY_MESSAGE });
        return;
      }
    }
    const raw = argsRaw.trim() === '' ? '{}' : argsRaw;
    let args: unknown;
    try {
      args = JSON.parse(raw);
    } catch {
      sink({ ok: false, error: MALFORMED_ARGS_MESSAGE });
      return;
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      sink({ ok: false, error: NON_OBJECT_ARGS_MESSAGE });
      return;
    }
    const inv = new Invocation(id, this, tool, raw, sink);
    const ctxId = this.nextHandleId();
    const r = this.scheduler.create(inv, (L1, L) => {
      const m = sb.m;
      m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(tool.invokeRef));
      m._lua_xmove(L, L1, 1);
      pushValue(sb, L1, args);
      this.api.pushCtx(L1, ctxId);
      return 2;
    });
    if ('error' in r) {
      sink({ ok: false, error: `cannot start the tool call: ${r.error}` });
      return;
    }
    inv.main = r.co;
    this.invocations.set(id, inv);
    this.ctxHandles.set(ctxId, inv);
    inv.ctxId = ctxId;
    this.scheduler.resume(r.co, r.nargs);
  }

  cancel(id: number, reason: string): void {
    this.invocations.get(id)?.cancel(reason);
  }

  endInvocation(inv: Invocation): void {
    this.invocations.delete(inv.id);
    this.ctxHandles.delete(inv.ctxId);
  }

  /** Teardown: every call's family is cancelled, pending HTTP and sleeps included. */
  close(reason: string): void {
    for (const inv of [...this.invocations.values()]) inv.cancel(reason);
  }

  /** Lua state bytes in use and their high-water mark. */
  memory(): { used: number; peak: number; limit: number } {
    return { used: this.sb.used, peak: this.sb.peak, limit: this.sb.limit };
  }

  private crashed(msg: string): void {
    this.loadFailed?.(`plugin crashed: ${msg}`);
    for (const inv of [...this.invocations.values()]) inv.cancel(`plugin ${this.name} crashed: ${msg}`);
  }
}
