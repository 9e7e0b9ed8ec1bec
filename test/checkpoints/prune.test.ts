// Pruning takes a turn's manifests with its refs: after the per-session count cap and the
// repository's size cap, every manifest left in the shadow repository is one a kept turn names,
// none of a pruned turn is left, and each kept turn is still undone byte for byte (modes and
// directories come from its manifest), from a record read back as `clm undo ID` reads it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Checkpoints } from '../../src/checkpoints/index.js';
import { repoDirFor } from '../../src/checkpoints/shadow-repo.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { workspaceState } from '../fixtures/workspace-state.js';

/** The manifests the shadow repository holds. */
function stored(state: string, ws: string): string[] {
  return readdirSync(join(repoDirFor(state, ws), 'manifests'))
    .filter((n) => n.endsWith('.json'))
    .map((n) => n.slice(0, -5))
    .sort();
}

const named = (cp: Checkpoints) => [
  ...new Set(cp.turns.flatMap((t) => [t.before?.manifest, t.after?.manifest]).filter((m) => m !== undefined)),
];

/** A turn that makes a directory and a file of odd permission bits: each turn's manifests are its own. */
async function turn(cp: Checkpoints, ws: string, n: number, seen: Set<string>): Promise<ReturnType<typeof workspaceState>> {
  const before = workspaceState(ws);
  cp.beginTurn(`turn ${n}`, 0);
  await cp.beforeChanges();
  mkdirSync(join(ws, `d${n}`), { mode: 0o750 });
  writeFileSync(join(ws, `d${n}`, 'f.txt'), `${n}\n`);
  chmodSync(join(ws, `d${n}`, 'f.txt'), 0o600);
  const t = cp.turns.at(-1)!;
  await cp.endTurn();
  for (const m of [t.before?.manifest, t.after?.manifest]) if (m) seen.add(m);
  return before;
}

/** Each kept turn of `id`, last first, undone from its record on disk: the workspace as it was before it. */
async function undoEach(state: string, id: string, befores: Map<number, ReturnType<typeof workspaceState>>): Promise<number> {
  const cp = Checkpoints.open(state, id);
  assert.ok(cp);
  const kept = cp.turns.filter((t) => t.before).map((t) => t.turn);
  for (const n of kept.reverse()) {
    const r = await cp.plan(n);
    assert.deepEqual(r.plan.conflicts, []);
    await cp.apply(r, { overwrite: false });
    assert.deepEqual(workspaceState(cp.workspace), befores.get(n), `undo of turn ${n} of ${id}`);
  }
  return kept.length;
}

test('pruned turns take their manifests with them; every kept turn still undoes byte for byte', async () => {
  const ws = tempDir('clm-cp-manifests-');
  writeFileSync(join(ws, 'base.txt'), 'base\n');
  const state = tempDir('clm-cp-state-');
  const seen = new Set<string>();

  // The count cap: 2 turns with snapshots per session.
  const s1 = new Checkpoints({ stateDir: state, sessionId: 'S1', workspace: ws, settings: { keep: 2 } });
  const befores = new Map<number, ReturnType<typeof workspaceState>>();
  for (let n = 1; n <= 5; n++) befores.set(n, await turn(s1, ws, n, seen));
  await s1.close();
  assert.deepEqual(
    s1.turns.filter((t) => t.before).map((t) => t.turn),
    [4, 5],
  );
  const keptS1 = named(s1);
  assert.deepEqual(stored(state, ws), [...keptS1].sort(), 'the manifests left are those the kept turns name');
  assert.ok(
    [...seen].some((m) => !keptS1.includes(m)),
    'the pruned turns had manifests of their own',
  );

  // The size cap: a second session over it keeps its own last turn alone, and the older session nothing.
  const s2 = new Checkpoints({ stateDir: state, sessionId: 'S2', workspace: ws, settings: { maxBytes: 1 } });
  const befores2 = new Map<number, ReturnType<typeof workspaceState>>();
  for (let n = 1; n <= 3; n++) befores2.set(n, await turn(s2, ws, 10 + n, seen));
  // Under the count cap (100) S2 keeps all its manifests, and S1's kept ones stay.
  assert.deepEqual(stored(state, ws), [...new Set([...keptS1, ...named(s2)])].sort());
  await s2.close();
  const reS1 = Checkpoints.open(state, 'S1');
  assert.ok(reS1);
  assert.deepEqual(named(reS1), [], 'the older session lost its snapshots to the size cap');
  const reS2 = Checkpoints.open(state, 'S2');
  assert.ok(reS2);
  assert.deepEqual(
    reS2.turns.filter((t) => t.before).map((t) => t.turn),
    [3],
  );
  assert.deepEqual(stored(state, ws), [...named(reS2)].sort(), 'only the manifests of the one kept turn are left');
  assert.equal(await undoEach(state, 'S2', befores2), 1);
});

test('after the count cap alone, each kept turn of the session undoes byte for byte from its record', async () => {
  const ws = tempDir('clm-cp-manifests-');
  writeFileSync(join(ws, 'base.txt'), 'base\n');
  const state = tempDir('clm-cp-state-');
  const seen = new Set<string>();
  const cp = new Checkpoints({ stateDir: state, sessionId: 'S1', workspace: ws, settings: { keep: 3 } });
  const befores = new Map<number, ReturnType<typeof workspaceState>>();
  for (let n = 1; n <= 6; n++) befores.set(n, await turn(cp, ws, n, seen));
  await cp.close();
  const kept = named(cp);
  assert.deepEqual(stored(state, ws), [...kept].sort());
  for (const m of seen) if (!kept.includes(m)) assert.ok(!stored(state, ws).includes(m), `manifest ${m} of a pruned turn is gone`);
  assert.equal(await undoEach(state, 'S1', befores), 3);
});

test("another session of this process pruning under its size cap leaves a snapshot's manifest usable", async () => {
  const ws = tempDir('clm-cp-manifests-');
  writeFileSync(join(ws, 'base.txt'), 'base\n');
  mkdirSync(join(ws, 'private'), { mode: 0o700 });
  const state = tempDir('clm-cp-state-');
  const a = new Checkpoints({ stateDir: state, sessionId: 'A', workspace: ws, settings: { maxBytes: 1 } });
  await turn(a, ws, 1, new Set());
  chmodSync(join(ws, 'private'), 0o750);
  // B's first snapshot (of a workspace A's kept turn does not match) is taken ahead of its turn (as the CLI does while the model answers) …
  const b = new Checkpoints({ stateDir: state, sessionId: 'B', workspace: ws });
  b.beginTurn('edit', 0);
  await b.warm();
  const before = workspaceState(ws);
  // … then A's session ends over its cap and prunes what no record names, B's manifest among them.
  await a.close();
  await b.beforeChanges();
  writeFileSync(join(ws, 'base.txt'), 'changed\n');
  chmodSync(join(ws, 'private'), 0o755);
  await b.endTurn();
  assert.ok(stored(state, ws).includes(b.turns[0]!.before!.manifest));
  await b.apply(await b.plan(1), { overwrite: false });
  assert.deepEqual(workspaceState(ws), before);
  await b.close();
});
