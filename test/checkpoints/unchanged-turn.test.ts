// What a turn leaves in the shadow repository when nothing changed (nothing: no ref, no object,
// no index write), and that skipping the work never hides a change: a file rewritten between turns
// outside clm with its size, inode and modification time kept (only its ctime tells) is in the
// next turn's "before" snapshot, and the stat comparison treats a file whose time stamp falls in
// the tick of the walk that saw it as changed (git's racy-clean case).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Checkpoints } from '../../src/checkpoints/index.js';
import { changedPaths, type EntryStat, type Scan } from '../../src/checkpoints/scan.js';
import { repoDirFor, ShadowRepo } from '../../src/checkpoints/shadow-repo.js';
import { tempDir } from '../fixtures/temp-dir.js';

function checkpoints(ws: string, state = tempDir('clm-cp-state-'), settings = {}) {
  const notices: string[] = [];
  const cp = new Checkpoints({ stateDir: state, sessionId: 'S1', workspace: ws, settings, notice: (t) => notices.push(t) });
  return { cp, notices, state };
}

async function turn(cp: Checkpoints, prompt: string, act: () => void = () => {}): Promise<void> {
  cp.beginTurn(prompt, 0);
  await cp.beforeChanges();
  act();
  await cp.endTurn();
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Every file of the shadow repository (objects, refs, index, manifests) with its bytes and times, and its refs as git lists them. */
function repoState(state: string, ws: string): { files: Record<string, string>; refs: string } {
  const dir = repoDirFor(state, ws);
  const files: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, r), { bigint: true });
      if (st.isDirectory()) walk(r);
      else files[r] = `${st.mtimeNs} ${st.ino} ${sha256(readFileSync(join(dir, r)))}`;
    }
  };
  walk('');
  const refs = execFileSync('git', ['--git-dir', join(dir, 'git'), 'for-each-ref'], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  }).toString();
  return { files, refs };
}

test('a turn that changes nothing writes nothing in the shadow repository: no ref, no object, no index', async () => {
  const ws = tempDir('clm-cp-still-');
  for (let i = 0; i < 20; i++) writeFileSync(join(ws, `f${i}.txt`), `${i}\n`);
  const { cp, state, notices } = checkpoints(ws);
  await turn(cp, 'first', () => writeFileSync(join(ws, 'f0.txt'), 'changed\n'));
  const before = repoState(state, ws);
  assert.match(before.refs, /refs\/clm\/S1\/1\/after/);
  await turn(cp, 'second');
  await turn(cp, 'third');
  assert.deepEqual(repoState(state, ws), before);
  assert.deepEqual(notices, []);
  // The turns are recorded all the same, as having changed no file.
  assert.deepEqual(
    cp.turns.map((t) => [t.turn, t.files]),
    [
      [1, 1],
      [2, 0],
      [3, 0],
    ],
  );
  // And each can be taken back (nothing to do for the files of the idle ones), the first one too.
  const r = await cp.plan(2);
  assert.deepEqual(r.plan.items, []);
  const back = await cp.plan(1);
  assert.deepEqual(
    back.plan.items.map((i) => `${i.change} ${i.path}`),
    ['modified f0.txt'],
  );
  await cp.apply(back, { overwrite: false });
  assert.equal(readFileSync(join(ws, 'f0.txt'), 'utf8'), '0\n');
});

/** Every tree the record names is kept by a ref (else `git prune` takes it); the refs, sorted. */
function refsKeepRecord(state: string, ws: string, cp: Checkpoints): string[] {
  const lines = repoState(state, ws).refs.split('\n').filter(Boolean);
  const kept = new Set(lines.map((l) => l.split(' ')[0]));
  for (const t of cp.turns)
    for (const s of [t.before, t.after]) if (s) assert.ok(kept.has(s.tree), `turn ${t.turn}'s tree ${s.tree} has a ref`);
  return lines.map((l) => l.split('\t')[1]!).sort();
}

test('turns that changed nothing go with the turn that keeps their tree; pruning leaves every recorded tree a ref', async () => {
  const ws = tempDir('clm-cp-prune-');
  writeFileSync(join(ws, 'f.txt'), '0\n');
  const { cp, state } = checkpoints(ws, undefined, { keep: 1, maxBytes: 1 });
  await turn(cp, 'one', () => writeFileSync(join(ws, 'f.txt'), '1\n'));
  await turn(cp, 'idle');
  assert.deepEqual(refsKeepRecord(state, ws, cp), ['refs/clm/S1/1/after', 'refs/clm/S1/1/before']);
  await turn(cp, 'three', () => writeFileSync(join(ws, 'f.txt'), '3\n'));
  await turn(cp, 'idle again');
  // keep = 1: turn 1 goes, and turn 2 whose tree it kept; turn 4 rests on turn 3's refs.
  assert.deepEqual(
    cp.turns.map((t) => [t.turn, Boolean(t.before)]),
    [
      [1, false],
      [2, false],
      [3, true],
      [4, true],
    ],
  );
  assert.deepEqual(refsKeepRecord(state, ws, cp), ['refs/clm/S1/3/after', 'refs/clm/S1/3/before']);
  // Over its size cap the repository keeps the last turn alone: the idle one gets refs of its own.
  await cp.close();
  assert.deepEqual(refsKeepRecord(state, ws, cp), ['refs/clm/S1/4/after', 'refs/clm/S1/4/before']);
  await turn(cp, 'five', () => writeFileSync(join(ws, 'f.txt'), '5\n'));
  await cp.close();
  assert.deepEqual(refsKeepRecord(state, ws, cp), ['refs/clm/S1/5/after', 'refs/clm/S1/5/before']);
  const reopened = Checkpoints.open(state, 'S1');
  assert.ok(reopened);
  const d = await reopened.diff(5);
  assert.match(d.text, /^-3$/m);
  await reopened.apply(await reopened.plan(5), { overwrite: false });
  assert.equal(readFileSync(join(ws, 'f.txt'), 'utf8'), '3\n');
});

test('a file rewritten outside clm between turns with its size, inode and mtime kept is in the next snapshot', async () => {
  const ws = tempDir('clm-cp-outside-');
  for (let i = 0; i < 20; i++) writeFileSync(join(ws, `f${i}.txt`), `${i}\n`);
  writeFileSync(join(ws, 'same.txt'), 'aaaa\n');
  const times = join(tempDir('clm-cp-times-'), 'times');
  copyFileSync(join(ws, 'same.txt'), times);
  execFileSync('touch', ['-r', join(ws, 'same.txt'), times]);
  const { cp } = checkpoints(ws);
  await turn(cp, 'first', () => writeFileSync(join(ws, 'f1.txt'), 'one\n'));
  const was = lstatSync(join(ws, 'same.txt'), { bigint: true });
  // Outside clm: the same number of bytes written in place, the modification time put back to the nanosecond.
  writeFileSync(join(ws, 'same.txt'), 'bbbb\n');
  execFileSync('touch', ['-r', times, join(ws, 'same.txt')]);
  const now = lstatSync(join(ws, 'same.txt'), { bigint: true });
  assert.deepEqual([now.size, now.mtimeNs, now.ino], [was.size, was.mtimeNs, was.ino]);
  await turn(cp, 'second', () => writeFileSync(join(ws, 'same.txt'), 'cccc\n'));
  const d = await cp.diff(2);
  assert.deepEqual(
    d.changes.map((c) => `${c.change} ${c.path}`),
    ['modified same.txt'],
  );
  assert.match(d.text, /^-bbbb$/m);
  assert.match(d.text, /^\+cccc$/m);
  // Taking turn 2 back puts back what the person wrote, not what turn 1 saw.
  await cp.apply(await cp.plan(2), { overwrite: false });
  assert.equal(readFileSync(join(ws, 'same.txt'), 'utf8'), 'bbbb\n');
});

test('the stat comparison: any of kind, mode, size, ns mtime, ctime, inode differs, or a time in the tick of the walk, is a change', () => {
  const T = 1_700_000_000_000_000_000n;
  const e = (o: Partial<EntryStat> = {}): EntryStat => ({
    kind: 'file',
    perm: 0o644,
    size: 5,
    mtimeNs: T - 10_000_000_000n,
    ctimeNs: T - 10_000_000_000n,
    ino: 42,
    ...o,
  });
  const scan = (files: Record<string, EntryStat>, startedNs = T): Scan => ({
    files: new Map(Object.entries(files)),
    dirs: new Map(),
    dirIno: new Map(),
    leftOut: [],
    startedNs,
  });
  const prev = scan({
    same: e(),
    mtime: e(),
    ctime: e(),
    ino: e(),
    size: e(),
    perm: e(),
    kind: e(),
    // Written in the tick the walk began: a second write in that tick leaves every stat field as it was.
    racy: e({ mtimeNs: T, ctimeNs: T }),
    racyCtime: e({ ctimeNs: T + 1n }),
  });
  const next = scan(
    {
      same: e(),
      mtime: e({ mtimeNs: T - 10_000_000_000n + 1n }),
      ctime: e({ ctimeNs: T - 1n }),
      ino: e({ ino: 43 }),
      size: e({ size: 6 }),
      perm: e({ perm: 0o600 }),
      kind: e({ kind: 'link' }),
      racy: e({ mtimeNs: T, ctimeNs: T }),
      racyCtime: e({ ctimeNs: T + 1n }),
      added: e(),
    },
    T + 5_000_000_000n,
  );
  assert.deepEqual(changedPaths(prev, next).sort(), ['added', 'ctime', 'ino', 'kind', 'mtime', 'perm', 'racy', 'racyCtime', 'size']);
  // Once a later walk has seen it with a time before that walk began, an unchanged file is left alone.
  assert.deepEqual(changedPaths(next, scan({ racy: e({ mtimeNs: T, ctimeNs: T }) }, T + 9_000_000_000n)), []);
});

test("a new session's index, seeded from another's, keeps that index's time stamp (git's racy-clean guard)", async () => {
  // git re-checks entries whose mtime is not older than the index file's; a copy stamped "now"
  // would make entries written in the old index's tick look settled.
  const ws = tempDir('clm-cp-seed-');
  writeFileSync(join(ws, 'a.txt'), 'a\n');
  const { cp, state } = checkpoints(ws);
  await turn(cp, 'first', () => writeFileSync(join(ws, 'a.txt'), 'b\n'));
  await cp.close();
  const dir = repoDirFor(state, ws);
  const seeded = lstatSync(join(dir, 'index-S1'), { bigint: true });
  await new Promise((r) => setTimeout(r, 20));
  await ShadowRepo.open({ dir, workspace: ws, sessionId: 'S2' });
  const copy = lstatSync(join(dir, 'index-S2'), { bigint: true });
  assert.ok(copy.mtimeNs <= seeded.mtimeNs, `copy ${copy.mtimeNs} is newer than its source ${seeded.mtimeNs}`);
  assert.deepEqual(readFileSync(join(dir, 'index-S2')), readFileSync(join(dir, 'index-S1')));
});
