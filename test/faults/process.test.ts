// Fault battery, the process: clm killed with SIGKILL while a tool runs (its process groups
// must die anyway, and the session must resume), SIGTERM during a tool, and SIGTERM or Ctrl-C
// while config.lua is stuck in a pattern bomb at start-up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { show, waitFor } from '../fixtures/run-cli.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { alive, handlersInPlace, pidsOf, uniqueSleep } from '../fixtures/processes.js';
import { tally } from '../fixtures/tally.js';

const { mock, dirs, run, spawn } = await faultSuite();

const sessionFiles = () => (existsSync(dirs.sessions) ? readdirSync(dirs.sessions).filter((n) => n.endsWith('.jsonl')) : []);
const sessionLines = (file: string) =>
  readFileSync(join(dirs.sessions, file), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);

test('kill -9 during shell_exec: the command, and what it put in the background, die with clm; the session resumes', async () => {
  // The leader execs into sleep, a background job sleeps too: both in the tool's process group
  // (found by their command lines: in the sandbox, $$ and $! are numbers of its own pid namespace).
  const [a, b] = [uniqueSleep(), uniqueSleep()];
  mock.push(oa.toolCall('shell_exec', { command: `sleep ${a} & exec sleep ${b}` }));
  const c = spawn(['-o', 'run it']);
  await waitFor(() => pidsOf(`sleep ${a}`).length === 1 && pidsOf(`sleep ${b}`).length === 1, 'the command to start', 30_000);
  const [job, leader] = [pidsOf(`sleep ${a}`)[0]!, pidsOf(`sleep ${b}`)[0]!];
  assert.ok(alive(job) && alive(leader));
  c.child.kill('SIGKILL');
  const r = await c.result;
  assert.equal(r.signal, 'SIGKILL', show(r));
  // Bounded by this wait only: the reaper notices clm's end at once.
  await waitFor(() => !alive(job) && !alive(leader), `the tool's processes ${job} and ${leader} to die`, 30_000);

  const [file] = sessionFiles();
  assert.ok(file, 'the session was written before the kill');
  const before = sessionLines(file);
  assert.deepEqual(
    before.slice(1).map((l) => l.role),
    ['user', 'assistant'],
  );
  assert.equal(before[2]!.tool_calls?.[0]?.name, 'shell_exec');

  const id = file.replace(/\.jsonl$/, '');
  mock.push(oa.text('picked up where we left off'));
  const again = await run(['-r', id, '-o', 'go on']);
  assert.equal(again.code, 0, show(again));
  assert.equal(again.stdout, 'picked up where we left off\n');
  // The unanswered call gets a stand-in result, so the server accepts the history.
  const sent = mock.posts.at(-1)!.json.messages as { role: string; content: string }[];
  assert.deepEqual(
    sent.slice(1).map((m) => m.role),
    ['user', 'assistant', 'tool', 'user'],
  );
  tally('faults', 2);
});

test('SIGTERM during a tool: exit 143 with a message, the tool stopped, the session holds the call', async () => {
  const s = uniqueSleep();
  mock.push(oa.toolCall('shell_exec', { command: `exec sleep ${s}` }));
  const c = spawn(['-o', 'run it']);
  await waitFor(() => pidsOf(`sleep ${s}`).length === 1, 'the command to start', 30_000);
  const [leader] = pidsOf(`sleep ${s}`) as [number];
  c.child.kill('SIGTERM');
  const r = await c.result;
  assert.equal(r.code, 143, show(r));
  assert.match(r.stderr, /^clm: ended by SIGTERM$/m);
  await waitFor(() => !alive(leader), 'the tool to stop', 30_000);
  const [file] = sessionFiles();
  assert.ok(file);
  assert.deepEqual(
    sessionLines(file)
      .slice(1)
      .map((l) => l.role),
    ['user', 'assistant'],
  );
  tally('faults', 1);
});

const BOMB = 'local x = string.find(string.rep("a", 40) .. "b", string.rep("a*", 30) .. "c")\nreturn {}\n';

for (const [sig, code] of [
  ['SIGTERM', 143],
  ['SIGINT', 130],
] as const) {
  test(`${sig} while config.lua is stuck in a pattern bomb ends clm at once (${code})`, async () => {
    dirs.write('config.lua', BOMB);
    const c = spawn(['-o', 'hi']);
    // Time to reach the evaluation, well before its 2 s limit (counted from when clm can take a
    // signal at all: before its first statement runs, Node's start is nobody's to handle).
    await waitFor(() => handlersInPlace(c.child.pid!), 'the signal handlers', 30_000);
    await new Promise((r) => setTimeout(r, 1200));
    c.child.kill(sig);
    const r = await c.result;
    assert.equal(r.code, code, show(r));
    assert.doesNotMatch(r.stderr, /evaluation took longer/, 'ended by the signal, not by the time limit');
    assert.equal(mock.posts.length, 0);
    assert.deepEqual(sessionFiles(), []);
    tally('faults', 1);
  });
}

test('a pattern bomb in config.lua left alone: exit 2 with a clear error after the time limit', async () => {
  dirs.write('config.lua', BOMB);
  const r = await run(['-o', 'hi'], { timeoutMs: 60_000 });
  assert.equal(r.code, 2, show(r));
  assert.match(
    r.stderr,
    /^clm: config\.lua: evaluation took longer than 2 s and was stopped \(stuck inside one library call, e\.g\. string\.find or string\.match with a pathological pattern\?\)/m,
  );
  assert.equal(mock.posts.length, 0);
  tally('faults', 1);
});

test('a reply with 60 shell_exec calls runs at most max_parallel_tools (here 4) at once; all finish', async () => {
  dirs.write('config.lua', 'return { tools = { web_search = { api_key = clm.secrets.search } }, max_parallel_tools = 4 }\n');
  const log = join(dirs.root, 'starts');
  const calls = Array.from({ length: 60 }, (_, i) => ({
    id: `c${i}`,
    name: 'shell_exec',
    args: { command: `echo + >> ${log}; sleep 0.3; echo - >> ${log}; echo ${i}` },
  }));
  mock.push(oa.toolCalls(calls), oa.text('all done'));
  const r = await run(['-o', 'many'], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'all done\n');
  // The order of starts and ends in the shared log is the only clock needed.
  let now = 0,
    peak = 0;
  for (const mark of readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
    now += mark === '+' ? 1 : -1;
    peak = Math.max(peak, now);
  }
  assert.equal(now, 0);
  // At most 4; at least 2 (a loaded machine may let one finish before the fourth has started).
  assert.ok(peak <= 4 && peak >= 2, `peak ${peak}`);
  const results = mock.posts[1]!.json.messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.content)
    .sort((a: string, b: string) => Number(a) - Number(b));
  assert.deepEqual(
    results,
    calls.map((_, i) => `${i}\n`),
  );
  tally('faults', 1);
});
