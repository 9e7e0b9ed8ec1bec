// Compaction: ask the model for a summary of the conversation (one extra request, no tools),
// fold the older history into it, and report what was folded — or why nothing was.

import { EAGAIN, EIO } from './errors.js';
import type { CompactionEvent, CompactionKind } from './events.js';
import { estimateTokens, foldHistory, SUMMARY_PROMPT } from './history.js';
import { requestReply } from './llm-call.js';
import type { ParsedReply } from './providers/adapter.js';
import { withoutReasoning } from './reasoning.js';
import type { Emit, TurnContext } from './turn.js';
import type { CompactionRecord, Message } from './types.js';
import { DEFAULT_MAX_TOKENS, requestTarget } from './config.js';

export type CompactionOutcome =
  | { ok: true }
  | { ok: false; cancelled?: undefined; status: typeof EIO | typeof EAGAIN; error: string }
  /** The server side cancelled the request (an agent cancel unwinds the turn instead). */
  | { ok: false; cancelled: true };

/** Compact the history in place; `emit` stops the compaction when a callback cancels. */
export async function compactHistory(ctx: TurnContext, kind: CompactionKind, emit: Emit, signal: AbortSignal): Promise<CompactionOutcome> {
  emit({ type: 'compaction', kind, phase: 'started' });
  emit({ type: 'state', state: 'thinking' });
  const { cfg, adapter } = ctx.conn;
  // The summary request asks for no reasoning and carries none: its calls go as text, and a
  // signature without the tool_use it was made for does not verify.
  const body = adapter.buildRequest({
    model: ctx.conn.model,
    messages: withoutReasoning([...ctx.history, { role: 'user', content: SUMMARY_PROMPT }]),
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
      onRetryWait: () => ctx.emit({ type: 'state', state: 'rate_limited' }),
      onRetrySend: () => ctx.emit({ type: 'state', state: 'thinking' }),
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

/** Fold the history into the reply's summary (its text, else its reasoning). */
function fold(history: Message[], reply: ParsedReply): CompactionRecord | { status: typeof EIO | typeof EAGAIN; error: string } {
  const summary = reply.content?.trim() ? reply.content : reply.reasoning?.trim() ? reply.reasoning : '';
  if (!summary) return { status: EIO, error: 'compaction produced no summary' };
  const text = summary.trim();
  const f = foldHistory(history, text);
  if (f.count === 0) return { status: EAGAIN, error: 'compaction made no progress' };
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
