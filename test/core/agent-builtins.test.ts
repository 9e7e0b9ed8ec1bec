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
  mock.push(oa.toolCall('shell_exec', { command: 'echo partial output line; sleep 30', timeout_ms: 300 }), oa.text('ok'));
  const r = withBuiltins();
  assert.equal((await r.agent.run('run')).status, 0);
  assert.equal(r.results[0]!.outcome, 'timedout');
  assert.match(
    r.results[0]!.content,
    /^\[tool failed: partial output line\n+\(timed out after 300 ms; killed by signal 15: Terminated\)\]$/,
  );
});
