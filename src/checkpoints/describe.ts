// What a rewind will do, in lines a person reads before saying yes (the UI's /undo and /rewind,
// `clm undo`).

import { changeLine } from './changes.js';
import type { Rewind } from './checkpoints.js';

/** The preview of a rewind: the turns taken back and what happens to each path. */
export function describeRewind(r: Rewind): string[] {
  const out = [`undo turn${r.turns.length > 1 ? 's' : ''} ${r.turns.map((t) => t.turn).join(', ')} (from "${oneLine(r.from.prompt)}")`];
  if (!r.files) out.push('no file changes to undo (the turns ran no tool that changes files)');
  else if (!r.plan.items.length) out.push('the files are already as they were');
  else {
    out.push('files the turns changed, put back as they were:');
    for (const i of r.plan.items) out.push(`  ${changeLine(i)}${i.conflict ? '  (changed outside clm since: conflict)' : ''}`);
  }
  if (r.plan.conflicts.length)
    out.push(
      `${r.plan.conflicts.length} file${r.plan.conflicts.length === 1 ? ' was' : 's were'} changed outside clm since the checkpoint`,
    );
  return out;
}

const oneLine = (s: string) => (s.length > 60 ? `${s.slice(0, 60)}…` : s).replace(/\s+/g, ' ');
