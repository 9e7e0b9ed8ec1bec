// Carrying out an undo plan on the workspace: files and links written back byte for byte with
// their exact permission bits (a file through a temporary name and a rename, so a reader never
// sees half of it), what the turns created removed, directories the turns removed made again and
// those they created removed when empty. Directory modes are set last, deepest first, so a
// read-only directory is written into before it becomes read-only again.

import { chmodSync, lstatSync, mkdirSync, renameSync, rmdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PlanItem } from './undo-plan.js';

export interface RestoreResult {
  /** Paths put back as planned. */
  done: string[];
  /** Paths left as they are, and why (a directory the turns created that now holds other files). */
  kept: { path: string; why: string }[];
}

function exists(p: string): ReturnType<typeof lstatSync> | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/** Make `dir` (relative) and its missing parents; a missing one takes its mode from `dirPerm`. */
function makeParents(root: string, rel: string, dirPerm: (d: string) => number | undefined): void {
  const parts = rel.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const d = parts.slice(0, i).join('/');
    const abs = join(root, d);
    const st = exists(abs);
    if (st?.isDirectory()) continue;
    if (st) rmSync(abs, { force: true }); // a file or link where a directory must be
    mkdirSync(abs, { mode: 0o700 });
    chmodSync(abs, dirPerm(d) ?? 0o755);
  }
}

/**
 * Apply `items` (none of them skipped conflicts) under `root`. `blob(sha)` gives a file's or
 * link's bytes; `dirPerm(d)` the bits of a directory at the checkpoint.
 */
export function applyPlan(
  root: string,
  items: readonly PlanItem[],
  blob: (sha: string) => Buffer,
  dirPerm: (d: string) => number | undefined,
): RestoreResult {
  const done: string[] = [];
  const kept: RestoreResult['kept'] = [];
  const files = items.filter((i) => !i.path.endsWith('/'));
  const dirs = items.filter((i) => i.path.endsWith('/'));
  // Directories the turns removed come back first (shallowest first), so files can go into them.
  for (const i of dirs.filter((d) => d.target && d.change === 'deleted').sort(byDepth)) {
    makeParents(root, i.path.slice(0, -1), dirPerm);
    done.push(i.path);
  }
  for (const i of files) {
    const abs = join(root, i.path);
    const st = exists(abs);
    const t = i.target;
    if (!t) {
      if (st && !st.isDirectory()) unlinkSync(abs);
      else if (st?.isDirectory()) {
        kept.push({ path: i.path, why: 'it is a directory now' });
        continue;
      }
      done.push(i.path);
      continue;
    }
    if (t.kind === 'dir') continue;
    const parent = dirname(i.path);
    if (parent !== '.') makeParents(root, parent, dirPerm);
    if (st?.isDirectory()) rmSync(abs, { recursive: true, force: true });
    if (t.kind === 'link') {
      if (st && !st.isDirectory()) unlinkSync(abs);
      symlinkSync(blob(t.sha), abs);
    } else {
      const tmp = join(dirname(abs), `.clm-undo-${process.pid}-${done.length}`);
      writeFileSync(tmp, blob(t.sha), { mode: 0o600 });
      chmodSync(tmp, t.perm);
      renameSync(tmp, abs);
    }
    done.push(i.path);
  }
  // Directories the turns created go when empty, deepest first; modes last, deepest first.
  for (const i of dirs
    .filter((d) => !d.target)
    .sort(byDepth)
    .reverse()) {
    const abs = join(root, i.path);
    if (!exists(abs)?.isDirectory()) {
      done.push(i.path);
      continue;
    }
    try {
      rmdirSync(abs);
      done.push(i.path);
    } catch {
      kept.push({ path: i.path, why: 'it holds files the turns did not create' });
    }
  }
  for (const i of dirs
    .filter((d) => d.target)
    .sort(byDepth)
    .reverse()) {
    const abs = join(root, i.path);
    if (!exists(abs)?.isDirectory()) makeParents(root, i.path.slice(0, -1), dirPerm);
    chmodSync(abs, (i.target as { perm: number }).perm);
    if (i.change === 'mode') done.push(i.path);
  }
  return { done, kept };
}

const depth = (p: string) => p.split('/').length;
const byDepth = (a: PlanItem, b: PlanItem) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : 1);
