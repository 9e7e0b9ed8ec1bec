// The session's first snapshot taken ahead of the first tool (Checkpoints.warm) while the person
// keeps changing files: git is held in the middle of that snapshot (a `git` wrapper first on PATH
// waits for a go-ahead before it hashes), files change meanwhile, and the turn's "before" snapshot
// must still be the workspace just before the tool ran — an undo puts back exactly that. A warm
// snapshot still under way when the session closes is stopped, quietly, and leaves no lock.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Checkpoints } from '../../src/checkpoints/index.js';
import { repoDirFor } from '../../src/checkpoints/shadow-repo.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { workspaceState } from '../fixtures/workspace-state.js';

const realGit = execFileSync('sh', ['-c', 'command -v git']).toString().trim();

/** A `git` first on PATH that holds the first `update-index` until `release()`; `held()` once it waits. */
function holdingGit(): { held(): Promise<void>; release(): void; restore(): void } {
  const bin = tempDir('clm-cp-gitbin-');
  const mark = tempDir('clm-cp-mark-');
  writeFileSync(
    join(bin, 'git'),
    `#!/bin/sh
for a in "$@"; do
  if [ "$a" = update-index ] && [ ! -e '${mark}/done' ]; then
    touch '${mark}/done' '${mark}/started'
    while [ ! -e '${mark}/go' ]; do sleep 0.02; done
  fi
done
exec '${realGit}' "$@"
`,
  );
  chmodSync(join(bin, 'git'), 0o755);
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  return {
    async held() {
      while (!existsSync(join(mark, 'started'))) await sleep(20);
    },
    release: () => writeFileSync(join(mark, 'go'), ''),
    restore: () => {
      process.env.PATH = path;
    },
  };
}

function populate(ws: string): void {
  for (let i = 0; i < 30; i++) writeFileSync(join(ws, `n${i}.txt`), `${i}\n`);
  writeFileSync(join(ws, 'a.txt'), 'a\n');
  writeFileSync(join(ws, 'same.txt'), 'aaaa\n');
  writeFileSync(join(ws, 'gone.txt'), 'gone\n');
  writeFileSync(join(ws, 'mode.txt'), 'mode\n');
  mkdirSync(join(ws, 'sub'));
  writeFileSync(join(ws, 'sub', 'x.txt'), 'x\n');
}

test('files changed while the warm snapshot runs are in the turn\'s "before": undo restores the state just before the tool', async () => {
  const ws = tempDir('clm-cp-warm-');
  populate(ws);
  const git = holdingGit();
  try {
    const cp = new Checkpoints({ stateDir: tempDir('clm-cp-state-'), sessionId: 'S1', workspace: ws, notice: (t) => assert.fail(t) });
    cp.beginTurn('edit', 0);
    const warm = cp.warm();
    await git.held();
    // The walk is done, git has not hashed yet: the person edits.
    writeFileSync(join(ws, 'a.txt'), 'the person wrote this, longer\n');
    writeFileSync(join(ws, 'same.txt'), 'bbbb\n');
    writeFileSync(join(ws, 'new.txt'), 'new\n');
    rmSync(join(ws, 'gone.txt'));
    chmodSync(join(ws, 'mode.txt'), 0o600);
    mkdirSync(join(ws, 'sub', 'made'));
    writeFileSync(join(ws, 'sub', 'made', 'y.txt'), 'y\n');
    git.release();
    await warm;
    // And once more after it finished, before the tool.
    writeFileSync(join(ws, 'n3.txt'), 'three\n');
    const beforeTool = workspaceState(ws);
    await cp.beforeChanges();
    // The tool.
    writeFileSync(join(ws, 'a.txt'), 'the tool\n');
    writeFileSync(join(ws, 'same.txt'), 'cccc\n');
    rmSync(join(ws, 'new.txt'));
    rmSync(join(ws, 'sub'), { recursive: true });
    writeFileSync(join(ws, 'n3.txt'), 'tool\n');
    chmodSync(join(ws, 'mode.txt'), 0o644);
    await cp.endTurn();
    const r = await cp.plan(1);
    assert.deepEqual(r.plan.conflicts, []);
    await cp.apply(r, { overwrite: false });
    assert.deepEqual(workspaceState(ws), beforeTool);
  } finally {
    git.release();
    git.restore();
  }
});

test('a warm snapshot still under way when the session closes is stopped quietly and leaves no index lock', async () => {
  const ws = tempDir('clm-cp-warm-');
  populate(ws);
  const state = tempDir('clm-cp-state-');
  const notices: string[] = [];
  const git = holdingGit();
  try {
    const cp = new Checkpoints({ stateDir: state, sessionId: 'S1', workspace: ws, notice: (t) => notices.push(t) });
    cp.beginTurn('just talk', 0);
    const warm = cp.warm();
    await git.held();
    await cp.endTurn();
    await cp.close();
    await warm;
    assert.deepEqual(notices, []);
    assert.deepEqual(
      readdirSync(repoDirFor(state, ws)).filter((n) => n.endsWith('.lock')),
      [],
    );
    assert.deepEqual(
      cp.turns.map((t) => [t.turn, t.before]),
      [[1, undefined]],
    );
    // The next turn's snapshot works from scratch.
    git.release();
    cp.beginTurn('edit', 2);
    await cp.beforeChanges();
    writeFileSync(join(ws, 'a.txt'), 'changed\n');
    await cp.endTurn();
    assert.deepEqual(
      (await cp.diff(2)).changes.map((c) => `${c.change} ${c.path}`),
      ['modified a.txt'],
    );
    await cp.close();
  } finally {
    git.release();
    git.restore();
  }
});

test('a warm snapshot that fails says nothing; the snapshot before a tool tries again and says it', async () => {
  const ws = tempDir('clm-cp-warm-');
  populate(ws);
  const state = tempDir('clm-cp-state-');
  const notices: string[] = [];
  const bin = tempDir('clm-cp-gitbin-');
  writeFileSync(join(bin, 'git'), `#!/bin/sh\n[ "$1" = --version ] && exec '${realGit}' "$@"\necho 'fatal: broken' >&2\nexit 128\n`);
  chmodSync(join(bin, 'git'), 0o755);
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  try {
    const cp = new Checkpoints({ stateDir: state, sessionId: 'S1', workspace: ws, notice: (t) => notices.push(t) });
    cp.beginTurn('just talk', 0);
    await cp.warm();
    await cp.endTurn();
    assert.equal(notices.join('\n'), '', 'a turn without tools hears nothing of it');
    // Nor a session that ends so (a one-shot turn without tools).
    const quiet = new Checkpoints({ stateDir: state, sessionId: 'S2', workspace: ws, notice: (t) => notices.push(t) });
    quiet.beginTurn('just talk', 0);
    await quiet.warm();
    await quiet.endTurn();
    await quiet.close();
    assert.equal(notices.join('\n'), '');
    cp.beginTurn('edit', 1);
    await cp.beforeChanges();
    assert.equal(notices.length, 1);
    assert.match(notices[0]!, /^checkpoint failed: /);
    await cp.close();
  } finally {
    process.env.PATH = path;
  }
});
