// Fault battery, session locks: a lock file whose pid is alive but is not a clm on that session
// — pid 1, a pid reused by another program, a clm busy with another session — does not block a
// resume (the holder must have the lock file open). A lock a live clm holds is refused without
// a terminal, naming the lock file, the pid and how to take the session over; on a terminal the
// person is asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as spawnProcess } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { writeSession } from '../fixtures/cli-suite.js';
import { faultSuite, KNOWN_KEY } from '../fixtures/fault-suite.js';
import { spawnPty } from '../fixtures/pty-screen.js';
import { show, waitFor } from '../fixtures/run-cli.js';
import { tally } from '../fixtures/tally.js';

const { mock, dirs, run, spawn, captured } = await faultSuite();

const ID = '20261201-120000-0badc0de';
const ID2 = '20261201-120000-0badc0d2';
const lockOf = (id: string) => join(dirs.sessions, `${id}.lock`);
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function saved(id = ID): void {
  writeSession(dirs, id, [
    { role: 'user', content: 'earlier' },
    { role: 'assistant', content: 'noted' },
  ]);
}

async function resumes(lockPid: number, what: string): Promise<void> {
  saved();
  writeFileSync(lockOf(ID), `${lockPid}\n`);
  mock.push(oa.text('resumed'));
  const r = await run(['-r', ID, '-o', 'go on']);
  assert.equal(r.code, 0, `${what}: ${show(r)}`);
  assert.equal(r.stdout, 'resumed\n');
  assert.deepEqual(mock.posts[0]!.json.messages.map((m: { content: string }) => m.content).slice(1), ['earlier', 'noted', 'go on']);
  assert.ok(!existsSync(lockOf(ID)), 'the lock is gone after the run');
}

test('a lock naming pid 1 (alive, not a clm) does not block the resume', async () => {
  await resumes(1, 'pid 1');
  tally('faults', 1);
});

test('a lock naming a reused pid (a live program that is not clm) does not block the resume', async (t) => {
  const other = spawnProcess('sleep', ['600'], { stdio: 'ignore' });
  t.after(() => other.kill('SIGKILL'));
  await resumes(other.pid!, 'a sleep');
  tally('faults', 1);
});

test('a lock naming a clm busy with another session does not block the resume', async (t) => {
  saved(ID2);
  mock.push({ hang: true });
  const busy = spawn(['-r', ID2, '-o', 'elsewhere']);
  t.after(() => busy.child.kill('SIGKILL'));
  await waitFor(() => mock.posts.length === 1 && existsSync(lockOf(ID2)), 'the other clm');
  mock.reset();
  await resumes(busy.child.pid!, 'a clm on another session');
  tally('faults', 1);
});

/** A clm that holds session ID (waiting for its reply); resolved once it has the lock. */
async function holder(t: { after(fn: () => unknown): void }) {
  saved();
  mock.push({ hang: true });
  const a = spawn(['-r', ID, '-o', 'from A']);
  t.after(() => a.child.kill('SIGKILL'));
  await waitFor(() => mock.posts.length === 1, "A's request");
  mock.reset();
  return a;
}

test('a lock a live clm holds, no terminal: exit 1 naming the lock file, the pid and how to take over', async (t) => {
  const a = await holder(t);
  const before = readFileSync(join(dirs.sessions, `${ID}.jsonl`), 'utf8');
  const r = await run(['-r', ID, '-o', 'from B']);
  assert.equal(r.code, 1, show(r));
  assert.match(
    r.stderr,
    new RegExp(
      `^clm: session ${ID} is in use by another clm \\(pid ${a.child.pid}\\); resume it once that one has ended, or take it over by deleting its lock file ${esc(lockOf(ID))}$`,
      'm',
    ),
  );
  assert.equal(mock.posts.length, 0);
  assert.equal(readFileSync(join(dirs.sessions, `${ID}.jsonl`), 'utf8'), before);
  // As the message says: deleting the lock file takes it over.
  unlinkSync(lockOf(ID));
  mock.push(oa.text('B has it'));
  const b = await run(['-r', ID, '-o', 'from B']);
  assert.equal(b.code, 0, show(b));
  assert.equal(b.stdout, 'B has it\n');
  tally('faults', 1);
});

for (const answer of ['n', 'y'] as const) {
  test(`a lock a live clm holds, on a terminal: the person is asked; ${answer === 'y' ? 'yes takes it over' : 'no leaves it (exit 1)'}`, async (t) => {
    const a = await holder(t);
    mock.push(oa.text('taken over'));
    const s = spawnPty(['-u', mock.base, '-p', dirs.empty, '-r', ID, '-o', 'from B'], {
      dirs,
      cols: 200,
      env: { CLM_API_KEY: KNOWN_KEY, NO_COLOR: '1' },
    });
    t.after(() => s.dispose());
    await s.waitFor('[y/N]', 'the question');
    assert.match(s.text(), new RegExp(`session ${ID} is in use by another clm \\(pid ${a.child.pid}\\)`));
    assert.equal(mock.posts.length, 0, 'nothing sent before the answer');
    s.type(`${answer}\r`);
    const { code } = await s.exited;
    captured('the terminal', s.raw());
    if (answer === 'y') {
      assert.equal(code, 0, s.text());
      assert.match(s.text(), /taken over/);
      assert.equal(mock.posts.length, 1);
    } else {
      assert.equal(code, 1, s.text());
      assert.match(s.text(), new RegExp(`clm: session ${ID} is in use by another clm`));
      assert.equal(mock.posts.length, 0);
      assert.ok(existsSync(lockOf(ID)), "A's lock stays");
    }
    tally('faults', 1);
  });
}
