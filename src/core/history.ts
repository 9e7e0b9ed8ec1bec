// History surgery: the system prologue with its time stamp, `[context update]` refreshes,
// compaction folds and volatile-tool supersede stubs. Messages are never edited in place:
// a changed entry is replaced by a new object, so per-message wire caches stay valid.

import type { Message } from './types.js';
import { reasoningText } from './reasoning.js';
import { rfc2822 } from './time-stamp.js';

/** The library's default: it invites whatever tools the program registers, whatever they reach. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are a helpful assistant. Answer from your own knowledge whenever you can, and use the provided tools ' +
  'when the task needs what they do. When you already have the answer, reply directly without using tools.';

const TIME_NOTE =
  '\n\nYou may periodically receive a line beginning with "[context update]" carrying the current date and time. ' +
  'Treat it as silent ambient context, not as a message from the user. Never announce, repeat, or comment on the ' +
  'time unless the user explicitly asks about the date or time.';

export const CONTEXT_UPDATE_PREFIX = '[context update]';
/** Seconds between time refreshes. */
export const TIME_REFRESH_S = 600;

export const SUMMARY_PROMPT =
  'Summarize the conversation so far into a compact briefing that lets you continue seamlessly. Preserve: ' +
  'decisions made, file paths touched, commands run and their outcomes, and any open tasks or unresolved ' +
  'problems. Be terse and factual. Output only the summary.';

/** Recent user turns kept verbatim by a compaction. */
export const COMPACT_KEEP_RECENT = 2;

export function systemMessage(base: string | undefined, now: Date): Message {
  return { role: 'system', content: `${base ?? DEFAULT_SYSTEM_PROMPT}\n\ncurrent time: ${rfc2822(now)}${TIME_NOTE}` };
}

/** A conversation's time stamps: the system prompt's, then a `[context update]` once TIME_REFRESH_S passed. */
export class TimeStamps {
  #last = 0;
  readonly #clock: () => Date;
  constructor(clock: () => Date) {
    this.#clock = clock;
  }

  /** A fresh system message, stamped now. */
  system(base: string | undefined): Message {
    const now = this.#clock();
    this.#last = now.getTime();
    return systemMessage(base, now);
  }

  /** The `[context update]` message when one is due (then stamped now), else null. */
  update(): Message | null {
    const now = this.#clock();
    if (now.getTime() - this.#last < TIME_REFRESH_S * 1000) return null;
    this.#last = now.getTime();
    return contextUpdateMessage(now);
  }
}

export function contextUpdateMessage(now: Date): Message {
  return {
    role: 'user',
    content: `${CONTEXT_UPDATE_PREFIX} current time: ${rfc2822(now)}\n(automatic context, not user input; do not acknowledge)`,
  };
}

/** What a fold did: `count` messages from index `at` became one summary message (count 0 = nothing). */
export interface Fold {
  at: number;
  count: number;
}

/**
 * Fold older turns into `summary`, keeping leading system messages and the last
 * COMPACT_KEEP_RECENT user turns; falls back to the agentic form (keep the mission, i.e. the
 * first user message, and the last COMPACT_KEEP_RECENT tool exchanges) for one long tool chain.
 * A fold of 0 messages means no progress; the history is then unchanged.
 */
export function foldHistory(h: Message[], summary: string, keep = COMPACT_KEEP_RECENT): Fold {
  const f = foldRange(h, keep);
  if (f.count > 0) applyFold(h, f, summary);
  return f;
}

/** What foldHistory would fold, without folding (count 0: nothing, so no summary is worth asking for). */
export function foldRange(h: readonly Message[], keep = COMPACT_KEEP_RECENT): Fold {
  let start = 0;
  while (start < h.length && h[start]!.role === 'system') start++;
  let foldFrom = start;
  let cut = nthLast(h, keep, start - 1, (m) => m.role === 'user');
  if (cut <= start) {
    // Agentic fallback: keep the mission verbatim, cut at the keep-th last tool-call message.
    const mission = h.findIndex((m, i) => i >= start && m.role === 'user');
    if (mission < 0) return { at: start, count: 0 };
    foldFrom = mission + 1;
    cut = nthLast(h, keep, mission, hasCalls);
    if (cut <= foldFrom) return { at: foldFrom, count: 0 };
  }
  return { at: foldFrom, count: cut - foldFrom };
}

const hasCalls = (m: Message) => m.role === 'assistant' && !!m.toolCalls?.length;

/** The index of the `n`-th message from the end, after index `after`, that `is` one; -1 when there are fewer. */
function nthLast(h: readonly Message[], n: number, after: number, is: (m: Message) => boolean): number {
  for (let i = h.length - 1; i > after; i--) if (is(h[i]!) && --n === 0) return i;
  return -1;
}

/** Replace the folded messages by the summary (also used to replay a saved session's compactions). */
export function applyFold(h: Message[], f: Fold, summary: string): void {
  h.splice(f.at, f.count, { role: 'user', content: summary });
}

export function supersedeStub(tool: string): string {
  return `[superseded by newer ${tool}]`;
}

/**
 * Replace every earlier result of `tool` before the current batch head (the last assistant
 * message with tool calls) by a stub. Returns how many were replaced; idempotent.
 */
export function supersede(h: Message[], tool: string): number {
  const head = nthLast(h, 1, -1, hasCalls);
  const stub = supersedeStub(tool);
  let n = 0;
  for (let i = 0; i < head; i++) {
    const m = h[i]!;
    if (m.role === 'tool' && m.toolName === tool && m.content !== stub) {
      h[i] = { ...m, content: stub };
      n++;
    }
  }
  return n;
}

/** Rough token estimate (chars / 4) of messages and their readable reasoning, for compaction notices. */
export function estimateTokens(h: readonly Message[]): number {
  let chars = 0;
  for (const m of h) {
    chars += (m.content?.length ?? 0) + 8;
    for (const c of m.toolCalls ?? []) chars += c.name.length + c.args.length + 16;
    if (m.role === 'assistant') for (const p of m.reasoning ?? []) chars += reasoningText(p).length;
  }
  return Math.ceil(chars / 4);
}
