// TAB completion of the screen — a stand-in (command names only) with the signature the full
// completion is called through.

import type { CommandContext, CompletionResult } from './command-context.js';

const NAMES = ['help', 'clear', 'quit'];

/** What TAB offers for `textBeforeCursor` (the cursor's line up to the cursor). */
export function complete(textBeforeCursor: string, _ctx: CommandContext): CompletionResult {
  const m = /^\s*\/([^\s/]*)$/.exec(textBeforeCursor);
  if (!m) return { now: null };
  const typed = m[1]!;
  const found = NAMES.filter((n) => n.startsWith(typed));
  if (!found.length) return { now: null };
  if (found.length === 1) return { now: { replace: typed.length + 1, insert: `/${found[0]} `, candidates: [] } };
  let p = found[0]!;
  for (const f of found) while (!f.startsWith(p)) p = p.slice(0, -1);
  return { now: { replace: typed.length + 1, insert: `/${p}`, candidates: found.map((f) => `/${f}`) } };
}
