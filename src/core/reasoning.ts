// Reasoning parts on assistant messages: the efforts a caller may ask for, which dialect takes a
// part back, where a part sits among its message's tool calls, its readable text, and histories
// without the parts a request must not carry.

import { mapReasoningItemText, reasoningItemText } from './providers/reasoning-item.js';
import type { AssistantMessage, Message, ProviderKind, ReasoningEffort, ReasoningPart } from './types.js';

export const REASONING_EFFORTS: readonly ReasoningEffort[] = ['low', 'medium', 'high'];

export function isReasoningEffort(v: unknown): v is ReasoningEffort {
  return typeof v === 'string' && (REASONING_EFFORTS as readonly string[]).includes(v);
}

type PartOf<D extends ReasoningPart['dialect']> = Extract<ReasoningPart, { dialect: D }>;

/** Where a part goes: before call `beforeCall`, clamped to 0 … the number of calls. */
function position(p: ReasoningPart, calls: number): number {
  const at = p.beforeCall ?? 0;
  return at <= 0 ? 0 : at >= calls ? calls : Math.floor(at);
}

/** `p` placed before call `calls` of its message (0, the start, is left implicit). */
export function placed<P extends ReasoningPart>(p: P, calls: number): P {
  return calls ? { ...p, beforeCall: calls } : p;
}

/**
 * The parts of `m` in `dialect` that go right before call `i` (0: before the text and every
 * call; the number of calls: after the last one), in their order.
 */
export function reasoningAt<D extends ReasoningPart['dialect']>(m: AssistantMessage, dialect: D, i: number, calls: number): PartOf<D>[] {
  const out: PartOf<D>[] = [];
  for (const p of m.reasoning ?? []) if (p.dialect === dialect && position(p, calls) === i) out.push(p as PartOf<D>);
  return out;
}

/** What a person can read of a part: the thinking, the summaries (or the raw reasoning text); '' for redacted thinking. */
export function reasoningText(p: ReasoningPart): string {
  if (p.type === 'thinking') return p.thinking;
  if (p.type === 'redacted_thinking') return '';
  return reasoningItemText(p.item);
}

/**
 * The part with `f` applied to what a person can read of it (e.g. masking secrets); encrypted
 * data is untouched. null when `f` changes signed thinking: changed, it no longer matches its
 * signature, and no request could carry it.
 */
export function mapReasoningText(p: ReasoningPart, f: (text: string) => string): ReasoningPart | null {
  if (p.type === 'redacted_thinking') return p;
  if (p.type === 'thinking') return f(p.thinking) === p.thinking ? p : null;
  return { ...p, item: mapReasoningItemText(p.item, f) };
}

/** Whether requests of `kind` carry this part back (only the dialect that produced it can verify it). */
export function takesReasoning(kind: ProviderKind, p: ReasoningPart): boolean {
  return p.dialect === kind;
}

function without(m: AssistantMessage, keep: (p: ReasoningPart) => boolean): AssistantMessage {
  const kept = m.reasoning!.filter(keep);
  const { reasoning: _dropped, ...rest } = m;
  return kept.length ? { ...rest, reasoning: kept } : rest;
}

/**
 * Replace, in place, every message holding parts `kind` cannot take by a copy without them
 * (messages are immutable values). Returns how many parts were dropped.
 */
export function dropForeignReasoning(history: Message[], kind: ProviderKind): number {
  let n = 0;
  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    if (m.role !== 'assistant' || !m.reasoning?.length) continue;
    const foreign = m.reasoning.filter((p) => !takesReasoning(kind, p)).length;
    if (!foreign) continue;
    history[i] = without(m, (p) => takesReasoning(kind, p));
    n += foreign;
  }
  return n;
}

/** The parts in `messages` that requests of `kind` do not carry. */
export function foreignReasoningCount(messages: readonly Message[], kind: ProviderKind): number {
  let n = 0;
  for (const m of messages) if (m.role === 'assistant') for (const p of m.reasoning ?? []) if (!takesReasoning(kind, p)) n++;
  return n;
}

/** `messages` with no reasoning parts at all (a summary request carries none); unchanged messages stay the same objects. */
export function withoutReasoning(messages: readonly Message[]): Message[] {
  return messages.map((m) => (m.role === 'assistant' && m.reasoning ? without(m, () => false) : m));
}
