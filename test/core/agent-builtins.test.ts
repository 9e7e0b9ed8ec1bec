// Builtin tools driven by the real agent and the mock LLM: the original's file, shell and
// bg_exec cases (test_file_tools, test_shell_exec, test_bg_exec, agent free during shell exec,
// cancel of a backgrounded job).

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../fixtures/temp-dir.js';
import { startMockLlm, type MockLlm } from '../fixtures/mock-llm.js';
import * as oa from '../fixtures/openai-replies.js';
import { harness } from '../fixtures/agent-harness.js';
import { builtinTools, stopBackgroundJobs } from '../../src/builtin-tools/index.js';
import { ECANCELED } from '../../src/core/errors.js';

let mock: MockLlm;
let dir: string;
before(async () => {
  mock = await startMockLlm();
  dir = mkdtempSync(join(tmpdir(), 'clm-builtins-'));
});
after(async () => {
  await stopBackgroundJobs();
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => mock.reset());

const withBuiltins = (o: Parameters<typeof harness>[1] = {}) =>
  harness(mock, { permission: 'allow_once', ...o, cfg: { builtinTools: builtinTools(), ...o.cfg } });

test('write_file (through permission) then read_file (test_file_tools)', async () => {
  const path = join(dir, 'hello.txt');
  mock.push(oa.toolCall('write_file', { path, content: 'hello\nworld\n' }), oa.toolCall('read_file', { path }), oa.text('done'));
  const r = withBuiltins();
  assert.equal((await r.agent.run('write it')).status, 0);
  assert.equal(readFileSync(path, 'utf8'), 'hello\nworld\n');
  assert.equal(r.results.length, 2);
  assert.equal(r.results[0]!.content, 'ok: file written');
  assert.match(r.results[1]!.content, /hello/);
  assert.deepEqual(
    r.permissions.map((p) => p.name),
    ['write_file'],
    'read_file is no-prompt, write_file is gated',
  );
});

test('shell_exec runs a command (test_shell_exec)', async () => {
  mock.push(oa.toolCall('shell_exec', { command: 'echo hello' }), oa.text('ok'));
  const r = withBuiltins();
  assert.equal((await r.agent.run('run')).status, 0);
  assert.equal(r.results[0]!.outcome, 'ok');
  assert.match(r.results[0]!.content, /hello/);
  assert.match(mock.posts[1]!.body, /hello/);
});

test('shell_exec failure reports the exit status to the model', async () => {
  mock.push(oa.toolCall('shell_exec', { command: 'echo oops; exit 3' }), oa.text('ok'));
  const r = withBuiltins();
  await r.agent.run('run');
  assert.equal(r.results[0]!.outcome, 'failed');
  assert.match(r.results[0]!.content, /oops\n+\(exit status 3\)\]$/);
});

test('closing the agent during shell_exec does not crash when the child exits (test_agent_free_during_shell_exec)', async () => {
  mock.push(oa.toolCall('shell_exec', { command: 'sleep 0.2; echo late' }));
  const r = withBuiltins();
  r.agent.submit('x');
  while (!r.events.some((e) => e.startsWith('begin:shell_exec'))) await new Promise((res) => setTimeout(res, 5));
  r.agent.close();
  await new Promise((res) => setTimeout(res, 400));
  assert.equal(r.results.length, 0);
});

test('cancel with a backgrounded job in the command finishes promptly (test_shell_exec_cancel_backgrounded_job)', async () => {
  // The job marks its natural end: the cancelled turn must end without waiting for it.
  const mark = join(tempDir('clm-cancel-'), 'job-ended');
  mock.push(oa.toolCall('shell_exec', { command: `(sleep 30; touch ${mark}) & echo started; wait` }));
  const r = withBuiltins();
  const d = r.turnDone();
  r.agent.submit('x');
  while (!r.events.some((e) => e.startsWith('begin:shell_exec'))) await new Promise((res) => setTimeout(res, 5));
  await new Promise((res) => setTimeout(res, 100));
  r.agent.cancel();
  assert.equal(await d, ECANCELED);
  assert.equal(existsSync(mark), false);
});

test('bg_exec returns at once; the job result arrives later as a new turn (test_bg_exec)', async () => {
  mock.push(
    oa.toolCall('bg_exec', { command: 'sleep 0.1; echo bgoutput123', label: 'probe' }),
    oa.text('started it'),
    oa.text('saw the result'),
  );
  const r = withBuiltins();
  const first = r.turnDone();
  r.agent.submit('start a job');
  assert.equal(await first, 0);
  assert.match(r.results[0]!.content, /^started background job \d+: probe \(result will arrive later/);
  assert.equal(mock.posts.length, 2);
  const second = r.turnDone();
  assert.equal(await second, 0);
  assert.equal(mock.posts.length, 3);
  const last = mock.posts[2]!.json.messages.at(-1);
  assert.equal(last.role, 'user');
  assert.match(last.content, /^\[background job \d+ \("probe"\) finished, exit status 0\]\nbgoutput123/);
});

test('a shell_exec timeout keeps the output printed so far, reported as a timeout', async () => {
  // 3 s: time for a shell to start and print on a loaded machine, before the timeout strikes.
  mock.push(oa.toolCall('shell_exec', { command: 'echo partial output line; sleep 30', timeout_ms: 3000 }), oa.text('ok'));
  const r = withBuiltins();
  assert.equal((await r.agent.run('run')).status, 0);
  assert.equal(r.results[0]!.outcome, 'timedout');
  assert.match(
    r.results[0]!.content,
    /^\[tool failed: partial output line\n+\(timed out after 3000 ms; killed by signal 15: Terminated\)\]$/,
  );
});

test('cancelling a running shell_exec keeps what it printed: in its result, in the history, for the model', async () => {
  mock.push(oa.toolCall('shell_exec', { command: 'echo start; sleep 30' }), oa.text('understood'));
  const r = withBuiltins();
  const progress: string[] = [];
  r.agent.subscribe((e) => {
    if (e.type === 'tool_progress') progress.push(e.text);
  });
  const d = r.turnDone();
  r.agent.submit('run it');
  // As a person would: once "start" shows (or after a while, without a live view).
  for (const t0 = Date.now(); !progress.some((p) => p.includes('start')) && Date.now() - t0 < 3000; )
    await new Promise((res) => setTimeout(res, 10));
  r.agent.cancel();
  assert.equal(await d, ECANCELED);
  // The result is there as the turn ends (cancel() does not wait for the process).
  assert.equal(r.results.length, 1);
  assert.equal(r.results[0]!.outcome, 'failed');
  assert.match(r.results[0]!.content, /^\[tool failed: start\n+\(cancelled by user; terminated\)\]$/);
  const tool = r.agent.messages.find((m) => m.role === 'tool');
  assert.equal(tool?.content, r.results[0]!.content);
  // The model sees it with the next prompt.
  assert.equal((await r.agent.run('what happened?')).status, 0);
  const sent = mock.posts[1]!.json.messages.find((m: { role: string }) => m.role === 'tool');
  assert.match(sent.content, /start\n+\(cancelled by user; terminated\)/);
});

test('a running shell_exec reports the end of its output as progress, a few times a second at most', async () => {
  mock.push(
    oa.toolCall('shell_exec', {
      command: 'echo one; sleep 0.4; echo two; sleep 0.4; for i in $(seq 1 10); do seq 1 500 | sed "s/^/chatty $i /"; sleep 0.05; done',
    }),
    oa.text('ok'),
  );
  const r = withBuiltins();
  const progress: { text: string; at: number }[] = [];
  let begun = 0;
  r.agent.subscribe((e) => {
    if (e.type === 'tool_begin') begun = performance.now();
    if (e.type === 'tool_progress') {
      assert.equal(e.name, 'shell_exec');
      progress.push({ text: e.text, at: performance.now() });
    }
  });
  const t0 = performance.now();
  assert.equal((await r.agent.run('run')).status, 0);
  const elapsed = performance.now() - t0;
  assert.ok(begun > 0);
  const texts = progress.map((p) => p.text);
  assert.ok(texts.includes('one\n'), JSON.stringify(texts.slice(0, 3)));
  assert.ok(texts.includes('one\ntwo\n'), JSON.stringify(texts.slice(0, 3)));
  // The tail only: bounded, and from a line start.
  assert.ok(texts.some((t) => t.startsWith('chatty ')));
  for (const t of texts) assert.ok(t.length <= 4096 && /^(one|chatty \d+ \d+)\n/.test(t), t.slice(0, 80));
  // Throttled: 3,000 lines come as a handful of reports (at most one per 100 ms, plus the first).
  assert.ok(progress.length <= elapsed / 100 + 2, `${progress.length} reports in ${elapsed.toFixed(0)} ms`);
  // The result is the whole output; progress never reaches the model.
  assert.match(r.results[0]!.content, /^one\ntwo\nchatty 1 1\n/);
  assert.ok(!mock.posts[1]!.body.includes('tool_progress'));
});
