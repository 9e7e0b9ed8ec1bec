// One configured MCP server: connecting (initialize + paginated tools/list), the ToolDefs it
// offers, tool calls, and the life cycle around them. A stdio server that dies after it was
// ready is respawned within a restart budget; its tools are withdrawn while it is down
// (onToolsChanged(name, [])) and offered again once it is back. Every async continuation
// checks the connection generation, so answers from a previous child or after close() are
// dropped rather than acted on.

import type { SpawnRequest, WrappedSpawn } from '../sandbox/backend.js';
import type { Client } from '@modelcontextprotocol/client';
import type { ToolDef, ToolInvocation } from '../core/types.js';
import type { McpServerSpec } from './config.js';
import type { OAuthContext } from './mcp-oauth.js';
import { withReadableCallResults } from './call-results.js';
import { callResultToText } from './content.js';
import {
  errorText,
  isAbort,
  isConnectionClosed,
  isMessageTooLarge,
  isReplyTooLarge,
  isTimeout,
  needsLoginText,
  spawnFailure,
} from './errors.js';
import { RestartBudget } from './restart-budget.js';
import { loadClientSdk } from './sdk.js';
import { buildToolDefs, type ListedTool } from './tool-defs.js';
import { coalesced } from './tool-sync.js';
import { createServerTransport, REPLY_TOO_LARGE_CODE, MAX_MESSAGE_BYTES, type ServerTransport } from './transport.js';

/** `needs-login`: an HTTP server that wants an OAuth login clm does not have (or that it no longer takes). */
export type McpServerState = 'connecting' | 'ready' | 'down' | 'failed' | 'needs-login' | 'closed';

export interface McpConnectionOptions {
  /** Debug log sink (CLM_DEBUG_LOG); receives server stderr and life-cycle events. */
  log?(line: string): void;
  /** User-visible status lines ("mcp: fs: 3 tools registered", failures, restarts). */
  onNotice?(text: string): void;
  /** The server's complete current tool set: replace its previous tools with these ([] = remove all). */
  onToolsChanged?(server: string, tools: ToolDef[]): void;
  /** Sent as clientInfo.version and in the HTTP User-Agent. */
  clientVersion?: string;
  /** Restart budget factory (tests); default 3 restarts, one more per 30 s. */
  restartBudget?: () => RestartBudget;
  /** The sandbox's wrapping of a stdio server's process, for servers with `sandbox = true`; throws when it cannot be had. */
  confine?(req: SpawnRequest): WrappedSpawn;
  /** Where OAuth logins of HTTP servers are kept (clm's state directory); without it a server that asks for one fails. */
  oauth?: OAuthContext;
}

/** Origin and path only: no credentials, query or fragment. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

const TOO_LARGE = `larger than ${MAX_MESSAGE_BYTES / (1024 * 1024)} MiB`;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Why the call was stopped: the engine's reason ("timed out after 500 ms", "cancelled by user"), else "cancelled". */
function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (typeof r === 'string' && r) return r;
  if (r instanceof Error && r.name !== 'AbortError' && r.message) return r.message;
  return 'cancelled';
}

export class McpConnection {
  readonly name: string;
  readonly spec: McpServerSpec;
  private _state: McpServerState = 'connecting';
  private _tools: ToolDef[] = [];
  private _lastError: string | null = null;
  /** Settles once, with the outcome of the first connection attempt. */
  readonly ready: Promise<void>;
  private settleReady: ((err?: Error) => void) | null;

  private client: Client | null = null;
  private handle: ServerTransport | null = null;
  /** Every server process not yet known to be gone: the current one and those being stopped. */
  private readonly handles = new Set<ServerTransport>();
  private generation = 0;
  private connectAbort: AbortController | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private readonly budget: RestartBudget;
  private closePromise: Promise<void> | null = null;
  /** The client whose server sent a message over the stdio limit (its connection is going down). */
  private tooLarge: Client | null = null;

  constructor(
    spec: McpServerSpec,
    private readonly opts: McpConnectionOptions = {},
  ) {
    this.name = spec.name;
    this.spec = spec;
    this.budget = opts.restartBudget?.() ?? new RestartBudget();
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.ready.catch(() => {}); // waiting on it is optional
    this.settleReady = (err) => {
      this.settleReady = null;
      if (err) reject(err);
      else resolve();
    };
  }

  get state(): McpServerState {
    return this._state;
  }

  /** Tools currently offered (empty unless ready). */
  get tools(): ToolDef[] {
    return this._tools;
  }

  /** Why the server is failed/down, or null. */
  get lastError(): string | null {
    return this._lastError;
  }

  /** pid of the running stdio child, else null (diagnostics, tests). */
  get pid(): number | null {
    return this.handle?.pid() ?? null;
  }

  start(): void {
    if (this.generation === 0) this.launch();
  }

  // Callbacks run inside SDK and child-process event handlers, where a throw would be
  // uncaught; they are isolated so a faulty callback cannot take the process down.
  private log(line: string): void {
    try {
      this.opts.log?.(`mcp ${this.name}: ${line}`);
    } catch {
      /* ignore */
    }
  }

  private notice(text: string): void {
    this.log(text);
    try {
      this.opts.onNotice?.(text);
    } catch (e) {
      this.log(`onNotice threw: ${errorText(e)}`);
    }
  }

  private emitTools(tools: ToolDef[]): void {
    try {
      this.opts.onToolsChanged?.(this.name, tools);
    } catch (e) {
      this.log(`onToolsChanged threw: ${errorText(e)}`);
    }
  }

  private launch(): void {
    this.connect().catch((e) => this.fail(this.generation, `connect failed (${errorText(e)})`));
  }

  private setTools(listed: readonly ListedTool[]): void {
    this._tools = buildToolDefs(
      this.name,
      listed,
      this.spec.timeoutMs,
      (tool, inv) => this.call(tool, inv),
      (tool, name) => this.log(`tool '${tool}' maps to ${name}, already taken by another tool; skipped`),
    );
    this.emitTools(this._tools);
  }

  private clearTools(): void {
    if (!this._tools.length) return;
    this._tools = [];
    this.emitTools([]);
  }

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this._state = 'connecting';
    let client: Client;
    let handle: ServerTransport;
    try {
      const { Client } = await loadClientSdk();
      client = new Client({ name: 'clm', version: this.opts.clientVersion ?? '0' }, { capabilities: {}, listMaxPages: 1000 });
      handle = await createServerTransport(this.spec, {
        log: this.opts.log,
        userAgent: `clm/${this.opts.clientVersion ?? '0'} (tool: mcp)`,
        confine: this.opts.confine,
        oauth: this.opts.oauth,
      });
    } catch (e) {
      this.fail(gen, `connect failed (${errorText(e)})`);
      return;
    }
    if (gen !== this.generation) return; // closed while the SDK loaded (nothing spawned yet)
    this.client = client;
    this.handle = handle;
    this.handles.add(handle);
    const abort = new AbortController();
    this.connectAbort = abort;
    client.onerror = (e) => {
      if (isMessageTooLarge(e)) this.tooLarge = client;
      this.log(`transport error: ${errorText(e)}`);
    };
    client.onclose = () => this.onClosed(gen);
    client.setNotificationHandler(
      'notifications/tools/list_changed',
      coalesced(() => this.refreshTools(gen)),
    );
    // Arguments and URL queries may carry secrets (clm.secrets values), so neither is logged.
    this.log(
      this.spec.transport === 'stdio'
        ? `starting ${this.spec.command[0]} (${this.spec.command.length - 1} args)`
        : `connecting to ${redactUrl(this.spec.url!)}`,
    );

    let phase = 'initialize';
    try {
      await client.connect(withReadableCallResults(handle.transport), { timeout: this.spec.timeoutMs, signal: abort.signal });
      if (gen !== this.generation) return;
      phase = 'tools/list';
      const { tools } = await client.listTools(undefined, { timeout: this.spec.timeoutMs, signal: abort.signal, cacheMode: 'refresh' });
      if (gen !== this.generation) return;
      this.connectAbort = null;
      this._state = 'ready';
      this._lastError = null;
      this.setTools(tools);
      const n = this._tools.length;
      this.notice(`mcp: ${this.name}: ${n} tool${n === 1 ? '' : 's'} registered`);
      this.settleReady?.();
    } catch (e) {
      if (gen !== this.generation) return; // closed or superseded meanwhile
      const login = needsLoginText(e);
      if (login) return this.fail(gen, login, 'needs-login');
      const spawn = this.spec.transport === 'stdio' ? spawnFailure(e, this.spec.command[0]!) : null;
      let why: string;
      if (spawn) why = `failed to start (${spawn})`;
      else if (this.tooLarge === client) why = `connect failed (its answer to ${phase} was ${TOO_LARGE})`;
      else if (isTimeout(e)) why = `connect failed (no answer to ${phase} within ${this.spec.timeoutMs} ms)`;
      else if (isConnectionClosed(e)) why = `connect failed (${await this.closedText(handle, phase)})`;
      else why = `connect failed (${phase}: ${errorText(e)})`;
      this.fail(gen, why);
    }
  }

  /** Why the connection closed during `phase`: for a stdio server, how it exited and the last it said on stderr. */
  private async closedText(handle: ServerTransport, phase: string): Promise<string> {
    const exit = await handle.exit();
    if (!exit) return `connection closed during ${phase}`;
    const said = exit.stderr.length ? `; its stderr ends: ${exit.stderr.join(' | ')}` : '; nothing on its stderr';
    return `${exit.status ? `server exited during ${phase}, ${exit.status}` : `connection closed during ${phase}`}${said}`;
  }

  /**
   * Give up on this attempt: report, settle `ready`, stop the child. No restart. `needs-login`:
   * the tools stay withdrawn until the person logs in and the server is connected again.
   */
  private fail(gen: number, why: string, state: 'failed' | 'needs-login' = 'failed'): void {
    if (gen !== this.generation) return;
    this.generation++; // the closing client's events are stale from here on
    this._state = state;
    this._lastError = why;
    this.clearTools();
    this.notice(`mcp: ${this.name}: ${why}`);
    this.settleReady?.(new Error(`mcp: ${this.name}: ${why}`));
    void this.teardown();
  }

  private async teardown(): Promise<void> {
    const client = this.client;
    const handle = this.handle;
    this.client = null;
    this.handle = null;
    this.connectAbort?.abort();
    this.connectAbort = null;
    handle?.terminate();
    if (client) await client.close().catch(() => {});
    if (handle) this.handles.delete(handle);
  }

  /** SIGKILL every server process of this connection now, synchronously (the process's 'exit' event). */
  kill(): void {
    for (const h of this.handles) h.kill();
  }

  /** The transport closed on its own: a stdio child exited (or the HTTP session ended). */
  private onClosed(gen: number): void {
    if (gen !== this.generation) return;
    // While connecting, the pending initialize/tools/list request fails and connect() reports it.
    if (this._state !== 'ready') return;
    const client = this.client;
    this.generation++;
    this.client = null;
    if (this.handle) this.handles.delete(this.handle);
    this.handle = null;
    this._state = 'down';
    this.clearTools();
    if (this.spec.transport !== 'stdio') {
      this._state = 'failed';
      this._lastError = 'connection closed';
      this.notice(`mcp: ${this.name}: connection closed`);
      return;
    }
    // The server did not exit on its own when clm dropped it for a message over the limit.
    const why = this.tooLarge === client ? `a message from the server was ${TOO_LARGE}` : 'server exited';
    this._lastError = why;
    this.scheduleRestart(why);
  }

  private scheduleRestart(why = 'server exited'): void {
    const wait = this.budget.msUntilNext();
    if (wait === 0 && this.budget.take()) {
      this.notice(`mcp: ${this.name}: ${why}; restarting${why === 'server exited' ? '' : ' it'}`);
      this.launch();
      return;
    }
    this.notice(`mcp: ${this.name}: ${why}; restarting${why === 'server exited' ? '' : ' it'} in ${Math.ceil(wait / 1000)} s`);
    this.restartTimer = setTimeout(
      () => {
        this.restartTimer = null;
        if (this._state !== 'down') return;
        if (this.budget.take()) this.launch();
        else this.scheduleRestart(why);
      },
      Math.max(wait, 1),
    );
    this.restartTimer.unref();
  }

  /** notifications/tools/list_changed: fetch the list again and replace the tools. */
  private async refreshTools(gen: number): Promise<void> {
    const client = this.client;
    if (gen !== this.generation || this._state !== 'ready' || !client) return;
    try {
      const { tools } = await client.listTools(undefined, { timeout: this.spec.timeoutMs, cacheMode: 'refresh' });
      if (gen !== this.generation || this._state !== 'ready') return;
      this.setTools(tools);
      this.log(`tool list changed: ${this._tools.length} tools`);
    } catch (e) {
      this.log(`refreshing the tool list failed: ${errorText(e)}`);
    }
  }

  /** Run one tools/call for an invocation; completes or fails it exactly once unless it is already done. */
  async call(toolName: string, inv: ToolInvocation): Promise<void> {
    const client = this.client;
    const gen = this.generation;
    if (this._state !== 'ready' || !client) {
      inv.fail(`MCP server '${this.name}' is not running`);
      return;
    }
    let args: Record<string, unknown> = {};
    try {
      const v: unknown = JSON.parse(inv.args || '{}');
      if (isObject(v)) args = v; // MCP arguments are an object: anything else is sent as {}
    } catch {
      inv.fail('arguments are not valid JSON');
      return;
    }
    // The engine's deadline timer was set before this one, so with equal delays it fires first:
    // the call is aborted with its reason ("timed out after N ms"), reported below.
    const timeout = inv.timeoutMs > 0 ? inv.timeoutMs : this.spec.timeoutMs;
    try {
      const result = await client.callTool({ name: toolName, arguments: args }, { signal: inv.signal, timeout });
      if (inv.done) return; // cancelled or timed out meanwhile: the late answer is dropped
      const text = callResultToText(result);
      if (result.isError) inv.fail(text || 'the tool reported an error');
      else inv.complete(text);
    } catch (e) {
      if (inv.done) return;
      // The SDK reports an aborted request as REQUEST_TIMEOUT too, so the signal is checked first.
      const login = needsLoginText(e);
      if (this.closePromise) inv.fail('MCP client closed');
      else if (login) {
        inv.fail(`MCP server '${this.name}': ${login}`);
        this.fail(gen, login, 'needs-login');
      } else if (inv.signal.aborted || isAbort(e)) inv.fail(abortReason(inv.signal));
      else if (this.tooLarge === client) inv.fail(`the MCP server's reply was ${TOO_LARGE}, the most clm reads from a stdio server`);
      else if (isReplyTooLarge(e, REPLY_TOO_LARGE_CODE))
        inv.fail(`the MCP server's reply was ${TOO_LARGE}, the most clm reads from a server`);
      else if (isConnectionClosed(e)) inv.fail('MCP server disconnected');
      else if (isTimeout(e)) inv.fail(`MCP server '${this.name}' did not answer within ${timeout} ms`);
      else inv.fail(errorText(e) || 'failed to reach MCP server');
    }
  }

  /**
   * Connect again now (`/mcp reconnect NAME`), whatever the state: the server or the attempt in
   * progress is dropped (a stdio child stopped), a pending restart cancelled, and a new
   * connection made. Settles when it is ready or failed (see `state`, `lastError`).
   */
  async reconnect(): Promise<void> {
    if (this.closePromise) throw new Error(`mcp: ${this.name}: closed`);
    this.generation++;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this._state = 'connecting';
    this.clearTools();
    await this.teardown();
    if (this.closePromise) return;
    this.notice(`mcp: ${this.name}: reconnecting`);
    await this.connect().catch((e) => this.fail(this.generation, `connect failed (${errorText(e)})`));
  }

  /** Stop for good: withdraw the tools, fail pending calls ("MCP client closed"), stop the child. */
  close(): Promise<void> {
    if (this.closePromise) return this.closePromise;
    this.generation++;
    this._state = 'closed';
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.clearTools();
    this.settleReady?.(new Error(`mcp: ${this.name}: closed`));
    this.closePromise = this.teardown();
    return this.closePromise;
  }
}
