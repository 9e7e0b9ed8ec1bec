// One-shot runs with a person at the terminal (stdin a TTY): a gated tool waits for their answer,
// asked on stderr; with stdin redirected the same run allows it unasked (scripts and CI).

import { ANSWER_KEYS } from '../../src/cli/permission-desk.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { cliSuite } from '../fixtures/cli-suite.js';
import { spawnPty } from '../fixtures/pty-screen.js';
import { bwrapOrSkip } from '../fixtures/bwrap.js';

const { mock, dirs, run } = await cliSuite({ dirs: 'each' });
const QUESTION = ANSWER_KEYS;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function oneshot(t: { after(fn: () => Promise<void>): void }, prompt: string, flags: string[] = []) {
  const s = spawnPty(['-u', mock.base, '-p', dirs.empty, ...flags, '-o', prompt], {
    dirs,
    cols: 120,
    rows: 30,
    env: { SHELL: '/bin/sh', NO_COLOR: '1' },
  });
  t.after(() => s.dispose());
  return s;
}

test('-o on a terminal: the tool waits for y, then runs', async (t) => {
  const ran = join(dirs.home, 'ran.txt'); // the workspace: the terminal's directory
  mock.push(oa.toolCall('shell_exec', { command: `echo RAN > ${ran}` }), oa.text('done'));
  const s = oneshot(t, 'go');
  await s.waitFor(QUESTION, 'the question');
  assert.match(s.text(), new RegExp(`allow tool shell_exec: echo RAN > ${ran.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  // Asked, and nothing runs until the answer: no second request, no file.
  await sleep(300);
  assert.equal(mock.posts.length, 1);
  assert.ok(!existsSync(ran), 'the command ran before it was allowed');
  s.type('y');
  await s.waitFor('done', 'the reply');
  assert.equal((await s.exited).code, 0);
  assert.ok(existsSync(ran));
  assert.match(s.text(), /-> allowed/);
});

test('-o on a terminal: n denies, the model is told, exit 0', async (t) => {
  const ran = join(dirs.home, 'ran.txt'); // the workspace: the terminal's directory
  mock.push(oa.toolCall('shell_exec', { command: `echo RAN > ${ran}` }), oa.text('understood'));
  const s = oneshot(t, 'go');
  await s.waitFor(QUESTION, 'the question');
  s.type('n');
  await s.waitFor('understood', 'the reply');
  assert.equal((await s.exited).code, 0);
  assert.ok(!existsSync(ran));
  const tool = mock.posts[1]!.json.messages.find((m: { role: string }) => m.role === 'tool');
  assert.match(tool.content, /denied/);
});

test('-o with stdin redirected: the same tool runs unasked', async () => {
  const ran = join(dirs.home, 'ran.txt'); // the workspace: the terminal's directory
  mock.push(oa.toolCall('shell_exec', { command: `echo RAN > ${ran}` }), oa.text('done'));
  const r = await run(['-o', 'go'], { env: { SHELL: '/bin/sh' } });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(ran));
  assert.ok(!r.stderr.includes(QUESTION));
});

test('-o on a terminal: keys typed before the question do not answer it', async (t) => {
  const ran = join(dirs.home, 'ran.txt'); // the workspace: the terminal's directory
  // The tool call comes late, so the keys below are typed while the model is still thinking.
  mock.push({ ...oa.toolCall('shell_exec', { command: `echo RAN > ${ran}` }), delayMs: 1000 }, oa.text('done'));
  const s = oneshot(t, 'go');
  await s.waitFor(() => mock.posts.length === 1, 'the request');
  s.type('yay, all good\r'); // a whole line
  s.type('ya'); // and a half-typed one
  await s.waitFor(QUESTION, 'the question');
  await sleep(500);
  assert.ok(!existsSync(ran), `keys typed before the question ran the command:\n${s.text()}`);
  assert.doesNotMatch(s.text(), /-> allowed/);
  s.type('n');
  await s.waitFor('done', 'the reply');
  assert.equal((await s.exited).code, 0);
  assert.ok(!existsSync(ran));
});

test('-o on a terminal: a command known to only read runs unasked in the sandbox, and is asked without it', {
  ...bwrapOrSkip(),
  timeout: 60_000,
}, async (t) => {
  dirs.write('config.lua', 'return {}\n');
  const listing = () => {
    const tool = mock.posts.at(-1)!.json.messages.find((m: { role: string }) => m.role === 'tool');
    return String(tool?.content ?? '');
  };
  mock.push(oa.toolCall('shell_exec', { command: 'ls -a | grep -c config' }), oa.text('counted'));
  const s = oneshot(t, 'go');
  await s.waitFor('counted', 'the reply');
  assert.equal((await s.exited).code, 0);
  assert.ok(!s.text().includes(QUESTION), `a read-only command was asked for:\n${s.text()}`);
  assert.match(listing(), /^\d+\s*$/m, 'it ran');

  // Where nothing confines it, the same command is asked.
  mock.reset();
  mock.push(oa.toolCall('shell_exec', { command: 'ls -a | grep -c config' }), oa.text('counted'));
  const full = oneshot(t, 'go', ['--sandbox', 'full']);
  await full.waitFor(QUESTION, 'the question');
  full.type('n');
  await full.waitFor('counted', 'the reply');
  assert.equal((await full.exited).code, 0);

  // read_only_commands = false in config.lua: asked in the sandbox too.
  dirs.write('config.lua', 'return { permissions = { read_only_commands = false } }\n');
  mock.reset();
  mock.push(oa.toolCall('shell_exec', { command: 'ls -a' }), oa.text('listed'));
  const off = oneshot(t, 'go');
  await off.waitFor(QUESTION, 'the question');
  off.type('n');
  await off.waitFor('listed', 'the reply');
  assert.equal((await off.exited).code, 0);
});
