// What git does not keep of a snapshot, kept beside it: the exact permission bits of files whose
// mode git would not restore (it knows only 644 and 755), every directory with its mode (git
// knows no empty directory), and what the walk left out. Pure: built from a walk, compared, and
// written as stable JSON so an unchanged one is stored once.

import type { LeftOut, Scan } from './scan.js';

export interface Manifest {
  v: 1;
  /** Files whose permission bits are not what git restores (644; 755 when the owner may execute). */
  perms: Record<string, number>;
  /** Every directory but the root, with its permission bits. */
  dirs: Record<string, number>;
  leftOut: LeftOut[];
}

/** The bits git restores for a file of these bits: 755 when the owner may execute it, else 644. */
export const gitPerm = (perm: number): number => (perm & 0o100 ? 0o755 : 0o644);

export function buildManifest(scan: Scan): Manifest {
  const perms: Record<string, number> = {};
  for (const [p, e] of scan.files) if (e.kind === 'file' && e.perm !== gitPerm(e.perm)) perms[p] = e.perm;
  const dirs: Record<string, number> = {};
  for (const [p, m] of scan.dirs) dirs[p] = m;
  return { v: 1, perms, dirs, leftOut: scan.leftOut };
}

/** Stable text: keys sorted, so equal manifests are equal bytes. */
export function encodeManifest(m: Manifest): string {
  const sorted = (r: Record<string, number>) => Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({ v: 1, perms: sorted(m.perms), dirs: sorted(m.dirs), leftOut: m.leftOut });
}

export function decodeManifest(text: string): Manifest {
  const o = JSON.parse(text) as Partial<Manifest>;
  if (o?.v !== 1 || typeof o.perms !== 'object' || typeof o.dirs !== 'object') throw new Error('not a checkpoint manifest');
  return { v: 1, perms: o.perms ?? {}, dirs: o.dirs ?? {}, leftOut: Array.isArray(o.leftOut) ? o.leftOut : [] };
}

/** The permission bits of a file that git holds with `gitMode` (100644, 100755), as the manifest says. */
export function permOf(m: Manifest, path: string, gitMode: number): number {
  return m.perms[path] ?? (gitMode === 0o100755 ? 0o755 : 0o644);
}

export interface ModeChange {
  path: string;
  from: number;
  to: number;
}

/**
 * Files whose permission bits changed between two manifests without git seeing it (600 → 644),
 * leaving out `inTreeDiff` (git reports those itself).
 */
export function permChanges(a: Manifest, b: Manifest, inTreeDiff: ReadonlySet<string>): ModeChange[] {
  const out: ModeChange[] = [];
  for (const p of new Set([...Object.keys(a.perms), ...Object.keys(b.perms)])) {
    if (inTreeDiff.has(p)) continue;
    const pa = a.perms[p];
    const pb = b.perms[p];
    // The one not listed has the bits git restores, for the same git mode as the other.
    const from = pa ?? gitPerm(pb!);
    const to = pb ?? gitPerm(pa!);
    if (from !== to) out.push({ path: p, from, to });
  }
  return out.sort((x, y) => (x.path < y.path ? -1 : 1));
}

export interface DirChanges {
  created: string[];
  removed: string[];
  mode: ModeChange[];
}

export function dirChanges(a: Manifest, b: Manifest): DirChanges {
  const created = Object.keys(b.dirs).filter((d) => !(d in a.dirs));
  const removed = Object.keys(a.dirs).filter((d) => !(d in b.dirs));
  const mode: ModeChange[] = [];
  for (const [d, m] of Object.entries(b.dirs)) if (d in a.dirs && a.dirs[d] !== m) mode.push({ path: d, from: a.dirs[d]!, to: m });
  return { created: created.sort(), removed: removed.sort(), mode };
}
