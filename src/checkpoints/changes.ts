// What differs between two snapshots, file by file, in the words a person reads: created,
// deleted, modified (content, or file ↔ link), mode (permission bits alone); directories too,
// marked with a trailing `/`. Pure, from git's tree diff and the two manifests.

import { dirChanges, type Manifest, permChanges } from './manifest.js';
import type { TreeChange } from './shadow-repo.js';

export type ChangeKind = 'created' | 'deleted' | 'modified' | 'mode';

export interface FileChange {
  /** Workspace-relative; a directory ends with `/`. */
  path: string;
  change: ChangeKind;
  /** For `mode`: the bits before and after. */
  from?: number;
  to?: number;
}

export function describeChanges(tree: readonly TreeChange[], a: Manifest, b: Manifest): FileChange[] {
  const out: FileChange[] = [];
  const inTree = new Set<string>();
  for (const c of tree) {
    inTree.add(c.path);
    out.push({ path: c.path, change: c.status === 'A' ? 'created' : c.status === 'D' ? 'deleted' : 'modified' });
  }
  for (const m of permChanges(a, b, inTree)) out.push({ path: m.path, change: 'mode', from: m.from, to: m.to });
  const d = dirChanges(a, b);
  for (const p of d.created) out.push({ path: `${p}/`, change: 'created' });
  for (const p of d.removed) out.push({ path: `${p}/`, change: 'deleted' });
  for (const m of d.mode) out.push({ path: `${m.path}/`, change: 'mode', from: m.from, to: m.to });
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/** `M src/a.ts`, `A new.txt`, `D gone/`, `m run.sh (644 → 755)`: one line per change. */
export function changeLine(c: FileChange): string {
  const mark = { created: 'A', deleted: 'D', modified: 'M', mode: 'm' }[c.change];
  const modes = c.change === 'mode' ? ` (${octal(c.from!)} → ${octal(c.to!)})` : '';
  return `${mark} ${c.path}${modes}`;
}

export const octal = (n: number): string => n.toString(8).padStart(3, '0');

/** "3 modified, 1 created, 2 deleted". */
export function changeSummary(changes: readonly FileChange[]): string {
  const n = (k: ChangeKind) => changes.filter((c) => c.change === k).length;
  const parts = [
    [n('modified') + n('mode'), 'modified'],
    [n('created'), 'created'],
    [n('deleted'), 'deleted'],
  ]
    .filter(([k]) => (k as number) > 0)
    .map(([k, w]) => `${k} ${w}`);
  return parts.length ? parts.join(', ') : 'no files changed';
}
