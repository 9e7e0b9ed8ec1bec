// The readable text of a Responses reasoning item (its summaries, or the raw reasoning text an
// open-weight server sends instead), for display, estimates and masking. Its encrypted content is
// opaque and never touched.

import { isObj } from './util.js';

/** The readable parts of a reasoning item: its summaries, else (open-weight servers) its raw reasoning text. */
export function reasoningItemText(item: Readonly<Record<string, unknown>>): string {
  const texts = (v: unknown): string[] =>
    Array.isArray(v) ? v.flatMap((p) => (isObj(p) && typeof p.text === 'string' && p.text !== '' ? [p.text] : [])) : [];
  const summary = texts(item.summary);
  return (summary.length ? summary : texts(item.content)).join('\n\n');
}

/** The item with `f` applied to its readable texts (summaries, raw reasoning text); the encrypted content is untouched. */
export function mapReasoningItemText(item: Readonly<Record<string, unknown>>, f: (text: string) => string): Record<string, unknown> {
  const map = (v: unknown): unknown =>
    Array.isArray(v) ? v.map((p) => (isObj(p) && typeof p.text === 'string' ? { ...p, text: f(p.text) } : p)) : v;
  const out: Record<string, unknown> = { ...item };
  if (out.summary !== undefined) out.summary = map(out.summary);
  if (out.content !== undefined) out.content = map(out.content);
  return out;
}
