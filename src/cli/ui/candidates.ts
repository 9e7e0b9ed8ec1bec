// What every kind of TAB completion shares: the common prefix of the candidates, and the cap on
// how many are listed (the rest are counted, never dropped silently).

import type { Completion } from './command-context.js';

/** At most this many candidates are listed; a last line says how many more there are. */
export const MAX_CANDIDATES = 128;

/** The longest prefix every string shares ('' for none). */
export function commonPrefix(strings: readonly string[]): string {
  if (!strings.length) return '';
  let p = strings[0]!;
  for (const s of strings) {
    let i = 0;
    while (i < p.length && i < s.length && p.charCodeAt(i) === s.charCodeAt(i)) i++;
    p = p.slice(0, i);
    if (!p) break;
  }
  // Never end between the two halves of a surrogate pair.
  const last = p.charCodeAt(p.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? p.slice(0, -1) : p;
}

/** The list as shown: the first MAX_CANDIDATES, then `(+N more)` when there are more. */
export function capped(list: readonly string[]): string[] {
  if (list.length <= MAX_CANDIDATES) return [...list];
  return [...list.slice(0, MAX_CANDIDATES), `(+${list.length - MAX_CANDIDATES} more)`];
}

/**
 * The completion of `typed` (the last `typed.length` characters before the cursor) by `matches`
 * (each starting with `typed`): one ⇒ it whole plus `unique`; several ⇒ their common prefix and
 * the list (under `heading`). Null when none matches.
 */
export function completionOf(typed: string, matches: readonly string[], o: { unique?: string; heading?: string } = {}): Completion | null {
  if (!matches.length) return null;
  if (matches.length === 1) return { replace: typed.length, insert: matches[0]! + (o.unique ?? ''), candidates: [] };
  const heading = o.heading !== undefined ? { heading: o.heading } : {};
  return { replace: typed.length, insert: commonPrefix(matches), candidates: capped(matches), ...heading };
}
