// Checkpoints with real git: a turn's changes of every kind — a directory removed with rm -rf,
// files moved and chmod'ed, a binary file written, links made and removed, empty directories —
// undone byte for byte; in a plain directory and in a git repository whose index, stash and
// status stay exactly as they were; files over the size cap reported; a file changed outside
// clm detected as a conflict and left alone unless overwriting is asked for.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Checkpoints, recordPath } from '../../src/checkpoints/index.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { workspaceState } from '../fixtures/workspace-state.js';

const sh = (cwd: string, script: string) => execFileSync('sh', ['-c', script], { cwd, stdio: 'pipe' });

/** A workspace with something of every kind. */
function populate(ws: string): void {
  mkdirSync(join(ws, 'tree/deep/empty'), { recursive: true });
  writeFileSync(join(ws, 'tree/a.txt'), 'alpha\n');
  writeFileSync(join(ws, 'tree/deep/b.txt'), 'beta\n');
  chmodSync(join(ws, 'tree/deep'), 0o700);
  writeFileSync(join(ws, 'secret.txt'), 'private\n');
  chmodSync(join(ws, 'secret.txt'), 0o600);
  writeFileSync(join(ws, 'run.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(ws, 'run.sh'), 0o755);
  writeFileSync(join(ws, 'frozen.txt'), 'do not touch\n');
  chmodSync(join(ws, 'frozen.txt'), 0o444);
  writeFileSync(join(ws, 'move-me.txt'), 'I move\n');
  writeFileSync(join(ws, 'bin.dat'), Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]));
  symlinkSync('tree/a.txt', join(ws, 'link-to-a'));
  symlinkSync('nowhere', join(ws, 'dangling'));
}

/** What the agent's shell does in the turn. */
const TURN = [
  'rm -rf tree',
  'mv move-me.txt moved.txt',
  'chmod 644 secret.txt',
  'chmod 700 run.sh',
  'chmod 644 frozen.txt && echo changed >> frozen.txt',
  "printf '\\000\\377\\376binary' > new.bin",
  'head -c 3000 /dev/urandom > bin.dat',
  'rm link-to-a',
  'ln -s run.sh new-link',
  'mkdir -p made/empty',
].join(' && ');

function checkpoints(ws: string, state = tempDir('clm-cp-state-'), settings = {}) {
  const notices: string[] = [];
  const cp = new Checkpoints({ stateDir: state, sessionId: 'S1', workspace: ws, settings, notice: (t) => notices.push(t) });
  return { cp, notices, state };
}

async function turn(cp: Checkpoints, prompt: string, act: () => void): Promise<void> {
  cp.beginTurn(prompt, 0);
  await cp.beforeChanges();
  act();
  await cp.endTurn();
}

test('a turn of rm -rf, mv, chmod, binary writes and links is undone byte for byte, in a plain directory', async () => {
  const ws = tempDir('clm-cp-ws-');
  populate(ws);
  const before = workspaceState(ws);
  const { cp, notices } = checkpoints(ws);
  await turn(cp, 'wreck it', () => sh(ws, TURN));
  assert.notDeepEqual(workspaceState(ws), before);
  assert.deepEqual(notices, []);

  const d = await cp.diff();
  const lines = d.changes.map((c) => `${c.change} ${c.path}`);
  for (const want of [
    'deleted tree/a.txt',
    'deleted tree/deep/b.txt',
    'deleted tree/deep/empty/',
    'created moved.txt',
    'deleted move-me.txt',
    'mode secret.txt',
    'mode run.sh',
    'modified frozen.txt',
    'created new.bin',
    'deleted link-to-a',
    'created new-link',
    'created made/empty/',
  ])
    assert.ok(lines.includes(want), `${want} missing from\n${lines.join('\n')}`);
  assert.match(d.text, /mode 600 → 644 secret\.txt/);
  assert.match(d.text, /\+changed/);

  const r = await cp.plan(1);
  assert.deepEqual(r.plan.conflicts, []);
  const res = await cp.apply(r, { overwrite: false });
  assert.deepEqual(res.kept, []);
  assert.deepEqual(workspaceState(ws), before);
  assert.deepEqual(cp.turns, [], 'the undone turn leaves the record');
});

test('in a git repository with staged and unstaged changes, the index, stash and status are exactly as before', async () => {
  const ws = tempDir('clm-cp-repo-');
  const git = (...a: string[]) =>
    execFileSync('git', a, {
      cwd: ws,
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    });
  git('init', '-q');
  populate(ws);
  writeFileSync(join(ws, '.gitignore'), 'ignored.log\n');
  writeFileSync(join(ws, 'ignored.log'), 'noise\n');
  git('add', '-A');
  git('commit', '-qm', 'one');
  writeFileSync(join(ws, 'tree/a.txt'), 'alpha staged\n');
  git('add', 'tree/a.txt');
  writeFileSync(join(ws, 'tree/a.txt'), 'alpha staged then unstaged\n');
  writeFileSync(join(ws, 'untracked.txt'), 'new\n');
  git('stash', 'list');
  const index = readFileSync(join(ws, '.git/index'));
  const status = git('status', '--porcelain').toString();
  const stash = git('stash', 'list').toString();
  const gitState = workspaceState(join(ws, '.git'), { withGit: true });
  const before = workspaceState(ws);

  const { cp } = checkpoints(ws);
  await turn(cp, 'wreck the repo', () => sh(ws, `${TURN} && rm untracked.txt && echo more > ignored.log`));
  assert.ok(readFileSync(join(ws, '.git/index')).equals(index), 'snapshots do not touch the index');
  const d = await cp.diff();
  assert.ok(!d.changes.some((c) => c.path === 'ignored.log'), 'what .gitignore ignores is left out');
  assert.ok(
    d.changes.some((c) => c.path === 'untracked.txt' && c.change === 'deleted'),
    'untracked files are covered',
  );

  await cp.apply(await cp.plan(1), { overwrite: false });
  const after = workspaceState(ws);
  // The ignored file is not the checkpoints' business: it stays as the turn left it.
  assert.equal(readFileSync(join(ws, 'ignored.log'), 'utf8'), 'more\n');
  delete before['ignored.log'];
  delete after['ignored.log'];
  assert.deepEqual(after, before);
  assert.ok(readFileSync(join(ws, '.git/index')).equals(index), 'the index is byte for byte as before');
  assert.equal(git('status', '--porcelain').toString(), status);
  assert.equal(git('stash', 'list').toString(), stash);
  // Status refreshes stat data in the index; compare the rest of .git as it was.
  const gitAfter = workspaceState(join(ws, '.git'), { withGit: true });
  delete gitState.index;
  delete gitAfter.index;
  assert.deepEqual(gitAfter, gitState);
});

test('a file over the size cap is left out and said so, not silently', async () => {
  const ws = tempDir('clm-cp-big-');
  writeFileSync(join(ws, 'small.txt'), 'small\n');
  writeFileSync(join(ws, 'huge.bin'), Buffer.alloc(5000, 7));
  const { cp, notices } = checkpoints(ws, undefined, { maxFileBytes: 4096 });
  await turn(cp, 'touch things', () => {
    writeFileSync(join(ws, 'small.txt'), 'changed\n');
    writeFileSync(join(ws, 'huge.bin'), Buffer.alloc(6000, 8));
  });
  assert.ok(
    notices.some((n) => n.includes('huge.bin') && n.includes('larger than 4.0 KiB')),
    notices.join('\n'),
  );
  const d = await cp.diff();
  assert.deepEqual(
    d.changes.map((c) => c.path),
    ['small.txt'],
  );
});

test('a file changed outside clm since the checkpoint is a conflict: kept unless overwriting is asked for', async () => {
  const ws = tempDir('clm-cp-conflict-');
  writeFileSync(join(ws, 'shared.txt'), 'v1\n');
  writeFileSync(join(ws, 'only-turn.txt'), 'v1\n');
  const { cp } = checkpoints(ws);
  await turn(cp, 'edit both', () => {
    writeFileSync(join(ws, 'shared.txt'), 'v2 by the turn\n');
    writeFileSync(join(ws, 'only-turn.txt'), 'v2 by the turn\n');
  });
  writeFileSync(join(ws, 'shared.txt'), 'v3 by the person\n');
  const r = await cp.plan(1);
  assert.deepEqual(r.plan.conflicts, ['shared.txt']);
  const res = await cp.apply(r, { overwrite: false });
  assert.equal(readFileSync(join(ws, 'shared.txt'), 'utf8'), 'v3 by the person\n');
  assert.equal(readFileSync(join(ws, 'only-turn.txt'), 'utf8'), 'v1\n');
  assert.deepEqual(res.kept, [{ path: 'shared.txt', why: 'changed outside clm since the checkpoint' }]);

  // Asked to overwrite, the person's version goes too.
  const again = checkpoints(ws);
  await turn(again.cp, 'edit', () => writeFileSync(join(ws, 'shared.txt'), 'v4 by the turn\n'));
  writeFileSync(join(ws, 'shared.txt'), 'v5 by the person\n');
  const r2 = await again.cp.plan(1);
  assert.deepEqual(r2.plan.conflicts, ['shared.txt']);
  await again.cp.apply(r2, { overwrite: true });
  assert.equal(readFileSync(join(ws, 'shared.txt'), 'utf8'), 'v3 by the person\n');
});

test('rewinding over several turns goes back to before the first; the record survives the process', async () => {
  const ws = tempDir('clm-cp-multi-');
  writeFileSync(join(ws, 'f.txt'), '0\n');
  const before = workspaceState(ws);
  const { cp, state } = checkpoints(ws);
  await turn(cp, 'one', () => writeFileSync(join(ws, 'f.txt'), '1\n'));
  cp.beginTurn('just talk', 3);
  await cp.endTurn();
  await turn(cp, 'three', () => writeFileSync(join(ws, 'g.txt'), '3\n'));
  assert.deepEqual(
    cp.turns.map((t) => [t.turn, t.prompt, t.files ?? 0]),
    [
      [1, 'one', 1],
      [2, 'just talk', 0],
      [3, 'three', 1],
    ],
  );
  const reopened = Checkpoints.open(state, 'S1');
  assert.ok(reopened);
  assert.equal(reopened.turns.length, 3);
  assert.ok(readFileSync(recordPath(state, 'S1'), 'utf8').includes('"just talk"'));
  const r = await reopened.plan(1);
  assert.deepEqual(
    r.plan.items.map((i) => `${i.change} ${i.path}`),
    ['modified f.txt', 'created g.txt'],
  );
  await reopened.apply(r, { overwrite: false });
  assert.deepEqual(workspaceState(ws), before);
});

test('a turn that changes nothing adds no object to the shadow repository', async () => {
  const ws = tempDir('clm-cp-idle-');
  for (let i = 0; i < 50; i++) writeFileSync(join(ws, `f${i}.txt`), `${i}\n`);
  const { cp, state } = checkpoints(ws);
  await turn(cp, 'first', () => {});
  const count = () =>
    execFileSync('sh', ['-c', `find ${state}/checkpoints -path '*/objects/*' -type f | wc -l`])
      .toString()
      .trim();
  const n = count();
  await turn(cp, 'second', () => {});
  assert.equal(count(), n);
  assert.equal(cp.turns[1]!.files, 0);
});

test('a snapshot past its deadline turns checkpoints off for the session, said once, and leaves no index lock', async () => {
  const ws = tempDir('clm-cp-slow-');
  for (let i = 0; i < 200; i++) writeFileSync(join(ws, `f${i}.bin`), Buffer.alloc(20_000, i));
  const { cp, notices, state } = checkpoints(ws, undefined, { gitTimeoutMs: 1 });
  await turn(cp, 'first', () => {});
  await turn(cp, 'second', () => writeFileSync(join(ws, 'f0.bin'), 'x'));
  assert.equal(cp.off, 'a snapshot takes too long');
  assert.deepEqual(
    notices.filter((n) => /checkpoint/.test(n)),
    [notices[0]],
  );
  assert.match(
    notices[0] ?? '',
    /^checkpoints are off for this session: git \S+ did not finish within 1 ms \(checkpoints\.git_timeout_ms\)$/,
  );
  const locks = execFileSync('sh', ['-c', `find ${state}/checkpoints -name '*.lock'`]).toString();
  assert.equal(locks, '', 'a killed git leaves no lock behind');
  assert.ok(cp.turns.every((t) => !t.before));
});
