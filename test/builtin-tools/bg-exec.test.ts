import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../fixtures/temp-dir.js';
import { bgExecTool, shellExecTool, stopBackgroundJobs, BG_OUTPUT_CAP } from '../../src/builtin-tools/index.js';
import { call, processGone } from './fake-inv.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const jobId = (text: string) => Number(/^started background job (\d+): /.exec(text)?.[1]);

after(() => stopBackgroundJobs());

test('bg_exec: returns at once, the result arrives later through notify', async () => {
  const c = call(bgExecTool, { command: 'sleep 0.3; echo bgoutput123', label: 'probe' });
  const note = c.nextNote();
  const r = await c.result;
  assert.equal(c.notes.length, 0, 'the call returned before the command finished');
  assert.ok(r.ok);
  const id = jobId(r.text);
  assert.ok(id >= 1);
  assert.equal(r.text, `started background job ${id}: probe (result will arrive later as a new message, not as this call's result)`);
  assert.equal(await note, `[background job ${id} ("probe") finished, exit status 0]\nbgoutput123\n`);
  assert.equal(c.calls, 1);
});

test('bg_exec: job ids count up; label defaults to the command; no output; exit status', async () => {
  const a = call(bgExecTool, { command: 'exit 4' });
  const b = call(bgExecTool, { command: 'true', label: 'second' });
  const [ra, rb] = [await a.result, await b.result];
  const ida = jobId(ra.text);
  assert.equal(jobId(rb.text), ida + 1);
  assert.match(ra.text, /: exit 4 \(result will arrive/);
  assert.equal(await a.nextNote(), `[background job ${ida} ("exit 4") finished, exit status 4]\n(no output)`);
  assert.equal(await b.nextNote(), `[background job ${ida + 1} ("second") finished, exit status 0]\n(no output)`);
});

test('bg_exec: killed by a signal', async () => {
  const c = call(bgExecTool, { command: 'echo dying; kill -TERM $$', label: 'victim' });
  const id = jobId((await c.result).text);
  assert.equal(await c.nextNote(), `[background job ${id} ("victim") finished, killed by signal 15: Terminated]\ndying\n`);
});

test('bg_exec: output is capped at 16 KiB with a visible marker', async () => {
  const c = call(bgExecTool, { command: 'head -c 40000 /dev/zero | tr "\\0" z', label: 'big' });
  await c.result;
  const note = await c.nextNote();
  const body = note.slice(note.indexOf('\n') + 1);
  assert.ok(Buffer.byteLength(body) <= BG_OUTPUT_CAP);
  assert.match(body, /^z+\n\[output truncated: \d+ of 40000 bytes dropped\]$/);
});

test('bg_exec: argument errors', async () => {
  assert.equal((await call(bgExecTool, '{{').result).text, 'invalid arguments');
  assert.equal((await call(bgExecTool, { label: 'x' }).result).text, "missing required string argument 'command'");
});

test('bg_exec: stopBackgroundJobs kills each job group, children included, without notifying', async () => {
  const tmp = tempDir('clm-bg-');
  const pidFile = join(tmp, 'pid');
  // The job marks its natural end; stopping it must not wait for that.
  const mark = join(tmp, 'ended');
  const c = call(bgExecTool, { command: `sleep 30 & echo $! > ${pidFile}; wait; touch ${mark}`, label: 'long' });
  await c.result;
  let child = NaN;
  for (let i = 0; i < 50 && !(child > 0); i++) {
    await sleep(20);
    if (existsSync(pidFile)) child = Number(readFileSync(pidFile, 'utf8').trim());
  }
  assert.ok(child > 0 && !processGone(child));
  await stopBackgroundJobs();
  assert.equal(existsSync(mark), false, 'stopped, not waited for');
  await sleep(100);
  assert.equal(c.notes.length, 0, 'a stopped job is not news');
  assert.ok(processGone(child), `child ${child} survived`);
});

test('stopBackgroundJobs also stops a shell_exec command that is still running', async () => {
  const c = call(shellExecTool, { command: 'echo running; sleep 30' }, { timeoutMs: 0 });
  await sleep(200);
  await stopBackgroundJobs();
  const r = await c.result;
  assert.deepEqual([r.ok, r.text], [false, 'running\n\n(killed by signal 15: Terminated)']);
});
