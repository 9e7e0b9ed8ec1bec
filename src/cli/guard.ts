// What every event of a run passes, once, where the runtime fans it out to the front ends: the
// run's secrets masked in every string (streamed text across its pieces, and a running call's
// output so far, holding back only an ending that could start a secret), and the names a model makes up (tool names) made printable
// and cut to a length. Then each front end gets its view of the event:
// - 'data' (json, stream-json): the values' bytes as they are;
// - 'terminal' (text output, the REPL): every control shown, not obeyed (forTerminal);
// - 'screen' (the interactive UI, whose painter removes controls itself): invisible characters shown.

import { clip, MAX_NAME } from '../core/clip.js';
import type { AgentEvent } from '../core/events.js';
import { mapReasoningText } from '../core/reasoning.js';
import { forTerminal, showInvisible } from '../core/terminal-text.js';
import type { AssistantMessage, CompactionRecord, Message } from '../core/types.js';
import type { Secrets, SecretStream } from '../host/redact.js';
import type { RunSummary } from './run-summary.js';
import type { RuntimeEvent } from './runtime-events.js';

export type GuardedEvent = AgentEvent | RuntimeEvent;

/** How a front end shows text (see above). */
export type EventView = 'data' | 'terminal' | 'screen';

/** A name a model or a server supplied, as clm prints it anywhere: printable, and cut to MAX_NAME. */
export function printableName(name: string): string {
  return forTerminal(clip(name, MAX_NAME));
}

/** Masks the events of a run for every front end (see above); one per run. */
export class EventGuard {
  private readonly streams: Record<'text' | 'reasoning', SecretStream>;

  constructor(private readonly secrets: Secrets) {
    this.streams = { text: secrets.stream(), reasoning: secrets.stream() };
  }

  /** The events to hand out for `e`, masked, in order: text a stream held back goes out before anything else. */
  pass(e: GuardedEvent): GuardedEvent[] {
    const out: GuardedEvent[] = [];
    const release = (type: 'text' | 'reasoning') => {
      const text = this.streams[type].flush();
      if (text) out.push({ type, text });
    };
    if (e.type === 'text' || e.type === 'reasoning') {
      release(e.type === 'text' ? 'reasoning' : 'text');
      const text = this.streams[e.type].push(e.text);
      if (text) out.push({ type: e.type, text });
    } else {
      release('text');
      release('reasoning');
      out.push(maskEvent(e, this.secrets));
    }
    return out;
  }
}

/** A whole event (not a piece of a stream) with every secret masked and names made printable. */
export function maskEvent<E extends GuardedEvent>(e: E, secrets: Secrets): E;
export function maskEvent(e: GuardedEvent, secrets: Secrets): GuardedEvent {
  const mask = (t: string) => secrets.mask(t);
  switch (e.type) {
    case 'tool_begin':
      return { ...e, name: printableName(mask(e.name)), args: mask(e.args) };
    case 'tool_result':
      return { ...e, name: printableName(mask(e.name)), content: mask(e.content) };
    case 'tool_progress':
      return { ...e, name: printableName(mask(e.name)), text: settled(e.text, secrets) };
    case 'message':
      return { ...e, message: maskMessage(e.message, secrets) };
    case 'compaction':
      if (e.phase === 'succeeded') return { ...e, record: maskRecord(e.record, secrets) };
      return e.phase === 'failed' ? { ...e, error: mask(e.error) } : e;
    default:
      return mapStrings(e, mask);
  }
}

/**
 * A snapshot of text that is still growing (a running call's output so far), masked, without an
 * ending that could be the start of a secret: the next snapshot shows it once it is whole, masked.
 */
function settled(text: string, secrets: Secrets): string {
  const masked = secrets.mask(text);
  return masked.slice(0, masked.length - secrets.pending(masked));
}

/** Every string of a plain value, through `f` (objects and arrays copied, the rest as it is). */
function mapStrings<T>(v: T, f: (s: string) => string): T {
  if (typeof v === 'string') return f(v) as T;
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f)) as T;
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = k === 'type' ? x : mapStrings(x, f);
    return o as T;
  }
  return v;
}

/** The event as a front end of this view shows it (a masked event in, see above). */
export function viewOf<E extends GuardedEvent>(e: E, view: EventView): E {
  if (view === 'data' || e.type === 'message') return e;
  return mapStrings(e, view === 'terminal' ? forTerminal : showInvisible);
}

/** A message with every secret masked (content, tool arguments, reasoning text). */
export function maskMessage(m: Message, secrets: Secrets): Message {
  if (secrets.empty) return m;
  const mask = (t: string) => secrets.mask(t);
  const content = m.content === null ? null : mask(m.content);
  if (m.role !== 'assistant') return { ...m, content };
  const out: AssistantMessage = { ...m, content };
  if (m.toolCalls) out.toolCalls = m.toolCalls.map((c) => ({ ...c, args: mask(c.args) }));
  if (m.reasoning) {
    // Signed thinking that holds a secret is left out (masked, it would not match its signature);
    // encrypted data is not readable and stays.
    const parts = m.reasoning.flatMap((p) => mapReasoningText(p, mask) ?? []);
    if (parts.length) out.reasoning = parts;
    else delete out.reasoning;
  }
  return out;
}

export function maskRecord(c: CompactionRecord, secrets: Secrets): CompactionRecord {
  return { ...c, summary: secrets.mask(c.summary) };
}

/** The end-of-run summary with every secret masked (json, stream-json); its tool calls come from guarded events. */
export function guardSummary(s: RunSummary, secrets: Secrets): RunSummary {
  const mask = (t: string) => secrets.mask(t);
  return {
    ...s,
    result: mask(s.result),
    ...(s.error !== undefined ? { error: mask(s.error) } : {}),
    toolCalls: s.toolCalls.map((c) => ({ ...c, args: mask(c.args) })),
  };
}
