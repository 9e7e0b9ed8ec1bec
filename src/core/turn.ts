// A turn as one loop: the prompt goes into the history, then rate-limit wait → model request
// (with retries) → tool batch → mid-chain compaction when over the threshold → again, until the
// model answers without tools, the iteration limit, an error, or cancellation.
//
// Cancellation is one AbortSignal per turn. The agent ends a cancelled turn at once; the loop
// only has to stop: every await rejects with the signal's reason, and every event goes through
// `emit`, which stops the loop when a callback cancelled or closed the agent from inside.

import { compactHistory } from './compaction.js';
import { DEFAULT_MAX_TOKENS, requestTarget, type Connection } from './config.js';
import { duration } from './duration.js';
import { E2BIG, ECANCELED, EIO } from './errors.js';
import type { AgentEvent, TurnOrigin } from './events.js';
import { matchesAny } from './fnmatch.js';
import { supersede } from './history.js';
import type { Host } from './host.js';
import { requestReply, type LlmResult } from './llm-call.js';
import type { TokenBucket } from './ratelimit.js';
import { ToolBatch } from './tool-batch.js';
import type { ToolRegistry } from './tool-registry.js';
import type { AssistantMessage, Message, PermissionRequest, ReasoningPart, ToolCall, TurnStatus } from './types.js';

export const TOOLS_UNSUPPORTED_NOTICE = 'model does not support tool calls; continuing without tools';

/** What a turn works with; the agent makes one per turn. */
export interface TurnContext {
  readonly host: Host;
  readonly history: Message[];
  readonly registry: ToolRegistry;
  readonly conn: Connection;
  readonly toolLimiter: TokenBucket | null;
  readonly retryBaseMs: number;
  /** Report to the agent's callbacks and subscribers. */
  emit(e: AgentEvent): void;
  overThreshold(): boolean;
  /** The `[context update]` message when one is due (its time stamp is then taken), else null. */
  contextUpdate(): Message | null;
  /** A tool's text for a later user turn (bg_exec). */
  notify(text: string): void;
  /** Who decides gated tool calls, if anyone. */
  permission(): ((req: PermissionRequest) => void) | undefined;
}

export interface TurnEnd {
  status: TurnStatus;
  state: 'complete' | 'error';
  error?: string;
}

/** The reason a turn's signal aborts: cancel() ends the turn with ECANCELED, close() ends everything. */
export class TurnAborted extends Error {
  constructor(readonly by: 'cancel' | 'close') {
    super(by === 'cancel' ? 'cancelled by user' : 'agent closed');
  }
}

export type Emit = (e: AgentEvent) => void;

const DONE: TurnEnd = { status: 0, state: 'complete' };
const CANCELLED: TurnEnd = { status: ECANCELED, state: 'complete' };
const dec = new TextDecoder();

/** Events of a turn: each may run a callback that cancels or closes, and the turn stops there. */
function reporter(ctx: TurnContext, signal: AbortSignal): Emit {
  return (e) => {
    ctx.emit(e);
    signal.throwIfAborted();
  };
}

export async function runTurn(ctx: TurnContext, origin: 'submit' | 'notify', prompt: string, signal: AbortSignal): Promise<TurnEnd> {
  const emit = reporter(ctx, signal);
  emit({ type: 'turn_start', origin, prompt });
  const update = ctx.contextUpdate();
  if (update) append(ctx, emit, update);
  append(ctx, emit, { role: 'user', content: prompt });
  emit({ type: 'state', state: 'thinking' });
  const maxIterations = ctx.conn.cfg.maxIterations ?? 0;
  for (let rounds = 0; ; ) {
    const r = await modelReply(ctx, emit, signal);
    if (!r.ok) {
      if (r.failure.cancelled) return CANCELLED;
      ctx.host.log?.(`request failed: ${r.failure.message}`);
      return { status: EIO, state: 'error', error: r.failure.message };
    }
    const { reply, streamed } = r;
    if (reply.finishReason) emit({ type: 'finish', reason: reply.finishReason });
    if (reply.usage) {
      const { usage } = reply;
      emit({
        type: 'usage',
        usage,
        tokensPerSec: usage.tokensPerSec || r.tokensPerSec,
        measured: !usage.tokensPerSec && r.tokensPerSec > 0,
      });
    }
    if (!streamed && reply.reasoning !== null) emit({ type: 'reasoning', text: reply.reasoning });
    // The provider's reasoning stays with the message it came with, for the next request of the loop.
    const reasoning = reply.reasoningParts?.length ? reply.reasoningParts : undefined;
    if (!reply.toolCalls.length) {
      if (reply.content !== null)
        append(
          ctx,
          emit,
          reasoning ? { role: 'assistant', content: reply.content, reasoning } : { role: 'assistant', content: reply.content },
        );
      if (!streamed && reply.content) emit({ type: 'text', text: reply.content });
      return DONE;
    }
    // Text that came with the calls is kept with them.
    if (!streamed && reply.content) emit({ type: 'text', text: reply.content });
    await runTools(ctx, emit, reply.toolCalls, reply.content || null, reasoning, signal);
    if (maxIterations > 0 && ++rounds >= maxIterations) {
      return { status: E2BIG, state: 'error', error: `max iterations reached (${maxIterations} tool rounds in one turn)` };
    }
    if (ctx.overThreshold()) {
      // A failed mid-chain compaction is reported and the chain goes on unshrunk.
      const c = await compactHistory(ctx, 'mid_chain', emit, signal);
      if (!c.ok && c.cancelled) return CANCELLED;
    }
    emit({ type: 'state', state: 'thinking' });
  }
}

/** compact() as a turn of its own (explicit, a resumed conversation's, or the end-of-turn one). */
export async function runCompactionTurn(
  ctx: TurnContext,
  origin: Exclude<TurnOrigin, 'submit' | 'notify'>,
  signal: AbortSignal,
): Promise<TurnEnd> {
  const emit = reporter(ctx, signal);
  emit({ type: 'turn_start', origin });
  const c = await compactHistory(ctx, origin === 'autocompact' ? 'end_of_turn' : 'manual', emit, signal);
  if (c.ok) return DONE;
  return c.cancelled ? CANCELLED : { status: c.status, state: 'error', error: c.error };
}

function append(ctx: TurnContext, emit: Emit, m: Message): void {
  ctx.history.push(m);
  emit({ type: 'message', message: m });
}

/** One model reply: wait for the request limiter, send with retries; a model that refuses tools is asked again without them. */
async function modelReply(ctx: TurnContext, emit: Emit, signal: AbortSignal): Promise<LlmResult> {
  const { conn, host } = ctx;
  const { cfg, adapter } = conn;
  for (;;) {
    const tools = conn.toolsUnsupported ? null : ctx.registry.schema();
    const build = adapter.buildRequestBytes ? adapter.buildRequestBytes.bind(adapter) : adapter.buildRequest.bind(adapter);
    const body = build({
      model: conn.model,
      messages: ctx.history,
      tools: tools?.length ? tools : null,
      stream: cfg.stream ?? false,
      disableParallelToolCalls: !!cfg.disableParallelToolCalls,
      maxTokens: cfg.maxTokens ?? DEFAULT_MAX_TOKENS,
      reasoningEffort: cfg.reasoningEffort,
      origin: conn.target.origin,
      foreignRoundsAsText: conn.foreignRoundsAsText,
    });
    if (conn.limiter) {
      const cost = Math.max(1, Math.floor((typeof body === 'string' ? body.length : body.byteLength) / 4));
      const wait = conn.limiter.delay(cost);
      if (wait > 0 && host.setTimer) {
        emit({ type: 'state', state: 'rate_limited' });
        await sleep(host, wait, signal);
        conn.limiter.consume(cost);
        emit({ type: 'state', state: 'thinking' });
      } else {
        conn.limiter.consume(cost);
      }
    }
    // Whole texts: the log masks secrets and then shortens (a cut before masking could leak one).
    if (host.log) host.log(`posting body: ${typeof body === 'string' ? body : dec.decode(body)}`);
    const r = await requestReply(
      {
        host,
        ...requestTarget(conn),
        body,
        // `stream` asks for SSE; whether the reply came as deltas is reported per reply.
        stream: cfg.stream ?? false,
        retryBaseMs: ctx.retryBaseMs,
        firstContact: !conn.reached,
        onRetryWait: (ms, why) => {
          host.log?.(`retrying in ${ms} ms after ${why}`);
          // Said out loud: a retry wait can be long, and silence looks like a hang.
          ctx.emit({
            type: 'notice',
            text: `${why}; retrying in ${duration(ms)}`,
          });
          if (!signal.aborted) ctx.emit({ type: 'state', state: 'rate_limited' });
        },
        onRetrySend: () => ctx.emit({ type: 'state', state: 'thinking' }),
        onText: (text) => ctx.emit({ type: 'text', text }),
        onReasoning: (text) => ctx.emit({ type: 'reasoning', text }),
      },
      signal,
    );
    if (r.ok || r.failure.status !== undefined) conn.reached = true;
    if (!r.ok) {
      const f = r.failure;
      const changed = adapter.resend?.(f.status ?? 0, f.body ?? '', f.message, ctx.history, conn.target, conn);
      if (changed) {
        host.log?.(changed);
        continue;
      }
    }
    if (r.ok || conn.toolsUnsupported || !adapter.refusesTools(r.failure.status ?? 0, r.failure.body ?? '')) return r;
    conn.toolsUnsupported = true;
    emit({ type: 'notice', text: TOOLS_UNSUPPORTED_NOTICE });
  }
}

/**
 * One round of tool calls. The round announces itself before the tool-call message goes into
 * the history, so a cancel there leaves no call behind; from the message on, a cancel gives
 * every unfinished call a result, so each call in the history stays paired.
 */
async function runTools(
  ctx: TurnContext,
  emit: Emit,
  calls: ToolCall[],
  content: string | null,
  reasoning: ReasoningPart[] | undefined,
  signal: AbortSignal,
): Promise<void> {
  emit({ type: 'state', state: 'calling_tool' });
  const msg: AssistantMessage = { role: 'assistant', content, toolCalls: calls.map((c) => ({ ...c })) };
  if (reasoning) msg.reasoning = reasoning;
  emit({ type: 'tool_batch', completed: 0, total: calls.length });
  let done!: () => void;
  let stop!: (reason: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    stop = reject;
  });
  finished.catch(() => {
    /* the turn unwinds through the rejection of whatever it awaits */
  });
  const batch: ToolBatch = new ToolBatch(msg.toolCalls!, {
    registry: ctx.registry,
    host: ctx.host,
    toolLimiter: ctx.toolLimiter,
    maxParallel: ctx.conn.cfg.maxParallelTools,
    onBegin: (id, name, args) => ctx.emit({ type: 'tool_begin', id, name, args }),
    permission: ctx.permission,
    // Results are recorded even while the turn is being cancelled: that is how calls stay paired.
    onResult: (call, text, outcome) => {
      if (ctx.host.log) ctx.host.log(`[result] ${call.name} -> ${text}`);
      ctx.emit({ type: 'tool_result', id: call.id, name: call.name, content: text, outcome });
      if (matchesAny(ctx.conn.cfg.volatileTools, call.name)) supersede(ctx.history, call.name);
      const result: Message = { role: 'tool', content: text, toolCallId: call.id, toolName: call.name };
      ctx.history.push(result);
      ctx.emit({ type: 'message', message: result });
      ctx.emit({ type: 'tool_batch', completed: batch.completed, total: batch.total });
    },
    onDone: () => {
      if (!signal.aborted) done();
    },
    notify: ctx.notify,
    log: (l) => ctx.host.log?.(l),
  });
  const onAbort = () => {
    if (signal.reason instanceof TurnAborted && signal.reason.by === 'close') {
      // Closed: no more events, but every call still running gets a result in the history, so
      // it stays one that restoreHistory and the next request accept.
      for (const c of batch.detach())
        ctx.history.push({ role: 'tool', content: '[tool failed: agent closed]', toolCallId: c.id, toolName: c.name });
    } else {
      batch.cancel('cancelled by user');
    }
    stop(signal.reason);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    append(ctx, emit, msg);
    batch.start();
    await finished;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function sleep(host: Host, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = host.setTimer!(ms, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    const onAbort = () => {
      timer.cancel();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
