// A turn as one loop: the prompt goes into the history, then rate-limit wait → model request
// (with retries) → tool batch → mid-chain compaction when over the threshold → again, until the
// model answers without tools, the iteration limit, an error, or cancellation.
//
// Cancellation is one AbortSignal per turn. The agent ends a cancelled turn at once and drops
// whatever the turn reports after that; the loop only has to stop. Events go out through the one
// `ctx.emit`, which never throws (it also runs inside stream deltas and tool results, where a
// throw would land in someone else's code), so a callback that cancels or closes the agent stops
// the loop at its next step: every step that would change the history or start work (an append,
// a request, a wait) checks the signal first, and every await rejects with its reason. A
// reply cancelled before it went into the history goes in as what was shown of it, marked.

import { cancelledReply } from './cancelled-reply.js';
import { compactHistory, NOTHING_TO_COMPACT } from './compaction.js';
import { DEFAULT_MAX_TOKENS, requestTarget } from './connection.js';
import { duration } from './duration.js';
import { E2BIG, EAGAIN, ECANCELED, EIO, messageOf } from './errors.js';
import type { TurnOrigin } from './events.js';
import { matchesAny } from './fnmatch.js';
import { supersede } from './history.js';
import type { Host } from './host.js';
import { bodySize, bodyText, requestReply, type LlmResult, type RequestBody } from './llm-call.js';
import { ToolBatch } from './tool-batch.js';
import type { BuildRequestOptions } from './providers/adapter.js';
import type { TurnContext } from './turn-context.js';
import type { AssistantMessage, Message, ReasoningPart, ToolCall, TurnStatus } from './types.js';

export const TOOLS_UNSUPPORTED_NOTICE = 'model does not support tool calls; continuing without tools';

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

const DONE: TurnEnd = { status: 0, state: 'complete' };
const CANCELLED: TurnEnd = { status: ECANCELED, state: 'complete' };
/** A compaction with nothing to fold: not a failure (the state is not `error`), but not 0 either. */
const NOTHING_FOLDED: TurnEnd = { status: EAGAIN, state: 'complete' };

export async function runTurn(ctx: TurnContext, origin: 'submit' | 'notify', prompt: string, signal: AbortSignal): Promise<TurnEnd> {
  const { emit } = ctx;
  emit({ type: 'turn_start', origin, prompt });
  signal.throwIfAborted();
  const update = ctx.contextUpdate();
  if (update) append(ctx, update, signal);
  append(ctx, { role: 'user', content: prompt }, signal);
  emit({ type: 'state', state: 'thinking' });
  // The reply under way: the history's length when its request started (-1: none), its text so far.
  const open = { at: -1, shown: '' };
  signal.addEventListener(
    'abort',
    () => {
      // Inside cancel(), before the turn ends: the message event still goes out.
      if (open.at !== ctx.history.length || !(signal.reason instanceof TurnAborted) || signal.reason.by !== 'cancel') return;
      const m = cancelledReply(open.shown);
      ctx.history.push(m);
      ctx.emit({ type: 'message', message: m });
    },
    { once: true },
  );
  const maxIterations = ctx.conn.cfg.maxIterations ?? 0;
  for (let rounds = 0; ; ) {
    open.at = ctx.history.length;
    open.shown = '';
    const r = await modelReply(ctx, signal, (text) => {
      open.shown += text;
    });
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
          reasoning ? { role: 'assistant', content: reply.content, reasoning } : { role: 'assistant', content: reply.content },
          signal,
        );
      if (!streamed && reply.content) emit({ type: 'text', text: reply.content });
      return DONE;
    }
    // Text that came with the calls is kept with them (or, cancelled before they are, on its own).
    if (!streamed && reply.content) {
      open.shown = reply.content;
      emit({ type: 'text', text: reply.content });
    }
    await runTools(ctx, reply.toolCalls, reply.content || null, reasoning, signal);
    open.at = -1;
    if (maxIterations > 0 && ++rounds >= maxIterations) {
      return { status: E2BIG, state: 'error', error: `max iterations reached (${maxIterations} tool rounds in one turn)` };
    }
    if (ctx.overThreshold()) {
      // A failed mid-chain compaction is reported and the chain goes on unshrunk.
      const c = await compactHistory(ctx, 'mid_chain', signal);
      if (!c.ok && c.cancelled) return CANCELLED;
      if (!c.ok && c.nothing) ctx.nothingToAutocompact();
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
  ctx.emit({ type: 'turn_start', origin });
  const c = await compactHistory(ctx, origin === 'autocompact' ? 'end_of_turn' : 'manual', signal);
  if (c.ok) return DONE;
  if (c.cancelled) return CANCELLED;
  if (!c.nothing) return { status: c.status, state: 'error', error: c.error };
  if (origin === 'autocompact') ctx.nothingToAutocompact();
  else ctx.emit({ type: 'notice', text: NOTHING_TO_COMPACT });
  return NOTHING_FOLDED;
}

/** A message into the history, unless the turn was cancelled or closed meanwhile. */
function append(ctx: TurnContext, m: Message, signal: AbortSignal): void {
  signal.throwIfAborted();
  ctx.history.push(m);
  ctx.emit({ type: 'message', message: m });
}

/** One model reply: wait for the request limiter, send with retries; a model that refuses tools is asked again without them. `shown`: each streamed piece of text. */
async function modelReply(ctx: TurnContext, signal: AbortSignal, shown: (text: string) => void): Promise<LlmResult> {
  const { conn, host, emit } = ctx;
  const { cfg, adapter } = conn;
  for (;;) {
    signal.throwIfAborted();
    const tools = conn.toolsUnsupported ? null : ctx.registry.schema();
    // Pieces where the host sends them: a long conversation's body is not copied into one each round.
    const build: (o: BuildRequestOptions) => RequestBody =
      (host.bodyPieces && adapter.buildRequestPieces) || adapter.buildRequestBytes || adapter.buildRequest;
    const body: RequestBody = build.call(adapter, {
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
      const cost = Math.max(1, Math.floor(bodySize(body) / 4));
      const wait = conn.limiter.delay(cost);
      if (wait > 0 && host.setTimer) {
        emit({ type: 'state', state: 'rate_limited' });
        await sleep(host, wait, signal);
        conn.limiter.consume(cost);
        emit({ type: 'state', state: 'thinking' });
        signal.throwIfAborted();
      } else {
        conn.limiter.consume(cost);
      }
    }
    // Whole texts: the log masks secrets and then shortens (a cut before masking could leak one).
    if (host.log) host.log(`posting body: ${bodyText(body)}`);
    const show = (text: string) => {
      shown(text);
      emit({ type: 'text', text });
    };
    // The repair holds back text that may begin a call written as text; what it lets out is shown.
    const fix = cfg.repairToolCalls?.reply(tools, show, emit, host.log);
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
          emit({
            type: 'notice',
            text: `${why}; retrying in ${duration(ms)}`,
          });
          emit({ type: 'state', state: 'rate_limited' });
        },
        onRetrySend: () => emit({ type: 'state', state: 'thinking' }),
        onText: fix ? fix.text : show,
        onReasoning: (text) => emit({ type: 'reasoning', text }),
      },
      signal,
    );
    if (r.ok || r.failure.status !== undefined) conn.reached = true;
    if (r.ok && fix) r.reply = fix.end(r.reply);
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
  calls: ToolCall[],
  content: string | null,
  reasoning: ReasoningPart[] | undefined,
  signal: AbortSignal,
): Promise<void> {
  const { emit } = ctx;
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
    check: ctx.conn.cfg.repairToolCalls?.check,
    onBegin: (id, name, args) => emit({ type: 'tool_begin', id, name, args }),
    permission: ctx.permission,
    // Results are recorded even while the turn is being cancelled: that is how calls stay paired.
    onResult: (call, text, outcome, notRun) => {
      if (ctx.host.log) ctx.host.log(`[result] ${call.name} -> ${text}`);
      emit({ type: 'tool_result', id: call.id, name: call.name, content: text, outcome, ...(notRun && { notRun }) });
      if (matchesAny(ctx.conn.cfg.volatileTools, call.name)) supersede(ctx.history, call.name);
      const result: Message = { role: 'tool', content: text, toolCallId: call.id, toolName: call.name };
      ctx.history.push(result);
      emit({ type: 'message', message: result });
      emit({ type: 'tool_batch', completed: batch.completed, total: batch.total });
    },
    onProgress: (call, text) => emit({ type: 'tool_progress', id: call.id, name: call.name, text }),
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
    append(ctx, msg, signal);
    // The hook, unless the turn ends first (then `finished` rejects and the turn unwinds); a failing hook is a notice.
    const hook = ctx.beforeChanges;
    if (hook && calls.some((c) => !ctx.registry.get(c.name)?.def.readOnly))
      await Promise.race([
        Promise.resolve(signal)
          .then(hook)
          .catch((e: unknown) => ctx.emit({ type: 'notice', text: `before the tool calls: ${messageOf(e)}` })),
        finished,
      ]);
    batch.start();
    await finished;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function sleep(host: Host, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
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
