// Compaction: ask the model for a summary of the conversation (one extra request, no tools),
// fold the older history into it, and report what was folded — or why nothing was. A history
// that holds nothing to fold (only what compaction keeps) is not asked about at all: that is not
// a failure, and costs no request.

import { EIO } from './errors.js';
import type { CompactionEvent, CompactionKind } from './events.js';
import { estimateTokens, foldHistory, foldRange, SUMMARY_PROMPT } from './history.js';
import { requestReply } from './llm-call.js';
import type { ParsedReply } from './providers/adapter.js';
import { withoutReasoning } from './reasoning.js';
import type { TurnContext } from './turn-context.js';
import type { CompactionRecord, Message } from './types.js';
import { DEFAULT_MAX_TOKENS, requestTarget } from './connection.js';

/** Why nothing was compacted, for a compaction asked for. */
export const NOTHING_TO_COMPACT = 'nothing to compact: the conversation holds only its latest turns, which compaction keeps whole';
/** The same, once, for the automatic compaction (between tool rounds, after a turn). */
export const NOTHING_TO_AUTOCOMPACT =
  'the context is over the compaction threshold, but there is nothing to compact yet: the conversation holds only its latest turns, which compaction keeps whole';

export type CompactionOutcome =
  | { ok: true }
  | { ok: false; cancelled?: undefined; nothing?: undefined; status: typeof EIO; error: string }
  /** Nothing to fold: no request was sent, no compaction event went out. */
  | { ok: false; cancelled?: undefined; nothing: true }
  /** The server side cancelled the request (an agent cancel unwinds the turn instead). */
  | { ok: false; cancelled: true };

/** Whether compaction would fold anything of this history. */
export function canCompact(history: readonly Message[]): boolean {
  return foldRange(history).count > 0;
}

/** Compact the history in place; a cancel (also from a callback) stops it at the request. */
export async function compactHistory(ctx: TurnContext, kind: CompactionKind, signal: AbortSignal): Promise<CompactionOutcome> {
  if (!canCompact(ctx.history)) return { ok: false, nothing: true };
  const { emit } = ctx;
  emit({ type: 'compaction', kind, phase: 'started' });
  emit({ type: 'state', state: 'thinking' });
  const { cfg, adapter } = ctx.conn;
  // The summary request asks for no reasoning and carries none: its calls go as text, and a
  // signature without the tool_use it was made for does not verify.
  const body = adapter.buildRequest({
    model: ctx.conn.model,
    messages: withoutReasoning(summaryInput(ctx.history, cfg.contextSize || ctx.conn.ctxLearned)),
    tools: null,
    stream: false,
    disableParallelToolCalls: false,
    maxTokens: cfg.maxTokens ?? DEFAULT_MAX_TOKENS,
  });
  // The summary request bypasses the request limiter and retries without notices.
  const r = await requestReply(
    {
      host: ctx.host,
      ...requestTarget(ctx.conn),
      body,
      stream: false,
      retryBaseMs: ctx.retryBaseMs,
      onRetryWait: () => emit({ type: 'state', state: 'rate_limited' }),
      onRetrySend: () => emit({ type: 'state', state: 'thinking' }),
    },
    signal,
  );
  if (!r.ok && r.failure.cancelled) return { ok: false, cancelled: true };
  const before = { messages: ctx.history.length, tokens: estimateTokens(ctx.history) };
  const folded = r.ok ? fold(ctx.history, r.reply) : ({ status: EIO, error: `compaction request failed: ${r.failure.message}` } as const);
  if ('error' in folded) {
    if (kind === 'mid_chain') ctx.host.log?.(`mid-chain compaction failed: ${folded.error}`);
    emit({ type: 'compaction', kind, phase: 'failed', error: folded.error });
    return { ok: false, ...folded };
  }
  const after = { messages: ctx.history.length, tokens: estimateTokens(ctx.history) };
  emit({
    type: 'compaction',
    kind,
    phase: 'succeeded',
    record: folded,
    messagesBefore: before.messages,
    messagesAfter: after.messages,
    tokensBefore: before.tokens,
    tokensAfter: after.tokens,
  });
  emit({
    type: 'notice',
    text: `compacted ${folded.count} messages into a summary: ${before.messages} → ${after.messages} messages, ~${before.tokens} → ~${after.tokens} tokens`,
  });
  return { ok: true };
}

/**
 * What the summary request carries: the whole conversation and the summary prompt, or, when it
 * fills more than 90 % of a known context window and leaves no room for the summary (a session
 * resumed with a model of a smaller window, one huge tool output), the system messages, the
 * conversation's first message (the task, or the summary of an earlier compaction) and the
 * newest messages that fill up to 60 % of it (the estimate is rough), from a user or assistant
 * message on (no tool result without its call), the prompt saying how many were left out. The
 * fold is the same either way.
 */
export function summaryInput(history: readonly Message[], ctxMax: number): Message[] {
  let first = 0;
  while (history[first]?.role === 'system') first++;
  let from = first + 1;
  if (ctxMax > 0 && estimateTokens(history) > ctxMax * 0.9) {
    let room = ctxMax * 0.6 - estimateTokens(history.slice(0, from));
    // The newest message that can start what is sent always goes, even alone over: the server then says so.
    for (let i = history.length - 1, last = history.length; i > first; i--)
      if ((room -= estimateTokens([history[i]!])) < 0 && last < history.length) break;
      else if (history[i]!.role !== 'tool') from = last = i;
  }
  const left = from - first - 1;
  return [
    ...history.slice(0, first + 1),
    ...history.slice(from),
    { role: 'user', content: (left ? `(${left} older messages left out: they did not fit the context window.) ` : '') + SUMMARY_PROMPT },
  ];
}

/** Fold the history into the reply's summary (its text, else its reasoning); canCompact said there is something to fold. */
function fold(history: Message[], reply: ParsedReply): CompactionRecord | { status: typeof EIO; error: string } {
  const summary = reply.content?.trim() ? reply.content : reply.reasoning?.trim() ? reply.reasoning : '';
  if (!summary) return { status: EIO, error: 'compaction produced no summary' };
  const text = summary.trim();
  const f = foldHistory(history, text);
  const systemBefore = history.slice(0, f.at).filter((m) => m.role === 'system').length;
  return { index: f.at - systemBefore, count: f.count, summary: text };
}

/**
 * The seed's consuming mid-chain flags (takeMidChainCompactStarted/Succeeded/Error), set from
 * the compaction events as they go out, so both always agree.
 */
export class MidChainFlags {
  #flags = { started: false, succeeded: false, error: false };

  observe(e: CompactionEvent): void {
    if (e.kind !== 'mid_chain') return;
    if (e.phase === 'started') this.#flags.started = true;
    else if (e.phase === 'succeeded') {
      this.#flags.succeeded = true;
      this.#flags.error = false;
    } else this.#flags.error = true;
  }

  /** The flag, cleared on read. */
  take(name: 'started' | 'succeeded' | 'error'): boolean {
    const v = this.#flags[name];
    this.#flags[name] = false;
    return v;
  }
}
