// The agent (clm_agent(3)): one conversation, its tools, and the turn loop, driven
// asynchronously over a caller-supplied Host and reporting through callbacks.

import { ClmError, E2BIG, EAGAIN, ECANCELED, EIO } from './errors.js';
import { contextUpdateMessage, estimateTokens, foldHistory, SUMMARY_PROMPT, supersede, systemMessage, TIME_REFRESH_S } from './history.js';
import type { Cancelable, Host } from './host.js';
import { LlmCall, type LlmFailure } from './llm-call.js';
import { messageToJson, parseMessageJson } from './message-json.js';
import type { ParsedReply, ProviderAdapter } from './providers/adapter.js';
import { adapterFor, modelsUrl, propsUrl } from './providers/index.js';
import { TokenBucket } from './ratelimit.js';
import { parseModelsList, parseProps } from './server-info.js';
import { ToolBatch } from './tool-batch.js';
import { ToolRegistry } from './tool-registry.js';
import { matchesAny } from './fnmatch.js';
import type {
  AgentCallbacks, AgentConfig, AgentEvent, AgentState, ConnStatus, Message, ProviderKind, ToolCall, ToolDef, ToolOutcome,
} from './types.js';

export const DEFAULT_MODEL = 'local-model';
export const DEFAULT_AUTOCOMPACT_PCT = 70;
/** Threshold in tokens when the context size is unknown (a cost cap). */
export const UNKNOWN_CTX_THRESHOLD = 100000;
export const DEFAULT_MAX_TOKENS = 64000;
export const TOOLS_UNSUPPORTED_NOTICE = 'model does not support tool calls; continuing without tools';
export const DEFAULT_PROBE_TIMEOUT_MS = 5000;
/** A models list or /props answer larger than this is not one. */
const PROBE_MAX_BYTES = 8 * 1024 * 1024;

export interface TurnResult {
  status: number;
  /** Assistant text of the turn (all rounds). */
  text: string;
  error?: string;
}

export interface ConnectionResult {
  status: ConnStatus;
  detail: string | null;
  ctxMax: number;
}

type Listener = Omit<AgentCallbacks, 'onPermission'>;

const EVENT_CALLBACKS = [
  'onAssistantText', 'onReasoning', 'onToolBegin', 'onToolResult', 'onToolBatch', 'onFinishReason', 'onUsage',
  'onConnection', 'onState', 'onTurnDone', 'onNotice', 'onMessage', 'onCompaction',
] as const;

/**
 * One callbacks object for the engine to call: each event goes to the caller, then to every
 * listener. onPermission is the caller's alone (no callback ⇒ gated tools are denied).
 */
function fanOut(user: () => AgentCallbacks, listeners: Set<Listener>): AgentCallbacks {
  const out: AgentCallbacks = {};
  for (const name of EVENT_CALLBACKS) {
    (out as Record<string, unknown>)[name] = (...args: unknown[]) => {
      // Listeners added by this very callback (a run() from onTurnDone) wait for the next event.
      const ls = [...listeners];
      const u = user();
      (u[name] as ((...a: unknown[]) => void) | undefined)?.apply(u, args);
      for (const l of ls) (l[name] as ((...a: unknown[]) => void) | undefined)?.apply(l, args);
    };
  }
  Object.defineProperty(out, 'onPermission', { get: () => user().onPermission, enumerable: true });
  return out;
}

const dec = new TextDecoder();

export interface AgentOptions {
  /** First retry wait when the server gives no Retry-After (doubles per try). Default 1000 ms. */
  retryBaseMs?: number;
}

export class Agent {
  private readonly history: Message[] = [];
  private readonly registry = new ToolRegistry();
  private cfg: AgentConfig;
  private adapter: ProviderAdapter;
  /** The caller's callbacks. */
  private user: AgentCallbacks;
  /** What the engine calls: the caller's callbacks, then every internal listener (run(), stream()). */
  private readonly cb: AgentCallbacks;
  private st: AgentState = 'idle';
  private err = '';
  private closed = false;
  private inFlight = false;
  private cancelling = false;
  private call: LlmCall | null = null;
  private batch: ToolBatch | null = null;
  private iteration = 0;
  /**
   * Bumped when a turn starts or ends. Every continuation captures it and stops when it changed:
   * a callback may cancel (or cancel and submit anew) at any point, and the interrupted work must
   * not go on in the next turn.
   */
  private turn = 0;
  /** Inside endTurn: the turn is over but onTurnDone has not returned yet. */
  private ending = false;
  private ctxUsed_ = 0;
  private ctxMaxLearned = 0;
  private toolsUnsupported = false;
  private lastStamp: number;
  private notifyQueue: string[] = [];
  private llmLimiter: TokenBucket | null = null;
  private toolLimiter: TokenBucket | null = null;
  private limiterTimer: Cancelable | null = null;
  private compacting: 'explicit' | 'midchain' | null = null;
  private midStarted = false;
  private midSucceeded = false;
  private midError = false;
  private readonly listeners = new Set<Listener>();
  private readonly retryBaseMs: number;
  private readonly probes = new Set<Cancelable>();

  constructor(cfg: AgentConfig, private readonly host: Host, callbacks: AgentCallbacks = {}, opts: AgentOptions = {}) {
    validateConfig(cfg);
    if (!host || typeof host.http !== 'function') throw new ClmError('EINVAL', 'host must implement http()');
    this.cfg = { ...cfg };
    this.user = callbacks ?? {};
    this.cb = fanOut(() => this.user, this.listeners);
    this.adapter = adapterFor(cfg.provider ?? 'openai');
    this.retryBaseMs = opts.retryBaseMs ?? 1000;
    this.setLimiters(cfg);
    if ((cfg.toolRatePerSec ?? 0) > 0) {
      const now = () => (this.host.now ? this.host.now() : Date.now());
      this.toolLimiter = new TokenBucket(cfg.toolRatePerSec!, cfg.toolRateBurst && cfg.toolRateBurst > 0 ? cfg.toolRateBurst : cfg.toolRatePerSec!, now);
    }
    const now = this.clock();
    this.lastStamp = now.getTime();
    this.appendMessage(systemMessage(cfg.systemPrompt, now));
    for (const t of cfg.builtinTools ?? []) this.registry.add(t);
  }

  // ---- getters ----------------------------------------------------------------------------

  get state(): AgentState { return this.st; }
  /** Context window in tokens, or 0 when unknown. */
  get ctxMax(): number { return this.cfg.contextSize && this.cfg.contextSize > 0 ? this.cfg.contextSize : this.ctxMaxLearned; }
  get lastError(): string { return this.err; }
  /** Prompt + completion tokens of the last usage report. */
  get ctxUsed(): number { return this.ctxUsed_; }
  get model(): string { return this.cfg.model || DEFAULT_MODEL; }
  get provider(): ProviderKind { return this.adapter.kind; }
  get baseUrl(): string { return this.cfg.baseUrl; }
  /** A copy of the conversation (messages are immutable values). */
  get messages(): Message[] { return this.history.slice(); }
  get toolNames(): string[] { return this.registry.names(); }
  /** Whether a turn, compaction or retry wait is in flight. */
  get busy(): boolean { return this.inFlight; }


  overAutocompactThreshold(): boolean {
    const used = this.ctxUsed_;
    if (used <= 0) return false;
    const max = this.ctxMax;
    if (max <= 0) return used >= UNKNOWN_CTX_THRESHOLD;
    const pct = this.cfg.autocompactPct && this.cfg.autocompactPct > 0 ? this.cfg.autocompactPct : DEFAULT_AUTOCOMPACT_PCT;
    return (used * 100) / max >= pct;
  }

  takeMidChainCompactStarted(): boolean { const v = this.midStarted; this.midStarted = false; return v; }
  takeMidChainCompactSucceeded(): boolean { const v = this.midSucceeded; this.midSucceeded = false; return v; }
  takeMidChainCompactError(): boolean { const v = this.midError; this.midError = false; return v; }

  // ---- tools ------------------------------------------------------------------------------

  addTool(def: ToolDef): void {
    this.checkOpen();
    this.registry.add(def);
  }

  removeTool(name: string): void {
    this.checkOpen();
    this.registry.remove(name);
  }

  // ---- turns ------------------------------------------------------------------------------

  submit(prompt: string): void {
    this.checkOpen();
    if (typeof prompt !== 'string') throw new ClmError('EINVAL', 'prompt must be a string');
    if (this.inFlight) throw this.busyError();
    this.inFlight = true;
    this.cancelling = false;
    this.iteration = 0;
    this.err = '';
    const t = ++this.turn;
    const now = this.clock();
    if (now.getTime() - this.lastStamp >= TIME_REFRESH_S * 1000) {
      this.lastStamp = now.getTime();
      this.appendMessage(contextUpdateMessage(now));
      if (this.stale(t)) return;
    }
    this.appendMessage({ role: 'user', content: prompt });
    if (this.stale(t)) return;
    this.setState('thinking');
    if (this.stale(t)) return;
    this.startRequest();
  }

  /** Submit and wait for the turn: resolves with its status and the assistant text. */
  run(prompt: string): Promise<TurnResult> {
    return this.waitTurn(() => this.submit(prompt));
  }

  /**
   * Submit and iterate the turn's events as they happen; the last one is `done`. Breaking out
   * early stops the iteration, not the turn. The callbacks keep firing as usual.
   */
  async *stream(prompt: string): AsyncGenerator<AgentEvent, void, undefined> {
    const queue: AgentEvent[] = [];
    let wake: (() => void) | null = null;
    const push = (e: AgentEvent) => { queue.push(e); wake?.(); };
    const l: Listener = {
      onAssistantText: (text) => push({ type: 'text', text }),
      onReasoning: (text) => push({ type: 'reasoning', text }),
      onToolBegin: (name, args, id) => push({ type: 'tool_begin', id, name, args }),
      onToolResult: (name, content, outcome, id) => push({ type: 'tool_result', id, name, content, outcome }),
      onUsage: (usage) => push({ type: 'usage', usage }),
      onFinishReason: (reason) => push({ type: 'finish', reason }),
      onState: (state) => push({ type: 'state', state }),
      onNotice: (text) => push({ type: 'notice', text }),
      onTurnDone: (status) => push(status === 0 ? { type: 'done', status } : { type: 'done', status, error: this.err }),
    };
    this.listeners.add(l);
    try {
      this.submit(prompt);
      for (;;) {
        while (queue.length) {
          const e = queue.shift()!;
          yield e;
          if (e.type === 'done') return;
        }
        await new Promise<void>((r) => { wake = r; });
        wake = null;
      }
    } finally {
      this.listeners.delete(l);
    }
  }

  /** compact() and wait for it to end. */
  compactAndWait(): Promise<TurnResult> {
    return this.waitTurn(() => this.compact());
  }

  private waitTurn(start: () => void): Promise<TurnResult> {
    return new Promise<TurnResult>((resolve, reject) => {
      let text = '';
      const l: Listener = {
        onAssistantText: (t) => { text += t; },
        onTurnDone: (status) => {
          this.listeners.delete(l);
          resolve(status === 0 ? { status, text } : { status, text, error: this.err || undefined });
        },
      };
      this.listeners.add(l);
      try { start(); } catch (e) { this.listeners.delete(l); reject(e); }
    });
  }

  /** Queue text as a new user turn: now if idle, else right after the current turn ends. */
  notify(text: string): void {
    this.checkOpen();
    if (this.inFlight) { this.notifyQueue.push(text); return; }
    this.submit(text);
  }

  cancel(): void {
    this.checkOpen();
    if (!this.inFlight || this.ending) {
      if (this.cancelling) throw new ClmError('EALREADY', 'cancel already in progress');
      throw new ClmError('EINVAL', 'nothing in flight');
    }
    if (this.cancelling) throw new ClmError('EALREADY', 'cancel already in progress');
    this.cancelling = true;
    this.err = '';
    if (this.batch) {
      // Every unfinished call gets a result; the batch then ends the turn with ECANCELED.
      this.batch.cancel('cancelled by user');
      return;
    }
    this.abortRequest();
    this.endTurn(ECANCELED, 'complete');
  }

  compact(): void {
    this.checkOpen();
    if (this.inFlight) throw this.busyError();
    this.cancelling = false;
    this.inFlight = true;
    this.err = '';
    this.turn++;
    this.startCompaction('explicit');
  }

  setProvider(cfg: AgentConfig): void {
    this.checkOpen();
    if (this.inFlight) throw this.busyError();
    validateConfig(cfg);
    const c = this.cfg;
    c.baseUrl = cfg.baseUrl;
    c.apiKey = cfg.apiKey;
    c.provider = cfg.provider;
    c.model = cfg.model;
    // Connection settings the new config leaves out return to the library defaults, so nothing
    // of the previous provider (its rate limit, its max_tokens) follows the switch.
    c.contextSize = cfg.contextSize;
    c.autocompactPct = cfg.autocompactPct;
    c.maxTokens = cfg.maxTokens;
    c.disableParallelToolCalls = cfg.disableParallelToolCalls;
    c.rateTokensPerSec = cfg.rateTokensPerSec;
    c.rateBurst = cfg.rateBurst;
    if (cfg.stream !== undefined) c.stream = cfg.stream;
    this.adapter = adapterFor(cfg.provider ?? 'openai');
    this.toolsUnsupported = false;
    this.ctxMaxLearned = 0;
    this.setLimiters(cfg);
    this.log(`provider switched to ${this.adapter.kind} ${cfg.baseUrl} model ${this.model}`);
  }

  clearHistory(): void {
    this.checkOpen();
    if (this.inFlight) throw this.busyError();
    this.history.length = 0;
    const now = this.clock();
    this.lastStamp = now.getTime();
    this.ctxUsed_ = 0;
    this.appendMessage(systemMessage(this.cfg.systemPrompt, now));
  }

  /** Append every non-system message (validated copies) without firing onMessage. */
  restoreHistory(messages: readonly Message[]): void {
    this.checkOpen();
    if (this.inFlight) throw this.busyError();
    let copies: Message[];
    try {
      copies = messages.filter((m) => m.role !== 'system').map((m) => parseMessageJson(messageToJson(m)));
    } catch (e) {
      if (e instanceof ClmError) throw e;
      throw new ClmError('EINVAL', `invalid message in history: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.history.push(...copies);
    // No usage report yet: estimate, so a resumed conversation already over the threshold shows.
    this.ctxUsed_ = Math.max(this.ctxUsed_, estimateTokens(this.history));
  }

  /** Probe the endpoint: GET models (200–499 ⇒ online), then llama.cpp /props when the context size is unknown. */
  checkConnection(): Promise<ConnectionResult> {
    this.checkOpen();
    this.cb.onConnection?.('checking', null);
    return new Promise((resolve) => {
      const report = (status: ConnStatus, detail: string | null) => {
        if (this.closed) { resolve({ status: 'offline', detail: 'agent closed', ctxMax: this.ctxMax }); return; }
        this.cb.onConnection?.(status, detail);
        resolve({ status, detail, ctxMax: this.ctxMax });
      };
      this.get(modelsUrl(this.cfg.baseUrl), (res) => {
        if (res.error !== undefined) { report('offline', res.error || 'unreachable'); return; }
        const st = res.status!;
        if (st >= 500) { report('offline', `HTTP ${st}`); return; }
        if (st >= 200 && st < 300 && this.ctxMax <= 0) {
          this.get(propsUrl(this.cfg.baseUrl), (p) => {
            const n = p.status && p.status >= 200 && p.status < 300 ? parseProps(p.body) : null;
            if (n && n > 0) this.ctxMaxLearned = n;
            report('online', null);
          });
          return;
        }
        report('online', null);
      });
    });
  }

  /** Model ids the endpoint offers (GET models). */
  listModels(): Promise<string[]> {
    this.checkOpen();
    return new Promise((resolve, reject) => {
      this.get(modelsUrl(this.cfg.baseUrl), (res) => {
        if (this.closed) return reject(new Error('agent closed'));
        if (res.error !== undefined) return reject(new Error(res.error || 'request failed'));
        if (res.status! < 200 || res.status! > 299) return reject(new Error(`HTTP ${res.status}`));
        const ids = parseModelsList(res.body);
        if (!ids) return reject(new Error('unexpected response shape (not {"data":[{"id":...}]})'));
        resolve(ids);
      });
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Calls still running get a result in history (no callbacks), so it stays a valid one.
    for (const c of this.batch?.detach() ?? []) {
      this.history.push({ role: 'tool', content: '[tool failed: agent closed]', toolCallId: c.id, toolName: c.name });
    }
    this.batch = null;
    this.call?.abort();
    this.call = null;
    this.limiterTimer?.cancel();
    this.limiterTimer = null;
    this.user = {};
    for (const p of [...this.probes]) p.cancel();
    this.probes.clear();
    this.inFlight = false;
    // Pending run()/compactAndWait() promises settle: the turn ends with the agent.
    this.err = 'agent closed';
    this.cb.onTurnDone?.(ECANCELED);
    this.listeners.clear();
  }

  [Symbol.dispose](): void { this.close(); }

  // ---- internals --------------------------------------------------------------------------

  private clock(): Date { return this.cfg.clock ? this.cfg.clock() : new Date(); }

  private log(line: string): void { this.host.log?.(line); }

  private checkOpen(): void {
    if (this.closed) throw new ClmError('EINVAL', 'agent is closed');
  }

  private busyError(): ClmError {
    this.err = 'turn already in progress';
    return new ClmError('EBUSY', 'turn already in progress');
  }

  /** The LLM request bucket of a connection; absent rates mean no limit. */
  private setLimiters(cfg: AgentConfig): void {
    const now = () => (this.host.now ? this.host.now() : Date.now());
    if ((cfg.rateTokensPerSec ?? 0) > 0 || (cfg.rateBurst ?? 0) > 0) {
      const rate = cfg.rateTokensPerSec && cfg.rateTokensPerSec > 0 ? cfg.rateTokensPerSec : 1000000;
      const burst = cfg.rateBurst && cfg.rateBurst > 0 ? cfg.rateBurst : rate;
      this.llmLimiter = new TokenBucket(rate, burst, now);
    } else {
      this.llmLimiter = null;
    }
  }

  private setState(s: AgentState): void {
    this.st = s;
    this.cb.onState?.(s);
  }

  private appendMessage(m: Message): void {
    this.history.push(m);
    this.cb.onMessage?.(m);
  }


  /** The single exit of every turn: exactly one onTurnDone, then queued notifications. */
  private endTurn(status: number, state: 'complete' | 'error', error?: string): void {
    this.turn++;
    this.compacting = null;
    this.call = null;
    this.batch = null;
    if (error !== undefined) this.err = error;
    // Still in flight during the final state change, so a turn started from onState waits for
    // onTurnDone (the original started it first, and the late onTurnDone then marked it idle).
    this.ending = true;
    this.setState(state);
    this.ending = false;
    this.inFlight = false;
    this.cb.onTurnDone?.(status);
    this.drainNotifications();
  }

  private stale(t: number): boolean {
    return this.closed || this.turn !== t;
  }

  private drainNotifications(): void {
    if (this.closed || this.inFlight || this.notifyQueue.length === 0) return;
    // If the onTurnDone callback started a turn itself, the queue waits for that one to end.
    const text = this.notifyQueue.join('\n\n');
    this.notifyQueue = [];
    this.submit(text);
  }

  private replyLimits() {
    const c = this.cfg;
    return { firstByteTimeoutMs: c.firstByteTimeoutMs, streamIdleTimeoutMs: c.streamIdleTimeoutMs, maxReplyBytes: c.maxReplyBytes };
  }

  private headers(): Record<string, string> {
    return this.adapter.headers(this.cfg.apiKey ?? '');
  }

  private buildBody(): string | Uint8Array {
    const tools = this.toolsUnsupported ? null : this.registry.schema();
    const a = this.adapter;
    const build = a.buildRequestBytes ? a.buildRequestBytes.bind(a) : a.buildRequest.bind(a);
    return build({
      model: this.model,
      messages: this.history,
      tools: tools && tools.length ? tools : null,
      stream: this.cfg.stream ?? false,
      disableParallelToolCalls: !!this.cfg.disableParallelToolCalls,
      maxTokens: this.cfg.maxTokens ?? DEFAULT_MAX_TOKENS,
    });
  }

  private startRequest(): void {
    const t = this.turn;
    const body = this.buildBody();
    const lim = this.llmLimiter;
    const cost = Math.max(1, Math.floor((typeof body === 'string' ? body.length : body.byteLength) / 4));
    const wait = lim ? lim.delay(cost) : 0;
    if (wait > 0 && this.host.setTimer) {
      this.limiterTimer = this.host.setTimer(wait, () => {
        this.limiterTimer = null;
        if (this.stale(t)) return;
        lim!.consume(cost);
        this.setState('thinking');
        if (this.stale(t)) return;
        this.send(body);
      });
      this.setState('rate_limited');
      return;
    }
    lim?.consume(cost);
    this.send(body);
  }

  private send(body: string | Uint8Array): void {
    const t = this.turn;
    const stream = this.cfg.stream ?? false;
    // `stream` asks for SSE; whether the reply came as deltas is reported per reply.
    // Whole texts: the log masks secrets and then shortens (a cut before masking could leak one).
    if (this.host.log) this.log(`posting body: ${typeof body === 'string' ? body : dec.decode(body)}`);
    this.call = new LlmCall({
      host: this.host,
      adapter: this.adapter,
      url: this.cfg.baseUrl,
      headers: this.headers(),
      body,
      stream,
      maxTries: this.cfg.maxTries ?? 4,
      retryBaseMs: this.retryBaseMs,
      ...this.replyLimits(),
      onRetryWait: (ms, why) => {
        this.log(`retrying in ${ms} ms after ${why}`);
        // Said out loud: a retry wait can be long, and silence looks like a hang.
        this.cb.onNotice?.(`${why}; retrying in ${ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s` : `${ms} ms`}`);
        if (this.stale(t)) return;
        this.setState('rate_limited');
      },
      onRetrySend: () => this.setState('thinking'),
      onText: (text) => this.cb.onAssistantText?.(text),
      onReasoning: (text) => this.cb.onReasoning?.(text),
      onDone: (r, streamed) => { if (this.stale(t)) return; this.call = null; this.replyDone(r, streamed); },
      onFail: (f) => { if (this.stale(t)) return; this.call = null; this.requestFailed(f); },
    });
    this.call.start();
  }

  private abortRequest(): void {
    this.limiterTimer?.cancel();
    this.limiterTimer = null;
    const c = this.call;
    this.call = null;
    c?.abort();
  }

  private requestFailed(f: LlmFailure): void {
    const t = this.turn;
    if (f.cancelled) { this.endTurn(ECANCELED, 'complete'); return; }
    if (f.status === 400 && !this.toolsUnsupported && f.body && /does not support tools/i.test(f.body)) {
      this.toolsUnsupported = true;
      this.cb.onNotice?.(TOOLS_UNSUPPORTED_NOTICE);
      if (this.stale(t)) return;
      this.startRequest();
      return;
    }
    this.log(`request failed: ${f.message}`);
    this.endTurn(EIO, 'error', f.message);
  }

  private replyDone(r: ParsedReply, streamed: boolean): void {
    const t = this.turn;
    if (r.finishReason) this.cb.onFinishReason?.(r.finishReason);
    if (this.stale(t)) return;
    if (r.usage) {
      this.ctxUsed_ = r.usage.promptTokens + r.usage.completionTokens;
      this.cb.onUsage?.(r.usage);
      if (this.stale(t)) return;
    }
    if (!streamed && r.reasoning !== null) this.cb.onReasoning?.(r.reasoning);
    if (this.stale(t)) return;
    if (r.toolCalls.length) {
      // Text that came with the calls is kept with them (the original dropped it).
      if (!streamed && r.content) this.cb.onAssistantText?.(r.content);
      if (this.stale(t)) return;
      this.dispatchTools(r.toolCalls, r.content || null);
      return;
    }
    if (r.content !== null) this.appendMessage({ role: 'assistant', content: r.content });
    if (this.stale(t)) return;
    if (!streamed && r.content) this.cb.onAssistantText?.(r.content);
    if (this.stale(t)) return;
    this.endTurn(0, 'complete');
  }

  private dispatchTools(calls: ToolCall[], content: string | null): void {
    const t = this.turn;
    this.setState('calling_tool');
    if (this.stale(t)) return;
    const msg: Message = { role: 'assistant', content, toolCalls: calls.map((c) => ({ ...c })) };
    // §1.3: onToolBatch(0, n) precedes the tool-call message. A cancel inside it leaves no call
    // behind (nothing is in history yet).
    this.cb.onToolBatch?.(0, calls.length);
    if (this.stale(t)) return;
    const batch = new ToolBatch(msg.toolCalls!, {
      registry: this.registry,
      host: this.host,
      callbacks: this.cb,
      toolLimiter: this.toolLimiter,
      maxParallel: this.cfg.maxParallelTools,
      onResult: (call, text, outcome) => this.toolResult(batch, call, text, outcome),
      onDone: () => { if (this.batch === batch && !this.stale(t)) this.toolsDone(); },
      notify: (text) => { if (!this.closed) this.notify(text); },
      log: (l) => this.log(l),
    });
    // From here a cancel goes through the batch, which gives every call a result after this message.
    this.batch = batch;
    this.appendMessage(msg);
    if (this.stale(t)) return;
    batch.start();
  }

  private toolResult(batch: ToolBatch, call: ToolCall, content: string, outcome: ToolOutcome): void {
    if (this.closed || this.batch !== batch) return;
    if (this.host.log) this.log(`[result] ${call.name} -> ${content}`);
    this.cb.onToolResult?.(call.name, content, outcome, call.id);
    if (matchesAny(this.cfg.volatileTools, call.name)) supersede(this.history, call.name);
    this.appendMessage({ role: 'tool', content, toolCallId: call.id, toolName: call.name });
    this.cb.onToolBatch?.(batch.completed, batch.total);
  }

  private toolsDone(): void {
    const t = this.turn;
    this.batch = null;
    if (this.cancelling) { this.endTurn(ECANCELED, 'complete'); return; }
    this.iteration++;
    const max = this.cfg.maxIterations ?? 0;
    if (max > 0 && this.iteration >= max) { this.endTurn(E2BIG, 'error', 'max iterations reached'); return; }
    if (this.overAutocompactThreshold()) { this.startCompaction('midchain'); return; }
    this.setState('thinking');
    if (this.stale(t)) return;
    this.startRequest();
  }

  // ---- compaction -------------------------------------------------------------------------

  private startCompaction(kind: 'explicit' | 'midchain'): void {
    const t = this.turn;
    this.compacting = kind;
    if (kind === 'midchain') { this.midStarted = true; this.ctxUsed_ = 0; }
    this.setState('thinking');
    if (this.stale(t)) return;
    const body = this.adapter.buildRequest({
      model: this.model,
      messages: [...this.history, { role: 'user', content: SUMMARY_PROMPT }],
      tools: null,
      stream: false,
      disableParallelToolCalls: false,
      maxTokens: this.cfg.maxTokens ?? DEFAULT_MAX_TOKENS,
    });
    this.call = new LlmCall({
      host: this.host, adapter: this.adapter, url: this.cfg.baseUrl, headers: this.headers(), body, stream: false,
      maxTries: this.cfg.maxTries ?? 4, retryBaseMs: this.retryBaseMs, ...this.replyLimits(),
      onRetryWait: () => this.setState('rate_limited'),
      onRetrySend: () => this.setState('thinking'),
      onDone: (r) => { if (this.stale(t)) return; this.call = null; this.compactionDone(r, null); },
      onFail: (f) => { if (this.stale(t)) return; this.call = null; this.compactionDone(null, f); },
    });
    this.call.start();
  }

  private compactionDone(r: ParsedReply | null, f: LlmFailure | null): void {
    const t = this.turn;
    const kind = this.compacting;
    this.compacting = null;
    if (f?.cancelled) { this.endTurn(ECANCELED, 'complete'); return; }
    let error: string | null = null;
    let status = EIO;
    if (f) error = `compaction request failed: ${f.message}`;
    else {
      const summary = (r!.content && r!.content.trim()) ? r!.content : (r!.reasoning && r!.reasoning.trim() ? r!.reasoning : '');
      if (!summary) error = 'compaction produced no summary';
      else {
        const before = this.history.length, tokBefore = estimateTokens(this.history);
        const text = summary.trim();
        const fold = foldHistory(this.history, text);
        if (fold.count === 0) { error = 'compaction made no progress'; status = EAGAIN; }
        else {
          const systemBefore = this.history.slice(0, fold.at).filter((m) => m.role === 'system').length;
          this.cb.onCompaction?.({ index: fold.at - systemBefore, count: fold.count, summary: text });
          if (this.stale(t)) return;
          this.cb.onNotice?.(`compacted ${fold.count} messages into a summary: ${before} → ${this.history.length} messages, ~${tokBefore} → ~${estimateTokens(this.history)} tokens`);
          this.ctxUsed_ = 0;
        }
      }
    }
    if (this.stale(t)) return;
    if (kind === 'midchain') {
      if (error) { this.err = error; this.midError = true; this.log(`mid-chain compaction failed: ${error}`); }
      else { this.midSucceeded = true; this.midError = false; }
      this.setState('thinking');
      if (this.stale(t)) return;
      this.startRequest();
      return;
    }
    if (error) this.endTurn(status, 'error', error);
    else this.endTurn(0, 'complete');
  }

  /** A probe GET (models, /props): bounded in time and size, so a silent server cannot stall start-up. */
  private get(url: string, done: (r: { status?: number; body?: string; error?: string }) => void): void {
    let h: Cancelable | null = null;
    let timer: Cancelable | null = null;
    let settled = false;
    const finish = (r: { status?: number; body?: string; error?: string }) => {
      if (settled) return;
      settled = true;
      timer?.cancel();
      if (h) this.probes.delete(h);
      done(r);
    };
    h = this.host.http({ url, headers: this.headers(), maxBytes: PROBE_MAX_BYTES }, {
      onResponse: (res) => finish({ status: res.status, body: dec.decode(res.body) }),
      onError: (e) => finish({ error: e.message }),
    });
    if (settled) return;
    this.probes.add(h);
    const ms = this.cfg.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
    if (ms > 0 && this.host.setTimer) {
      const req = h;
      timer = this.host.setTimer(ms, () => {
        timer = null;
        finish({ error: `no answer within ${ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`} (probe_timeout_ms)` });
        req.cancel();
      });
    }
  }
}

function validateConfig(cfg: AgentConfig): void {
  if (!cfg || typeof cfg !== 'object') throw new ClmError('EINVAL', 'config must be an object');
  if (typeof cfg.baseUrl !== 'string' || !/^https?:\/\//i.test(cfg.baseUrl)) throw new ClmError('EINVAL', `baseUrl must be an http(s) URL, got ${JSON.stringify(cfg.baseUrl)}`);
  if (cfg.autocompactPct !== undefined && cfg.autocompactPct !== 0 && !(cfg.autocompactPct >= 1 && cfg.autocompactPct <= 99)) throw new ClmError('EINVAL', 'autocompactPct must be between 1 and 99');
  for (const k of ['contextSize', 'rateTokensPerSec', 'rateBurst', 'maxIterations', 'maxTokens', 'probeTimeoutMs', 'firstByteTimeoutMs', 'streamIdleTimeoutMs', 'maxReplyBytes', 'maxParallelTools'] as const) {
    const v = cfg[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) throw new ClmError('EINVAL', `${k} must be a non-negative number`);
  }
}

/** createAgent(cfg, host, callbacks): the seed's clm_agent_new. */
export function createAgent(cfg: AgentConfig, host: Host, callbacks?: AgentCallbacks, opts?: AgentOptions): Agent {
  return new Agent(cfg, host, callbacks, opts);
}
