// The agent (clm_agent(3)): one conversation — its history, tools and connection — and the state
// it reports. A turn runs in turn.ts; the agent starts it, cancels it, and ends it exactly once:
// the final state, then one turn_done, then queued notifications (or an end-of-turn compaction).

import { connect, overCompactionThreshold, toolLimiter, validateConfig, withConnection, type Connection } from './connection.js';
import { addDispose, type Disposal } from './disposal.js';
import { ClmError, ECANCELED, EIO, messageOf } from './errors.js';
import type { AgentEvent, TurnOrigin } from './events.js';
import { canCompact, MidChainFlags, NOTHING_TO_AUTOCOMPACT } from './compaction.js';
import { estimateTokens, TimeStamps } from './history.js';
import type { Host } from './host.js';
import { Listeners } from './listeners.js';
import { gateOf } from './permission-gate.js';
import { validNonSystemCopies } from './message-json.js';
import { probeConnection, probeModels, Probes, type ConnectionResult, type Endpoint } from './probes.js';
import type { ProviderAdapter } from './providers/adapter.js';
import { defaultDialects } from './providers/dialects.js';
import { DIALECTS } from './providers/index.js';
import type { TokenBucket } from './ratelimit.js';
import { dropForeignReasoning, foreignReasoningCount, type ForeignCount } from './reasoning.js';
import { ToolRegistry } from './tool-registry.js';
import { runCompactionTurn, runTurn, TurnAborted, type TurnEnd } from './turn.js';
import type { TurnContext } from './turn-context.js';
import { turnEvents, turnResult, type TurnResult } from './turn-waiters.js';
import type { AgentConfig } from './agent-config.js';
import type { AgentCallbacks, AgentState, Message, ProviderKind, ToolDef, TurnStatus } from './types.js';

export { DEFAULT_MODEL, DEFAULT_AUTOCOMPACT_PCT, UNKNOWN_CTX_THRESHOLD, DEFAULT_MAX_TOKENS } from './connection.js';
export { TOOLS_UNSUPPORTED_NOTICE } from './turn.js';
export type { ConnectionResult, Endpoint } from './probes.js';
export type { TurnResult } from './turn-waiters.js';

export interface AgentOptions {
  /** First retry wait when the server gives no Retry-After (doubles per try). Default 1000 ms. */
  retryBaseMs?: number;
  /**
   * The wire dialects the agent can speak, `cfg.provider` choosing one (clm's createAgent: every
   * one; clm/browser's: required). A bundle holds only the dialects it names.
   */
  dialects?: readonly ProviderAdapter[];
  /**
   * Awaited before a round of tool calls of which at least one may change files (a tool without
   * `readOnly`), before any call of the round runs: e.g. a snapshot of the files to undo the turn
   * with. A rejection is reported as a notice and the round goes on.
   */
  beforeChanges?: (signal: AbortSignal) => Promise<void>;
}

// Declared beside the class, not in it, so the published types do not need Symbol.dispose.
export interface Agent extends Disposal {}

interface Turn {
  readonly origin: TurnOrigin;
  readonly controller: AbortController;
}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface only adds [Symbol.dispose], which addDispose(Agent) defines
export class Agent {
  readonly #history: Message[] = [];
  readonly #registry = new ToolRegistry();
  readonly #listeners: Listeners;
  readonly #probes: Probes;
  readonly #toolLimiter: TokenBucket | null;
  readonly #retryBaseMs: number;
  readonly #dialects: readonly ProviderAdapter[];
  #conn: Connection;
  #st: AgentState = 'idle';
  #err = '';
  #closed = false;
  /** The turn in flight (a prompt, a notification or a compaction), null when idle. */
  #turn: Turn | null = null;
  /** Inside finish(): the turn is over but its turn_done has not gone out yet. */
  #ending = false;
  #cancelling = false;
  #used = 0;
  /** #used is a usage report's figure (not 0 or an estimate after the history changed wholesale). */
  #usedReported = false;
  readonly #stamps: TimeStamps;
  #notifyQueue: string[] = [];
  readonly #midChain = new MidChainFlags();
  /** An automatic compaction found nothing to fold and said so; again only after a fold or a new history. */
  #nothingToFoldSaid = false;
  readonly #host: Host;
  readonly #beforeChanges: AgentOptions['beforeChanges'];

  constructor(cfg: AgentConfig, host: Host, callbacks: AgentCallbacks = {}, opts: AgentOptions = {}) {
    validateConfig(cfg);
    this.#host = host;
    if (!host || typeof host.http !== 'function') throw new ClmError('EINVAL', 'host must implement http()');
    this.#listeners = new Listeners(callbacks ?? {});
    const dialects = opts.dialects ?? defaultDialects();
    if (!Array.isArray(dialects) || !dialects.every(isAdapter))
      throw new ClmError('EINVAL', 'dialects must be an array of provider adapters');
    this.#dialects = [...dialects];
    this.#probes = new Probes(host, this.#dialects, () => this.#cfg.probeTimeoutMs);
    this.#retryBaseMs = opts.retryBaseMs ?? 1000;
    this.#beforeChanges = opts.beforeChanges;
    this.#conn = connect({ ...cfg }, this.#now, this.#dialects);
    this.#toolLimiter = toolLimiter(cfg, this.#now);
    this.#stamps = new TimeStamps(cfg.clock ?? (() => new Date()));
    this.#append(this.#stamps.system(cfg.systemPrompt));
    for (const t of cfg.builtinTools ?? []) this.#registry.add(t);
  }

  // ---- what it reports --------------------------------------------------------------------

  get state(): AgentState {
    return this.#st;
  }
  /** Context window in tokens, or 0 when unknown. */
  get ctxMax(): number {
    return this.#cfg.contextSize && this.#cfg.contextSize > 0 ? this.#cfg.contextSize : this.#conn.ctxLearned;
  }
  get lastError(): string {
    return this.#err;
  }
  /** Prompt + completion tokens of the last usage report. */
  get ctxUsed(): number {
    return this.#used;
  }
  /**
   * The context in use as best known, for a gauge: the last usage report's figure, or, while
   * none has come since the history was restored, cleared or compacted, an estimate of what the
   * next request holds (its messages and tool schemas, characters / 4).
   */
  get ctxInUse(): number {
    if (this.#usedReported) return this.#used;
    let schemaChars = 0;
    for (const t of this.#registry.schema()) schemaChars += t.name.length + t.description.length + t.parametersJson.length + 16;
    return estimateTokens(this.#history) + Math.ceil(schemaChars / 4);
  }
  get model(): string {
    return this.#conn.model;
  }
  get provider(): ProviderKind {
    return this.#conn.adapter.kind;
  }
  /** The provider's configured name (AgentConfig.providerName), when the caller gave one. */
  get providerName(): string | undefined {
    return this.#cfg.providerName;
  }
  get baseUrl(): string {
    return this.#cfg.baseUrl;
  }
  /** Whether requests carry an API key (its value is never reported). */
  get hasApiKey(): boolean {
    return !!this.#cfg.apiKey;
  }
  /** A copy of the conversation (messages are immutable values). */
  get messages(): Message[] {
    return this.#history.slice();
  }
  get toolNames(): string[] {
    return this.#registry.names();
  }
  /** Whether a turn, compaction or retry wait is in flight. */
  get busy(): boolean {
    return this.#turn !== null;
  }

  overAutocompactThreshold(): boolean {
    return overCompactionThreshold(this.#used, this.ctxMax, this.#cfg.autocompactPct);
  }

  takeMidChainCompactStarted(): boolean {
    return this.#midChain.take('started');
  }
  takeMidChainCompactSucceeded(): boolean {
    return this.#midChain.take('succeeded');
  }
  takeMidChainCompactError(): boolean {
    return this.#midChain.take('error');
  }

  /** Every event from now on, until the returned function is called. */
  readonly subscribe = (fn: (e: AgentEvent) => void): (() => void) => this.#listeners.subscribe(fn);

  // ---- tools ------------------------------------------------------------------------------

  addTool(def: ToolDef): void {
    this.#checkOpen();
    this.#registry.add(def);
  }
  removeTool(name: string): void {
    this.#checkOpen();
    this.#registry.remove(name);
  }

  // ---- turns ------------------------------------------------------------------------------

  submit(prompt: string): void {
    this.#prompt('submit', prompt);
  }

  /** Queue text as a new user turn: now if idle, else right after the current turn ends. */
  notify(text: string): void {
    this.#checkOpen();
    if (this.#turn) {
      this.#notifyQueue.push(text);
      return;
    }
    this.#prompt('notify', text);
  }

  compact(origin: 'compact' | 'resume' = 'compact'): void {
    this.#checkOpen();
    this.#checkIdle();
    this.#start(origin, (ctx, signal) => runCompactionTurn(ctx, origin, signal));
  }

  /** Submit and wait for the turn: resolves with its status and the assistant text. */
  run(prompt: string): Promise<TurnResult> {
    return turnResult(this.subscribe, () => this.submit(prompt));
  }

  /** compact() and wait for it to end. */
  compactAndWait(origin: 'compact' | 'resume' = 'compact'): Promise<TurnResult> {
    return turnResult(this.subscribe, () => this.compact(origin));
  }

  /**
   * Submit and iterate the turn's events as they happen; the last one is `turn_done`. Breaking
   * out early stops the iteration, not the turn. The callbacks keep firing as usual.
   */
  stream(prompt: string): AsyncGenerator<AgentEvent, void, undefined> {
    return turnEvents(this.subscribe, () => this.submit(prompt));
  }

  cancel(): void {
    this.#checkOpen();
    if (this.#cancelling) throw new ClmError('EALREADY', 'cancel already in progress');
    if (!this.#turn || this.#ending) throw new ClmError('EINVAL', 'nothing in flight');
    this.#cancelling = true;
    this.#err = '';
    const turn = this.#turn;
    // Unfinished tool calls get their results inside abort(); then the turn ends here.
    turn.controller.abort(new TurnAborted('cancel'));
    this.#finish(turn, { status: ECANCELED, state: 'complete' });
  }

  setProvider(cfg: AgentConfig): void {
    this.#checkOpen();
    this.#checkIdle();
    validateConfig(cfg);
    this.#conn = connect(withConnection(this.#cfg, cfg), this.#now, this.#dialects);
    const kind = this.#conn.adapter.kind;
    this.#host.log?.(`provider switched to ${kind} ${cfg.baseUrl} model ${this.model}`);
    // Reasoning is signed or encrypted for the dialect that produced it, and chat reasoning text
    // and extra content are known only to their server and model: the new connection cannot
    // take the others'.
    this.#logForeign(dropForeignReasoning(this.#history, this.#conn.target), 'dropped', ':', 'cannot');
  }

  clearHistory(): void {
    this.#checkOpen();
    this.#checkIdle();
    this.#history.length = 0;
    this.#used = 0;
    this.#usedReported = false;
    this.#nothingToFoldSaid = false;
    this.#append(this.#stamps.system(this.#cfg.systemPrompt));
  }

  /**
   * Replace the system prompt (the base text; the time stamp is added as at creation). Unchanged
   * text changes nothing, so the requests' prefix stays byte-identical for prompt caching; new
   * text replaces the history's system message and is what clearHistory uses from then on.
   * Busy ⇒ EBUSY.
   */
  setSystemPrompt(text: string): void {
    this.#checkOpen();
    if (typeof text !== 'string') throw new ClmError('EINVAL', 'system prompt must be a string');
    this.#checkIdle();
    if (this.#cfg.systemPrompt === text) return;
    this.#cfg.systemPrompt = text;
    const at = this.#history.findIndex((m) => m.role === 'system');
    if (at >= 0) this.#history[at] = this.#stamps.system(text);
  }

  /**
   * Append every non-system message (validated copies) without firing onMessage. Reasoning of
   * another dialect, or chat reasoning text and extra content of another server or model, is
   * kept but not sent (a setProvider to where it came from sends it again; one to anywhere else
   * drops it).
   */
  restoreHistory(messages: readonly Message[]): void {
    this.#checkOpen();
    this.#checkIdle();
    const copies = validNonSystemCopies(messages);
    this.#history.push(...copies);
    this.#logForeign(foreignReasoningCount(copies, this.#conn.target), 'the restored history holds', ';', 'do not');
    // No usage report yet: estimate, so a resumed conversation already over the threshold shows.
    this.#used = Math.max(this.#used, estimateTokens(this.#history));
    this.#usedReported = false;
  }

  /** Probe the endpoint: GET models (200–499 ⇒ online), then llama.cpp /props when the context size is unknown. */
  checkConnection(): Promise<ConnectionResult> {
    this.#checkOpen();
    this.#emit({ type: 'connection', status: 'checking', detail: null });
    const conn = this.#conn;
    return probeConnection(this.#probes, conn.cfg, this.ctxMax <= 0, () => {
      conn.reached = true;
    }).then((r) => {
      if (this.#closed) return { status: 'offline', detail: 'agent closed', ctxMax: this.ctxMax };
      if (r.ctxMax > 0) conn.ctxLearned = r.ctxMax;
      this.#emit({ type: 'connection', status: r.status, detail: r.detail });
      return { status: r.status, detail: r.detail, ctxMax: this.ctxMax };
    });
  }

  /** Model ids an endpoint offers (GET models): this agent's, or any other of any dialect. */
  listModels(endpoint?: Endpoint): Promise<string[]> {
    this.#checkOpen();
    const conn = this.#conn;
    return probeModels(
      this.#probes,
      endpoint ?? conn.cfg,
      endpoint
        ? undefined
        : () => {
            conn.reached = true;
          },
    ).then((ids) => {
      if (this.#closed) throw new Error('agent closed');
      return ids;
    });
  }

  close(): void {
    if (this.#closed) return;
    // From here nothing reaches the callbacks; a pending run()/compactAndWait() still settles.
    this.#closed = true;
    this.#listeners.callbacks = {};
    const turn = this.#turn;
    this.#turn = null;
    turn?.controller.abort(new TurnAborted('close'));
    this.#probes.close();
    this.#err = 'agent closed';
    if (turn) this.#listeners.emit({ type: 'turn_done', status: ECANCELED, error: this.#err });
    this.#listeners.clear();
  }

  // ---- internals --------------------------------------------------------------------------

  get #cfg(): AgentConfig {
    return this.#conn.cfg;
  }
  /** "dropped 2 reasoning parts of another dialect: openai requests cannot carry them", and the like. */
  #logForeign(n: ForeignCount, what: string, sep: string, carry: string): void {
    const line = (k: number, of: string, where: string) => {
      if (k)
        this.#host.log?.(
          `${what} ${k} reasoning part${k === 1 ? '' : 's'} of another ${of}${sep} ${this.provider} requests${where} ${carry} carry them`,
        );
    };
    line(n.dialect, 'dialect', '');
    line(n.origin, 'server or model', ` to ${this.model} at ${this.#cfg.baseUrl}`);
  }
  readonly #now = (): number => (this.#host.now ? this.#host.now() : Date.now());

  #prompt(origin: 'submit' | 'notify', text: string): void {
    this.#checkOpen();
    if (typeof text !== 'string') throw new ClmError('EINVAL', 'prompt must be a string');
    this.#checkIdle();
    this.#start(origin, (ctx, signal) => runTurn(ctx, origin, text, signal));
  }

  #start(origin: TurnOrigin, run: (ctx: TurnContext, signal: AbortSignal) => Promise<TurnEnd>): void {
    const turn: Turn = { origin, controller: new AbortController() };
    this.#turn = turn;
    this.#cancelling = false;
    this.#err = '';
    const ctx: TurnContext = {
      host: this.#host,
      history: this.#history,
      registry: this.#registry,
      conn: this.#conn,
      toolLimiter: this.#toolLimiter,
      retryBaseMs: this.#retryBaseMs,
      // What a turn reports after it has ended (a callback cancelled it) goes nowhere.
      emit: (e) => {
        if (this.#turn === turn) this.#emit(e);
      },
      overThreshold: () => this.overAutocompactThreshold(),
      contextUpdate: () => this.#stamps.update(),
      notify: (text) => {
        if (!this.#closed) this.notify(text);
      },
      permission: () => gateOf(this.#listeners.callbacks, this.#registry),
      beforeChanges: this.#beforeChanges,
      nothingToAutocompact: () => {
        if (this.#turn === turn) this.#nothingToAutocompact();
      },
    };
    run(ctx, turn.controller.signal).then(
      (end) => this.#finish(turn, end),
      (e: unknown) => {
        // A cancelled or closed turn was ended already; anything else is a bug, not a hang.
        if (!(e instanceof TurnAborted)) this.#finish(turn, { status: EIO, state: 'error', error: `internal error: ${messageOf(e)}` });
      },
    );
  }

  /** The single exit of every turn (a later call for the same turn does nothing). */
  #finish(turn: Turn, end: TurnEnd): void {
    if (this.#turn !== turn || this.#ending) return;
    if (end.error !== undefined) this.#err = end.error;
    // Still busy during the final state change, so a turn started from onState waits for turn_done.
    this.#ending = true;
    try {
      this.#emit({ type: 'state', state: end.state });
    } finally {
      this.#ending = false;
    }
    if (this.#turn !== turn) return;
    this.#turn = null;
    this.#emit(
      end.status !== 0 && this.#err
        ? { type: 'turn_done', status: end.status, error: this.#err }
        : { type: 'turn_done', status: end.status },
    );
    this.#afterTurn(turn.origin, end.status);
  }

  /** After a turn_done: the end-of-turn compaction, else queued notifications — unless a callback started a turn (or closed the agent); then they wait. */
  #afterTurn(origin: TurnOrigin, status: TurnStatus): void {
    if (this.#closed || this.#turn) return;
    const compacting = origin !== 'submit' && origin !== 'notify';
    if (this.#cfg.autocompactAtTurnEnd && !compacting && (status === 0 || status === ECANCELED) && this.overAutocompactThreshold()) {
      // Nothing to fold is known without asking the model: no compaction turn then.
      if (canCompact(this.#history)) {
        this.#start('autocompact', (ctx, signal) => runCompactionTurn(ctx, 'autocompact', signal));
        return;
      }
      this.#nothingToAutocompact();
      if (this.#closed || this.#turn) return;
    }
    if (!this.#notifyQueue.length) return;
    const text = this.#notifyQueue.join('\n\n');
    this.#notifyQueue = [];
    this.#prompt('notify', text);
  }

  readonly #emit = (e: AgentEvent): void => {
    if (this.#closed) return;
    this.#track(e);
    this.#listeners.emit(e);
  };

  #nothingToAutocompact(): void {
    if (this.#nothingToFoldSaid) return;
    this.#nothingToFoldSaid = true;
    this.#emit({ type: 'notice', text: NOTHING_TO_AUTOCOMPACT });
  }

  /** What the agent reports (state, context use, last error, the mid-chain flags) follows its own events. */
  #track(e: AgentEvent): void {
    if (e.type === 'state') this.#st = e.state;
    else if (e.type === 'usage') {
      this.#used = e.usage.promptTokens + e.usage.completionTokens;
      this.#usedReported = true;
    } else if (e.type === 'compaction') {
      this.#midChain.observe(e);
      // A mid-chain compaction starts from nothing used; any fold leaves nothing used.
      if (e.phase === 'succeeded' || (e.phase === 'started' && e.kind === 'mid_chain')) {
        this.#used = 0;
        this.#usedReported = false;
      }
      // A fold: the next time there is nothing to fold is news again.
      if (e.phase === 'succeeded') this.#nothingToFoldSaid = false;
      else if (e.phase === 'failed') this.#err = e.error;
    }
  }

  #append(m: Message): void {
    this.#history.push(m);
    this.#emit({ type: 'message', message: m });
  }

  #checkOpen(): void {
    if (this.#closed) throw new ClmError('EINVAL', 'agent is closed');
  }

  #checkIdle(): void {
    if (!this.#turn) return;
    this.#err = 'turn already in progress';
    throw new ClmError('EBUSY', 'turn already in progress');
  }
}

addDispose(Agent);

/** Enough of a ProviderAdapter to pick it by kind (an `undefined` from a misspelt import is not). */
function isAdapter(d: unknown): d is ProviderAdapter {
  return typeof d === 'object' && d !== null && typeof (d as ProviderAdapter).kind === 'string';
}

/** createAgent(cfg, host, callbacks): the seed's clm_agent_new. It speaks every dialect unless `opts.dialects` names some. */
export function createAgent(cfg: AgentConfig, host: Host, callbacks?: AgentCallbacks, opts?: AgentOptions): Agent {
  return new Agent(cfg, host, callbacks, { ...opts, dialects: opts?.dialects ?? DIALECTS });
}
