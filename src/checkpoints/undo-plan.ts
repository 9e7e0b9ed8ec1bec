// What taking turns back does to the workspace, decided before anything is touched (pure).
//
// The paths in question are those the turns themselves changed (from each turn's "before" to
// its "after" snapshot); each goes back to how the first of those turns found it. A path that
// also changed outside clm since then (between two turns, or after the last one) is a conflict:
// it is not overwritten unless the person says so. Files the turns did not touch stay as they are.

import type { ChangeKind, FileChange } from './changes.js';
import { type Manifest, permOf } from './manifest.js';
import type { TreeEntry } from './shadow-repo.js';

export interface SnapshotView {
  files: ReadonlyMap<string, TreeEntry>;
  manifest: Manifest;
}

export interface PlanItem {
  /** Workspace-relative; a directory ends with `/`. */
  path: string;
  /** What the turns did to it, as it stands now: the undo reverses it. */
  change: ChangeKind;
  /** What the path becomes: a file or link (mode, blob, permission bits), a directory (its bits), or nothing. */
  target: { kind: 'file' | 'link'; sha: string; perm: number } | { kind: 'dir'; perm: number } | null;
  /** It changed outside clm too since the checkpoint. */
  conflict: boolean;
}

export interface UndoPlan {
  items: PlanItem[];
  /** The paths of the conflicting items. */
  conflicts: string[];
}

export function planUndo(
  turns: readonly FileChange[][],
  outside: readonly FileChange[][],
  target: SnapshotView,
  now: SnapshotView,
): UndoPlan {
  const touched = new Set(turns.flat().map((c) => c.path));
  const elsewhere = new Set(outside.flat().map((c) => c.path));
  const items: PlanItem[] = [];
  for (const path of [...touched].sort()) {
    const item = path.endsWith('/') ? dirItem(path, target, now) : fileItem(path, target, now);
    if (item) items.push({ ...item, conflict: elsewhere.has(path) });
  }
  return { items, conflicts: items.filter((i) => i.conflict).map((i) => i.path) };
}

function fileItem(path: string, target: SnapshotView, now: SnapshotView): Omit<PlanItem, 'conflict'> | null {
  const t = target.files.get(path);
  const n = now.files.get(path);
  if (!t && !n) return null;
  const tPerm = t ? permOf(target.manifest, path, t.mode) : 0;
  const goal = t ? { kind: t.mode === 0o120000 ? ('link' as const) : ('file' as const), sha: t.sha, perm: tPerm } : null;
  if (!t) return { path, change: 'created', target: null };
  if (!n) return { path, change: 'deleted', target: goal };
  if (t.sha !== n.sha || t.mode !== n.mode) return { path, change: 'modified', target: goal };
  const nPerm = permOf(now.manifest, path, n.mode);
  return tPerm !== nPerm ? { path, change: 'mode', target: goal } : null;
}

function dirItem(path: string, target: SnapshotView, now: SnapshotView): Omit<PlanItem, 'conflict'> | null {
  const d = path.slice(0, -1);
  const t = target.manifest.dirs[d];
  const n = now.manifest.dirs[d];
  if (t === undefined && n === undefined) return null;
  if (t === undefined) return { path, change: 'created', target: null };
  if (n === undefined) return { path, change: 'deleted', target: { kind: 'dir', perm: t } };
  return t !== n ? { path, change: 'mode', target: { kind: 'dir', perm: t } } : null;
}
