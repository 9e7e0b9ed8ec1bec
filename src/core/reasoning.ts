// Reasoning parts on assistant messages: the efforts a caller may ask for, which requests take a
// part back (its dialect's; for OpenAI chat parts, reasoning text and extra content, only the
// server and model that produced them), where a part sits among its message's tool calls, its readable text, and
// histories without the parts a request must not carry.

import { mapReasoningItemText, reasoningItemText } from './providers/reasoning-item.js';
import type { AssistantMessage, Message, ReasoningEffort, ReasoningPart, ReasoningTarget } from './types.js';

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

/** What a person can read of a part: the thinking, the summaries (or the raw reasoning text); '' for redacted thinking and extra content. */
export function reasoningText(p: ReasoningPart): string {
  if (p.type === 'thinking') return p.thinking;
  if (p.type === 'reasoning_text') return p.text;
  return p.type === 'reasoning' ? reasoningItemText(p.item) : '';
}

/**
 * The part with `f` applied to what a person can read of it (e.g. masking secrets); encrypted
 * data and extra content (a signature, not text) are untouched. null when `f` changes signed
 * thinking: changed, it no longer matches its signature, and no request could carry it.
 * Unsigned reasoning text is simply changed.
 */
export function mapReasoningText(p: ReasoningPart, f: (text: string) => string): ReasoningPart | null {
  if (p.type === 'thinking') return f(p.thinking) === p.thinking ? p : null;
  if (p.type === 'reasoning_text') return { ...p, text: f(p.text) };
  return p.type === 'reasoning' ? { ...p, item: mapReasoningItemText(p.item, f) } : p;
}

/**
 * Who produced a chat reply's reasoning text or extra content: the model and the endpoint,
 * without credentials or query (a session file keeps it). Only requests to the same pair carry
 * them back: another server refuses the field, another model never wrote that text or signature.
 */
export function reasoningOrigin(baseUrl: string, model: string): string {
  const url = baseUrl.replace(/[?#][\s\S]*$/, '').replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
  return `${model}@${url}`;
}

/**
 * Why requests to `to` do not carry `p` back: another dialect produced it (only that dialect can
 * verify it), or another server or model (only they know the field and what it holds); null when they carry it.
 */
export function foreignness(to: ReasoningTarget, p: ReasoningPart): 'dialect' | 'origin' | null {
  if (p.dialect !== 'openai') return p.dialect === to.kind ? null : 'dialect';
  // Ollama's endpoint speaks the chat dialect too.
  if (to.kind !== 'openai' && to.kind !== 'ollama') return 'dialect';
  return p.origin === to.origin ? null : 'origin';
}

function without(m: AssistantMessage, keep: (p: ReasoningPart) => boolean): AssistantMessage {
  const kept = m.reasoning!.filter(keep);
  const { reasoning: _dropped, ...rest } = m;
  return kept.length ? { ...rest, reasoning: kept } : rest;
}

/** How many parts requests to a target do not carry, by why. */
export interface ForeignCount {
  /** Another dialect produced them. */
  dialect: number;
  /** Another server or model of the chat dialect produced them. */
  origin: number;
}

/**
 * Replace, in place, every message holding parts `drop` picks by a copy without them (messages
 * are immutable values). Returns how many parts were dropped.
 */
export function dropReasoning(history: Message[], drop: (p: ReasoningPart) => boolean): number {
  let n = 0;
  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    if (m.role !== 'assistant' || !m.reasoning?.length) continue;
    const dropped = m.reasoning.filter(drop).length;
    if (!dropped) continue;
    history[i] = without(m, (p) => !drop(p));
    n += dropped;
  }
  return n;
}

/** Drop, in place, every part requests to `to` cannot carry; returns how many, by why. */
export function dropForeignReasoning(history: Message[], to: ReasoningTarget): ForeignCount {
  const n = foreignReasoningCount(history, to);
  if (n.dialect || n.origin) dropReasoning(history, (p) => foreignness(to, p) !== null);
  return n;
}

/** The parts in `messages` that requests to `to` do not carry, by why. */
export function foreignReasoningCount(messages: readonly Message[], to: ReasoningTarget): ForeignCount {
  const n: ForeignCount = { dialect: 0, origin: 0 };
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const p of m.reasoning ?? []) {
      const why = foreignness(to, p);
      if (why) n[why]++;
    }
  }
  return n;
}

/** `messages` with no reasoning parts at all (a summary request carries none); unchanged messages stay the same objects. */
export function withoutReasoning(messages: readonly Message[]): Message[] {
  return messages.map((m) => (m.role === 'assistant' && m.reasoning ? without(m, () => false) : m));
}
