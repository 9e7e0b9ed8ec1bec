import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../fixtures/temp-dir.js';
import { shellExecTool } from '../../src/builtin-tools/index.js';
import { CallAborted } from '../../src/core/tool-batch.js';
import { call, processGone } from './fake-inv.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('shell_exec: echo', async () => {
  const r = await call(shellExecTool, { command: 'echo hello' }).result;
  assert.deepEqual([r.ok, r.text], [true, 'hello\n']);
});

test('shell_exec: no output', async () => {
  const r = await call(shellExecTool, { command: 'true' }).result;
  assert.deepEqual([r.ok, r.text], [true, '(command produced no output)']);
});

test('shell_exec: stderr is merged with stdout, in the order it was written', async () => {
  // The lines are written while clm's event loop is busy, so it finds them all at once: read
  // from two pipes they would come stdout first; one pipe keeps the order they were written in.
  const c = call(shellExecTool, { command: 'sleep 0.3; for i in 1 2 3; do echo out$i; echo err$i >&2; done' });
  await new Promise((r) => setTimeout(r, 100));
  const busyUntil = performance.now() + 1500;
  while (performance.now() < busyUntil);
  assert.equal((await c.result).text, 'out1\nerr1\nout2\nerr2\nout3\nerr3\n');
});

test('shell_exec: nonzero exit fails with the status after the output', async () => {
  let r = await call(shellExecTool, { command: 'echo partial; exit 3' }).result;
  assert.deepEqual([r.ok, r.text], [false, 'partial\n\n(exit status 3)']);
  r = await call(shellExecTool, { command: 'exit 7' }).result;
  assert.deepEqual([r.ok, r.text], [false, '(exit status 7)']);
});

test('shell_exec: killed by a signal', async () => {
  const r = await call(shellExecTool, { command: 'echo bye; kill -KILL $$' }).result;
  assert.deepEqual([r.ok, r.text], [false, 'bye\n\n(killed by signal 9: Killed)']);
});

test('shell_exec: stdin from the argument, else /dev/null', async () => {
  let r = await call(shellExecTool, { command: 'tr a-z A-Z', stdin: 'shout\n' }).result;
  assert.equal(r.text, 'SHOUT\n');
  r = await call(shellExecTool, { command: 'cat; echo "[eof]"' }).result;
  assert.equal(r.text, '[eof]\n');
  // A command that ignores its input must not trip over the pipe.
  r = await call(shellExecTool, { command: 'echo ignored', stdin: 'x'.repeat(200_000) }).result;
  assert.equal(r.text, 'ignored\n');
});

test('shell_exec: $SHELL is used, /bin/sh when unset', async () => {
  const saved = process.env.SHELL;
  try {
    delete process.env.SHELL;
    let r = await call(shellExecTool, { command: 'echo $0' }).result;
    assert.equal(r.text, '/bin/sh\n');
    process.env.SHELL = '/bin/nonexistent-shell';
    r = await call(shellExecTool, { command: 'echo hi' }).result;
    assert.equal(r.ok, false);
    assert.equal(r.text, "cannot run '/bin/nonexistent-shell': No such file or directory");
  } finally {
    if (saved === undefined) delete process.env.SHELL;
    else process.env.SHELL = saved;
  }
});

test('shell_exec: argument errors', async () => {
  assert.equal((await call(shellExecTool, 'nope').result).text, 'invalid arguments');
  assert.equal((await call(shellExecTool, { stdin: 'x' }).result).text, "missing required string argument 'command'");
});

test('shell_exec: runs in its own process group', async () => {
  const r = await call(shellExecTool, { command: 'ps -o pgid= -p $$; echo $$' }).result;
  const [pgid, pid] = r.text.trim().split(/\s+/);
  assert.equal(pgid, pid);
  assert.notEqual(Number(pgid), process.pid);
});

test('shell_exec: timeout stops the whole group, including a backgrounded child', async () => {
  const c = call(shellExecTool, { command: 'sleep 30 & echo $!; wait' }, { timeoutMs: 300 });
  const r = await c.result;
  assert.equal(r.ok, false);
  const child = Number(r.text.split('\n')[0]);
  assert.ok(child > 0, r.text);
  // Stopped by the deadline: the output so far, why, and how.
  assert.match(r.text, /\n\(timed out; killed by signal 15: Terminated\)$/);
  await sleep(50);
  assert.ok(processGone(child), `background child ${child} survived`);
});

test('shell_exec: cancel while the shell already exited but a "&" job holds the pipe', async () => {
  const mark = join(tempDir('clm-sh-'), 'job-ended');
  const c = call(shellExecTool, { command: `(sleep 30; touch ${mark}) & echo $!` });
  await sleep(300);
  c.abort();
  const r = await c.result;
  assert.equal(existsSync(mark), false, 'the result came without waiting for the job to end');
  assert.equal(r.ok, false);
  const child = Number(r.text.split('\n')[0]);
  assert.match(r.text, /\n\(cancelled\)$/);
  await sleep(50);
  assert.ok(processGone(child), `background child ${child} survived`);
  assert.equal(c.calls, 1);
});

test('shell_exec: SIGKILL follows when SIGTERM is ignored', async () => {
  const c = call(shellExecTool, { command: "trap '' TERM; echo ready; while :; do sleep 0.1; done" });
  await sleep(300);
  const t0 = Date.now();
  c.abort();
  const r = await c.result;
  const elapsed = Date.now() - t0;
  assert.match(r.text, /^ready\n\n\(cancelled; killed by signal 9: Killed\)$/);
  // SIGKILL only after the grace period given to SIGTERM.
  assert.ok(elapsed >= 1500, `killed after ${elapsed} ms`);
});

test('shell_exec: an already aborted call does not spawn', async () => {
  const marker = join(tempDir('clm-sh-'), 'ran');
  const r = await call(shellExecTool, { command: `touch ${marker}` }, { aborted: true }).result;
  assert.deepEqual([r.ok, r.text], [false, 'cancelled']);
  await sleep(100);
  assert.equal(existsSync(marker), false);
});

test('shell_exec: output over the cap keeps the head and a visible marker', async () => {
  const r = await call(shellExecTool, { command: 'yes 0123456789 | head -c 100000' }, { outputCap: 1000 }).result;
  assert.ok(r.ok);
  assert.ok(r.bytes!.length <= 1000, `${r.bytes!.length} bytes`);
  assert.match(r.text, /^0123456789\n0123456789\n/);
  const m = /\n\[output truncated: (\d+) of 100000 bytes dropped\]$/.exec(r.text);
  assert.ok(m, r.text.slice(-80));
  assert.equal(Number(m![1]) + r.text.indexOf('\n[output truncated'), 100000);
});

test('shell_exec: cut output still shows the exit status, within the cap', async () => {
  const r = await call(shellExecTool, { command: 'head -c 5000 /dev/zero | tr "\\0" x; exit 2' }, { outputCap: 500 }).result;
  assert.equal(r.ok, false);
  assert.ok(Buffer.byteLength(r.text) <= 500);
  assert.match(r.text, /^x+\n\[output truncated: \d+ of 5000 bytes dropped\]\n\(exit status 2\)$/);
});

test('shell_exec: the cap never splits a UTF-8 character', async () => {
  // 3-byte characters; whatever the cut point, only whole characters remain.
  for (const cap of [200, 201, 202]) {
    const r = await call(shellExecTool, { command: 'for i in $(seq 300); do printf "€"; done' }, { outputCap: cap }).result;
    const head = r.text.slice(0, r.text.indexOf('\n[output truncated'));
    assert.ok(/^€+$/.test(head), `cap ${cap}: ${JSON.stringify(head.slice(-3))}`);
    assert.ok(r.bytes!.length <= cap);
  }
});

test('shell_exec: output exactly at the cap is not marked', async () => {
  const r = await call(shellExecTool, { command: 'head -c 300 /dev/zero | tr "\\0" y' }, { outputCap: 300 }).result;
  assert.equal(r.text, 'y'.repeat(300));
});

test('shell_exec: a job left running with & does not hold the call; it is stopped with the rest at exit', async () => {
  const r = await call(shellExecTool, { command: 'sleep 30 & echo $!; echo started' }).result;
  assert.equal(r.ok, true);
  const child = Number(r.text.split('\n')[0]);
  assert.match(r.text, /started/);
  // The call returned while the job still runs: it did not wait for it.
  assert.ok(!processGone(child), 'the job keeps running after the call');
  const { killAllGroupsNow } = await import('../../src/builtin-tools/process-group.js');
  killAllGroupsNow();
  await sleep(100);
  assert.ok(processGone(child), `job ${child} survived killAllGroupsNow`);
});

test('shell_exec: progress is the end of the output so far; a cancel reports the output at once', async () => {
  const c = call(shellExecTool, { command: 'echo a; echo b; sleep 30' });
  while (c.progress.at(-1) !== 'a\nb\n') await sleep(10);
  assert.equal(c.calls, 0);
  c.inv.signal.addEventListener('abort', () => assert.equal(c.calls, 1, 'reported inside the abort'));
  c.abortWith(new CallAborted('cancel', 'cancelled by user'));
  assert.equal(c.calls, 1);
  assert.deepEqual(await c.result, { ok: false, text: 'a\nb\n\n(cancelled by user; terminated)' });
  const n = c.progress.length;
  await sleep(300);
  assert.equal(c.progress.length, n, 'no progress after the end');
});
