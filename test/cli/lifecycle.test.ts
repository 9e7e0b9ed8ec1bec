// How clm ends: signals never leave tool processes behind, an interrupted start leaves no empty
// session, a background job's turn does not swallow the REPL's next line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../fixtures/temp-dir.js';
import * as oa from '../fixtures/openai-replies.js';
import { show, waitFor } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';
import { pidsOf, uniqueSleep } from '../fixtures/processes.js';

const { mock, dirs, run, spawn } = await cliSuite({ dirs: 'each' });

/** Running (a zombie waiting for a parent that may never reap it counts as gone). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const [sig, code] of [
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const) {
  test(`${sig} during a shell_exec ends clm with ${code} and stops the command's processes`, async () => {
    // Found by its command line: in the sandbox, $! is a number of its own pid namespace.
    const s = uniqueSleep(60);
    mock.push(oa.toolCall('shell_exec', { command: `sleep ${s} & wait` }));
    const c = spawn(['-o', 'go']);
    await waitFor(() => pidsOf(`sleep ${s}`).length === 1, 'the command to start');
    const pid = pidsOf(`sleep ${s}`)[0]!;
    assert.ok(alive(pid));
    c.child.kill(sig);
    const r = await c.result;
    assert.equal(r.code, code, show(r));
    await sleep(100);
    assert.ok(!alive(pid), `sleep ${pid} survived ${sig}`);
  });
}

test('a second Ctrl-C while shutting down still stops a job that ignores SIGTERM', async () => {
  const s = uniqueSleep(60);
  mock.push(oa.toolCall('bg_exec', { command: `trap "" TERM; sleep ${s}` }), oa.text('started'));
  // Unconfined: a sandboxed job cannot ignore the stop (its sandbox goes, and everything in it).
  const c = spawn(['-o', 'go', '--sandbox', 'full']);
  await waitFor(() => c.stdout.includes('started') && pidsOf(`sleep ${s}`).length === 1, 'the job');
  const pid = pidsOf(`sleep ${s}`)[0]!;
  await sleep(200); // clm is now in its 2 s grace period, waiting for the job to end
  c.child.kill('SIGINT');
  const r = await c.result;
  assert.equal(r.code, 130, show(r));
  await sleep(100);
  assert.ok(!alive(pid), `job ${pid} survived`);
});

test('Ctrl-C while starting (waiting for an MCP server) leaves no session and no server', async () => {
  const cfg = join(dirs.config, 'clm');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.lua'), 'return { mcp_servers = { { name = "s", command = { "sleep", "77" } } } }\n');
  const c = spawn(['-o', 'go']);
  const { execFileSync } = await import('node:child_process');
  // Interrupt once clm is really waiting: its MCP server has started.
  await waitFor(() => /^sleep 77$/m.test(execFileSync('ps', ['-eo', 'args']).toString()), 'the MCP server');
  c.child.kill('SIGINT');
  const r = await c.result;
  assert.equal(r.code, 130, show(r));
  const sessions = existsSync(dirs.sessions) ? readdirSync(dirs.sessions).filter((n) => n.endsWith('.jsonl')) : [];
  assert.deepEqual(sessions, []);
  await sleep(100);
  const ps = execFileSync('ps', ['-eo', 'args']).toString();
  assert.ok(!/^sleep 77$/m.test(ps), 'the MCP server process is gone');
});

test('REPL: a line that arrives while a background job turn runs is still processed', async () => {
  mock.script((req) => {
    const last = oa.lastMessage(req.json);
    if (last.role === 'user' && last.content === 'go') return oa.toolCall('bg_exec', { command: 'sleep 0.3; echo job output', label: 'j' });
    if (last.role === 'tool') return oa.text('started');
    if (String(last.content).startsWith('[background job'))
      return { body: { choices: [{ message: { role: 'assistant', content: 'noted' }, finish_reason: 'stop' }] }, delayMs: 400 };
    return oa.text(`echo: ${last.content}`);
  });
  const c = spawn(['-H'], { keepStdin: true });
  c.child.stdin!.write('go\n');
  await waitFor(() => mock.posts.length >= 3, 'the notification turn');
  c.child.stdin!.write('second\n');
  c.child.stdin!.end();
  const r = await c.result;
  assert.equal(r.code, 0, show(r));
  assert.doesNotMatch(r.stderr, /turn already in progress/);
  assert.match(r.stdout, /echo: second/);
});

test('a job left running with & does not make the call wait for its timeout', async () => {
  // The job marks its own end; the call's result (and the run) must not wait for it.
  const mark = join(tempDir('clm-bgjob-'), 'job-ended');
  mock.push(oa.toolCall('shell_exec', { command: `(sleep 30; touch ${mark}) & echo server started` }), oa.text('ok'));
  const r = await run(['-o', 'go']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, 'server started\n');
  assert.equal(existsSync(mark), false, 'the run ended before the background job did');
});
