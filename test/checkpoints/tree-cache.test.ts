// A snapshot that changed a few files stores their blobs and the trees above them in-process:
// no git process starts, and the tree is the one git itself writes for the same workspace (a
// fresh repository's snapshot), objects that `git fsck` finds sound, whatever the change — a
// file become a directory and back, a mode, a link, names whose order in a tree depends on
// git's rule for directories (`a-b`, `a.b`, `a/`, `a0`), a directory emptied.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { ShadowRepo } from '../../src/checkpoints/shadow-repo.js';
import { tempDir } from '../fixtures/temp-dir.js';

const OPTS = { maxFileBytes: 1 << 20 };

const childProcess = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
let spawned = 0;
const realSpawn = childProcess.spawn;
childProcess.spawn = ((...a: Parameters<typeof realSpawn>) => {
  spawned++;
  return realSpawn(...a);
}) as typeof realSpawn;
syncBuiltinESMExports();

/** Write `rel`, its directories made first. */
function put(ws: string, rel: string, text: string): void {
  mkdirSync(join(ws, rel, '..'), { recursive: true });
  writeFileSync(join(ws, rel), text);
}

function swap(ws: string, rel: string, make: () => void): void {
  rmSync(join(ws, rel), { recursive: true });
  make();
}

function populate(ws: string): void {
  mkdirSync(join(ws, 'a/deep'), { recursive: true });
  mkdirSync(join(ws, 'gone/sub'), { recursive: true });
  for (const f of ['a-b', 'a.b', 'a0', 'a/deep/x.txt', 'a/y.txt', 'gone/sub/z.txt', 'becomes-dir', 'dir-becomes/in.txt', 'run.sh'])
    put(ws, f, `${f}\n`);
  symlinkSync('a/y.txt', join(ws, 'link'));
}

const CHANGES: [string, (ws: string) => void][] = [
  ['a file rewritten', (ws) => writeFileSync(join(ws, 'a/y.txt'), 'new\n')],
  ['a file made in a new nested directory', (ws) => put(ws, 'n/e/w/f', 'f\n')],
  ['a file become a directory', (ws) => swap(ws, 'becomes-dir', () => put(ws, 'becomes-dir/in', 'in\n'))],
  ['a directory become a file', (ws) => swap(ws, 'dir-becomes', () => put(ws, 'dir-becomes', 'now a file\n'))],
  ['an executable bit', (ws) => chmodSync(join(ws, 'run.sh'), 0o755)],
  ['a link pointed elsewhere', (ws) => swap(ws, 'link', () => symlinkSync('a-b', join(ws, 'link')))],
  ['a link become a file', (ws) => swap(ws, 'link', () => put(ws, 'link', 'file\n'))],
  ['a directory emptied of files', (ws) => rmSync(join(ws, 'gone/sub/z.txt'))],
  ['names around a directory of the same stem', (ws) => put(ws, 'a/0', '0\n')],
  [
    'everything removed',
    (ws) => {
      for (const f of ['a', 'a-b', 'a.b', 'a0', 'gone', 'becomes-dir', 'dir-becomes', 'run.sh', 'link', 'n'])
        rmSync(join(ws, f), { recursive: true });
    },
  ],
];

test('a snapshot of a few changed files starts no git and gives the tree git writes', async () => {
  const ws = tempDir('clm-cp-tc-');
  const state = tempDir('clm-cp-tc-state-');
  const dir = join(state, 'repo');
  populate(ws);
  const live = await ShadowRepo.open({ dir, workspace: ws, sessionId: 'live' });
  await live.snapshot(OPTS);
  let n = 0;
  for (const [what, change] of CHANGES) {
    change(ws);
    const before = spawned;
    const got = await live.snapshot(OPTS);
    assert.equal(spawned - before, 0, `${what}: no git process`);
    const fresh = await ShadowRepo.open({ dir, workspace: ws, sessionId: `fresh-${++n}` });
    const want = await fresh.snapshot(OPTS);
    fresh.close();
    assert.equal(got.tree, want.tree, `${what}: ${JSON.stringify(await live.diffTrees(got.tree, want.tree))}`);
  }
  live.close();
  const fsck = execFileSync('git', ['--git-dir', join(dir, 'git'), 'fsck', '--strict', '--no-dangling'], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    stdio: 'pipe',
  });
  assert.equal(fsck.toString(), '');
});

test('a later snapshot by git hands it what was stored in-process since the index was written', async () => {
  const ws = tempDir('clm-cp-tc-sync-');
  const state = tempDir('clm-cp-tc-sync-state-');
  const dir = join(state, 'repo');
  for (let i = 0; i < 300; i++) writeFileSync(join(ws, `f${i}`), `${i}\n`);
  const live = await ShadowRepo.open({ dir, workspace: ws, sessionId: 'live' });
  await live.snapshot(OPTS);
  // In-process: the index does not see these.
  writeFileSync(join(ws, 'f0'), 'zero\n');
  rmSync(join(ws, 'f1'));
  await live.snapshot(OPTS);
  // More than a snapshot stores itself: git does it, and must not take f0 and f1 from its stale index.
  for (let i = 2; i < 300; i++) writeFileSync(join(ws, `f${i}`), `${i}!\n`);
  const before = spawned;
  const got = await live.snapshot(OPTS);
  assert.ok(spawned > before, 'git ran');
  live.close();
  const fresh = await ShadowRepo.open({ dir, workspace: ws, sessionId: 'fresh' });
  assert.equal(got.tree, (await fresh.snapshot(OPTS)).tree);
  fresh.close();
});
