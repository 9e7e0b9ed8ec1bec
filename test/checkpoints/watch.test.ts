// A snapshot that reads only the directories a watch saw change must equal one that walks the
// whole workspace, whatever happened: files written, removed, chmod'ed; directories removed,
// renamed, made again under the same name; links; a .gitignore that changes; several at once.
// Random operations (seeded), each batch checked against a fresh repository's full walk.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ShadowRepo } from '../../src/checkpoints/shadow-repo.js';
import { unwatchable } from '../../src/checkpoints/watch.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { tally } from '../fixtures/tally.js';

const OPTS = { maxFileBytes: 1 << 20 };

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function allDirs(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
    if (!e.isDirectory() || e.name === '.git') continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    out.push(r, ...allDirs(root, r));
  }
  return out;
}

test('snapshots from the watch equal a whole walk after every batch of random changes', async () => {
  const ws = tempDir('clm-cp-watch-');
  const state = tempDir('clm-cp-watch-state-');
  const dir = join(state, 'repo');
  const live = await ShadowRepo.open({ dir, workspace: ws, sessionId: 'live' });
  const r = rng(25);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const names = ['a', 'b', 'c', 'd'];
  let ops = 0;
  const log: string[] = [];
  const op = () => {
    const dirs = ['', ...allDirs(ws)];
    const d = pick(dirs);
    const at = (n: string) => join(ws, d, n);
    const k = Math.floor(r() * 9);
    log.push(`${k} ${d}`);
    switch (k) {
      case 0:
      case 1:
        writeFileSync(at(`${pick(names)}.txt`), `content ${r()}\n`);
        break;
      case 2:
        if (d.split('/').length < 4) mkdirSync(at(pick(names)), { recursive: true });
        break;
      case 3:
        if (d) rmSync(join(ws, d), { recursive: true, force: true });
        break;
      case 4:
        if (d) {
          // Made again under the same name: another directory.
          rmSync(join(ws, d), { recursive: true, force: true });
          mkdirSync(join(ws, d));
          writeFileSync(join(ws, d, 'again.txt'), `${r()}`);
        }
        break;
      case 5: {
        const f = at(`${pick(names)}.txt`);
        if (existsSync(f)) chmodSync(f, pick([0o600, 0o644, 0o755, 0o444]));
        break;
      }
      case 6:
        if (d && !existsSync(join(ws, `${d}-moved`))) renameSync(join(ws, d), join(ws, `${d}-moved`));
        break;
      case 7: {
        const l = at(`link-${pick(names)}`);
        rmSync(l, { force: true });
        symlinkSync(pick(['a.txt', 'nowhere', '../b.txt']), l);
        break;
      }
      default:
        writeFileSync(join(ws, '.gitignore'), pick(['', 'a.txt\n', 'b/\n', '*.txt\n!c.txt\n']));
    }
    ops++;
  };
  for (let batch = 0; batch < 60; batch++) {
    const n = 1 + Math.floor(r() * 4);
    for (let i = 0; i < n; i++) op();
    log.push('--');
    const got = await live.snapshot(OPTS);
    const fresh = await ShadowRepo.open({ dir, workspace: ws, sessionId: `fresh-${batch}` });
    const want = await fresh.snapshot(OPTS);
    const why = () => `batch ${batch}, after ${log.slice(-12).join(' | ')}`;
    assert.equal(got.tree, want.tree, `the tree, ${why()}: ${JSON.stringify(await fresh.diffTrees(got.tree, want.tree))}`);
    assert.equal(got.manifest, want.manifest, `the manifest, ${why()}`);
    fresh.close();
  }
  live.close();
  tally('fuzz', ops);
});

test('without a change a snapshot gives the same tree; a change gives another', async () => {
  const ws = tempDir('clm-cp-quiet-');
  writeFileSync(join(ws, 'f.txt'), 'x');
  const state = tempDir('clm-cp-quiet-state-');
  const repo = await ShadowRepo.open({ dir: join(state, 'repo'), workspace: ws, sessionId: 's' });
  const first = await repo.snapshot(OPTS);
  assert.equal((await repo.snapshot(OPTS)).tree, first.tree);
  writeFileSync(join(ws, 'f.txt'), 'y');
  assert.notEqual((await repo.snapshot(OPTS)).tree, first.tree);
  repo.close();
});

test('the watch is trusted only on a local Linux file system; elsewhere every snapshot walks', () => {
  const ws = tempDir('clm-cp-fs-');
  if (process.platform === 'linux') assert.equal(unwatchable(ws), null);
  assert.match(unwatchable(ws, 'darwin') ?? '', /no directory watch on darwin/);
  // procfs stands in for a file system inotify does not hear (as NFS, 9p or FUSE).
  assert.match(unwatchable('/proc', 'linux') ?? '', /not on a local file system \(type 0x9fa0\)/);
  assert.match(unwatchable(join(ws, 'gone'), 'linux') ?? '', /cannot tell the file system .*ENOENT/);
});
