// What can wait for the first request or frame waits: the sandbox's availability check (a
// process spawned) and the connection probe start once the first model request is on its way,
// or when a drawing front end says its first frame is up; a notice the check has is still said.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { cliSuite } from '../fixtures/cli-suite.js';
import * as oa from '../fixtures/openai-replies.js';
import { show } from '../fixtures/run-cli.js';
import { parseCommandLine } from '../../src/cli/args.js';
import { createRuntime, type Runtime } from '../../src/cli/runtime.js';

const { mock, dirs, run } = await cliSuite({ dirs: 'each' });
const open: Runtime[] = [];
after(async () => {
  for (const r of open) await r.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, pred: () => boolean, ms = 15_000) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A `bwrap` first on PATH that notes each start in `marker` and then fails (no sandbox here), after `seconds`. */
function countingBwrap(seconds = 0): { path: string; marker: string } {
  const bin = join(dirs.root, 'fake-bin');
  mkdirSync(bin, { recursive: true });
  const marker = join(dirs.root, 'bwrap-started');
  writeFileSync(join(bin, 'bwrap'), `#!/bin/sh\necho started >> '${marker}'\nsleep ${seconds}\nexit 1\n`);
  chmodSync(join(bin, 'bwrap'), 0o755);
  return { path: `${bin}:${process.env.PATH}`, marker };
}

/** The environment of a runtime with `path` as PATH (a counting bwrap first) and this test's directories. */
const envWith = (path: string): NodeJS.ProcessEnv => ({
  ...process.env,
  PATH: path,
  XDG_CONFIG_HOME: dirs.config,
  XDG_STATE_HOME: dirs.state,
  HOME: dirs.home,
  CLM_DEBUG_LOG: '',
  CLM_API_KEY: '',
});

test('a front end that draws: no spawn and no probe until its first frame is up', { timeout: 30_000 }, async () => {
  const fake = countingBwrap();
  const rt = await createRuntime({
    args: parseCommandLine(['-u', mock.base, '-p', dirs.empty]),
    onEvent: () => {},
    env: envWith(fake.path),
    startsDeferred: true,
  });
  open.push(rt);
  await rt.ready;
  await sleep(300);
  assert.ok(!existsSync(fake.marker), 'bwrap was started before the first frame');
  assert.deepEqual(
    mock.requests.map((r) => `${r.method} ${r.path}`),
    [],
  );
  rt.startDeferred();
  await until('the sandbox check', () => existsSync(fake.marker));
  await until('the probe', () => mock.requests.some((r) => r.method === 'GET' && r.path.endsWith('/models')));
  assert.equal(readFileSync(fake.marker, 'utf8'), 'started\n', 'the check ran more than once');
});

test('a front end that draws keys meanwhile: each deferred start in a turn of its own, after its pause', { timeout: 30_000 }, async () => {
  const fake = countingBwrap();
  const turns: (() => void)[] = [];
  // Start-up's own pauses (before the tools' start) pass at once; the deferred work's are held.
  let held = false;
  let early = 0;
  const rt = await createRuntime({
    args: parseCommandLine(['-u', mock.base, '-p', dirs.empty]),
    onEvent: () => {},
    env: envWith(fake.path),
    startsDeferred: true,
    pause: () => (held ? new Promise<void>((r) => turns.push(r)) : Promise.resolve(void early++)),
  });
  open.push(rt);
  await rt.ready;
  assert.equal(early, 1, 'start-up gave the front end a turn before the tools started');
  held = true;
  const probed = () => mock.requests.some((r) => r.method === 'GET' && r.path.endsWith('/models'));
  rt.startDeferred();
  await sleep(300);
  assert.equal(turns.length, 1, 'one pause before the first start');
  assert.ok(!existsSync(fake.marker) && !probed(), 'a start before its pause was over');
  turns.shift()!();
  await until('the first start', () => existsSync(fake.marker) || probed());
  await sleep(300);
  assert.equal(turns.length, 1, 'the second start waits for its pause');
  assert.ok(!(existsSync(fake.marker) && probed()), 'both started after one pause');
  turns.shift()!();
  await until('the sandbox check', () => existsSync(fake.marker));
  await until('the probe', probed);
  assert.equal(turns.length, 0);
});

test('a one-shot run sends its model request before it probes the server', { timeout: 30_000 }, async () => {
  mock.push(oa.text('hello'));
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /hello/);
  const seen = mock.requests.map((q) => `${q.method} ${q.path}`);
  assert.equal(seen[0], 'POST /v1/chat/completions', seen.join(', '));
});

test('a plain turn where the sandbox cannot be had still says so, once, however slow the check', { timeout: 30_000 }, async () => {
  const fake = countingBwrap(1);
  mock.push(oa.text('no tools here'));
  const r = await run(['-o', 'hi'], { env: { PATH: fake.path } });
  assert.equal(r.code, 0, show(r));
  const notices = r.stderr.split('\n').filter((l) => l.includes('sandbox: workspace-write is not available'));
  assert.equal(notices.length, 1, r.stderr);
});

test('a quick answer without tools never starts the first checkpoint snapshot (no git run)', { timeout: 30_000 }, async () => {
  const bin = join(dirs.root, 'git-bin');
  mkdirSync(bin, { recursive: true });
  const marker = join(dirs.root, 'git-started');
  const real = execFileSync('sh', ['-c', 'command -v git']).toString().trim();
  writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$@" >> '${marker}'\nexec '${real}' "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  mock.push(oa.text('quick'));
  const r = await run(['-o', 'hi'], { env: { PATH: `${bin}:${process.env.PATH}` } });
  assert.equal(r.code, 0, show(r));
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  assert.doesNotMatch(ran, /\binit\b|update-index|add /, ran);
});
