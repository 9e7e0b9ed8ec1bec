// The line REPL (-H) on a real terminal (a pty from script(1)): line editing with history, Ctrl-C cancels
// a running turn and shows [cancelled], `exit` ends it.

import { ANSWER_KEYS } from '../../src/cli/permission-desk.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { waitFor } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';
import { spawnPty } from '../fixtures/pty-screen.js';

const { mock, dirs } = await cliSuite({ dirs: 'each' });
const haveScript = spawnSync('script', ['--version']).status === 0;
const bin = join(import.meta.dirname, '../../bin/clm.cjs');
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

test('on a terminal: history recall with the Up arrow, Ctrl-C cancels the turn, exit ends', {
  skip: !haveScript && 'script(1) not installed',
}, async () => {
  mock.push(oa.text('first answer'), { hang: true }, oa.text('third answer'));
  const cmd = `${q(process.execPath)} ${q(bin)} -H -u ${q(mock.base)} -p ${q(dirs.empty)}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    XDG_CONFIG_HOME: dirs.config,
    XDG_STATE_HOME: dirs.state,
    HOME: dirs.home,
    NO_COLOR: '1',
    TERM: 'xterm',
  };
  delete env.NODE_OPTIONS;
  delete env.CLM_API_KEY;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  await waitFor(() => out.includes('user> '), 'the prompt');
  child.stdin.write('hello there\r');
  await waitFor(() => out.includes('first answer'), 'the first answer');
  child.stdin.write('\x1b[A again\r'); // Up recalls "hello there"
  await waitFor(() => mock.posts.length === 2, 'the second request');
  assert.equal(oa.lastMessage(mock.posts[1]!.json).content, 'hello there again');
  child.stdin.write('\x03'); // Ctrl-C: cancels the hanging turn, the REPL stays
  await waitFor(() => out.includes('[cancelled]'), 'the cancel');
  child.stdin.write('third\r');
  await waitFor(() => out.includes('third answer'), 'the third answer');
  child.stdin.write('exit\r');
  assert.equal(await exited, 0);
});

/** The REPL on a pty: the child, its output so far, and its exit. */
function onPty(t: { after(fn: () => void): void }, extra: string[] = [], o: { stdoutTo?: string } = {}) {
  const cmd =
    [process.execPath, bin, '-H', '-u', mock.base, '-p', dirs.empty, ...extra].map(q).join(' ') + (o.stdoutTo ? ` > ${q(o.stdoutTo)}` : '');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    XDG_CONFIG_HOME: dirs.config,
    XDG_STATE_HOME: dirs.state,
    HOME: dirs.home,
    NO_COLOR: '1',
    TERM: 'xterm',
    SHELL: '/bin/sh',
  };
  delete env.NODE_OPTIONS;
  delete env.CLM_API_KEY;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'], cwd: dirs.root });
  const s = { child, out: '', exited: new Promise<number | null>((r) => child.on('exit', (c) => r(c))) };
  // A failed assertion must not leave the REPL running (and the test file hanging).
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  child.stdout.on('data', (d) => {
    s.out += d;
  });
  return s;
}

const QUESTION = ANSWER_KEYS;
const toolMessage = (i: number, id: string) => mock.posts[i]!.json.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === id);

test('on a terminal a gated tool waits for the person: y runs it, n denies it', {
  skip: !haveScript && 'script(1) not installed',
}, async (t) => {
  const ran = join(dirs.root, 'ran.txt');
  const denied = join(dirs.root, 'denied.txt');
  mock.push(
    oa.toolCall('shell_exec', { command: `echo RAN > ${ran}` }, 'c1'),
    oa.text('first done'),
    oa.toolCall('shell_exec', { command: `echo RAN > ${denied}` }, 'c2'),
    oa.text('second done'),
  );
  const s = onPty(t, ['-S']);
  await waitFor(() => s.out.includes('user> '), 'the prompt', 15_000);
  s.child.stdin.write('go\r');
  await waitFor(() => s.out.includes(QUESTION), 'the permission question');
  assert.ok(s.out.includes(`allow tool shell_exec: echo RAN > ${ran}`), s.out);
  // Asked, not answered: the command has not run and nothing more was sent to the model.
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(!existsSync(ran), 'shell_exec ran before the person answered');
  assert.equal(mock.posts.length, 1);
  s.child.stdin.write('y');
  await waitFor(() => s.out.includes('-> allowed'), 'the echo');
  await waitFor(() => s.out.includes('first done'), 'the first answer');
  assert.ok(existsSync(ran));

  s.child.stdin.write('again\r');
  await waitFor(() => s.out.split(QUESTION).length === 3, 'the second question');
  s.child.stdin.write('n');
  await waitFor(() => s.out.includes('second done'), `the second answer:\n${s.out}`);
  assert.ok(s.out.includes('-> denied'), s.out);
  assert.ok(!existsSync(denied), 'a denied command does not run');
  assert.equal(toolMessage(3, 'c2').content, '[tool failed: denied by user]');
  s.child.stdin.write('exit\r');
  assert.equal(await s.exited, 0);
});

test('on a terminal: (a) always keeps the rules it proposes in the rules file, which answers the queued call; Esc denies and cancels the turn', {
  skip: !haveScript && 'script(1) not installed',
}, async (t) => {
  const a = join(dirs.root, 'a.txt');
  const rulesFile = join(dirs.config, 'clm', 'permissions.rules');
  t.after(() => rmSync(rulesFile, { force: true }));
  mock.push(
    oa.toolCalls([
      { name: 'shell_exec', args: { command: `echo A >> ${a}` }, id: 'c1' },
      { name: 'shell_exec', args: { command: `echo A >> ${a}` }, id: 'c2' },
    ]),
    oa.text('both done'),
    oa.toolCall('write_file', { path: join(dirs.root, 'w.txt'), content: 'w' }, 'c3'),
  );
  const s = onPty(t, ['-S']);
  await waitFor(() => s.out.includes('user> '), 'the prompt', 15_000);
  s.child.stdin.write('go\r');
  await waitFor(() => s.out.includes(QUESTION), 'the question');
  // Each part of the command with its decision: the echo, and the write the redirection makes.
  assert.ok(s.out.includes('  ask    echo A'), s.out);
  assert.ok(s.out.includes(`  ask    > ${a}`), s.out);
  s.child.stdin.write('a');
  await waitFor(() => s.out.includes('rule 1 of 2'), 'the first proposed rule');
  assert.ok(s.out.includes('shell_exec(echo A *)'), s.out);
  s.child.stdin.write('\r');
  await waitFor(() => s.out.includes('rule 2 of 2'), 'the second proposed rule');
  s.child.stdin.write('\r');
  await waitFor(() => s.out.includes('both done'), 'the answer');
  assert.ok(s.out.includes(`-> always allowed: allow shell_exec(echo A *), write_file(${a}) in ${rulesFile}`), s.out);
  assert.ok(s.out.includes('-> allowed (by the rule just added)'), s.out);
  assert.equal(s.out.split(QUESTION).length, 2, 'the second shell_exec was not asked');
  assert.equal(readFileSync(a, 'utf8'), 'A\nA\n');
  assert.match(
    readFileSync(rulesFile, 'utf8'),
    new RegExp(`allow shell_exec\\(echo A \\*\\)\\nallow write_file\\(${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)\\n$`),
  );

  s.child.stdin.write('write\r');
  await waitFor(() => s.out.split(QUESTION).length === 3, 'the write_file question');
  s.child.stdin.write('\x1b');
  await waitFor(() => s.out.includes('[cancelled]'), 'the cancelled turn');
  assert.ok(s.out.includes('-> denied (cancelled)'), s.out);
  assert.ok(!existsSync(join(dirs.root, 'w.txt')));
  assert.equal(mock.posts.length, 3, 'a cancelled turn sends nothing more');
  // The line editor has the keys back.
  s.child.stdin.write('exit\r');
  assert.equal(await s.exited, 0);
});

test('on a terminal --allow-tools answers matching requests without asking', {
  skip: !haveScript && 'script(1) not installed',
}, async (t) => {
  const ran = join(dirs.root, 'ran.txt');
  mock.push(oa.toolCall('shell_exec', { command: `echo RAN > ${ran}` }, 'c1'), oa.text('done'));
  const s = onPty(t, ['-S', '--allow-tools', 'shell_exec']);
  await waitFor(() => s.out.includes('user> '), 'the prompt', 15_000);
  s.child.stdin.write('go\r');
  await waitFor(() => s.out.includes('done'), 'the answer');
  assert.ok(!s.out.includes(QUESTION), s.out);
  assert.ok(existsSync(ran));
  s.child.stdin.write('exit\r');
  assert.equal(await s.exited, 0);
});

test('on a terminal with stdout redirected: the question is asked on the terminal (stderr), keys typed before it do not answer it', {
  skip: !haveScript && 'script(1) not installed',
}, async (t) => {
  const ran = join(dirs.root, 'ran.txt');
  const log = join(dirs.root, 'transcript.txt');
  mock.push({ ...oa.toolCall('shell_exec', { command: `echo RAN > ${ran}` }, 'c1'), delayMs: 1000 }, oa.text('all done'));
  const s = onPty(t, ['-S'], { stdoutTo: log });
  await waitFor(() => existsSync(log) && readFileSync(log, 'utf8').includes('user> '), 'the prompt', 15_000);
  s.child.stdin.write('go\r');
  await waitFor(() => mock.posts.length === 1, 'the request');
  s.child.stdin.write('ya'); // half a line, typed before the question
  await waitFor(() => s.out.includes(QUESTION), 'the question on the terminal');
  await new Promise((r) => setTimeout(r, 500));
  assert.ok(!existsSync(ran), 'keys typed before the question ran the command');
  s.child.stdin.write('y');
  await waitFor(() => readFileSync(log, 'utf8').includes('all done'), 'the answer');
  assert.ok(existsSync(ran));
  assert.ok(s.out.includes('-> allowed'), s.out);
  s.child.stdin.write('exit\r');
  assert.equal(await s.exited, 0);
});

test('on a terminal: a line typed while a turn runs shows after its own prompt when its turn comes (user> second)', async (t) => {
  mock.push(oa.streamText(['first ', 'answer ', 'comes ', 'slowly'], { chunkDelayMs: 250 }), oa.text('second answer'));
  const s = spawnPty(['-H', '-u', mock.base, '-p', dirs.empty], { dirs, cols: 80, rows: 24, env: { NO_COLOR: '1' } });
  t.after(() => s.dispose());
  await s.waitFor('user> ', 'the prompt');
  s.type('first\r');
  await s.waitFor('assistant> first', 'the first reply streaming');
  s.type('second\r');
  await s.waitFor('second answer', 'the second reply');
  const rows = () => s.lines().map((l) => l.trimEnd());
  await s.waitFor(() => rows().lastIndexOf('user>') > rows().findIndex((l) => l.includes('second answer')), 'the next prompt');
  const shown = rows();
  const second = shown.findIndex((l) => l.includes('second answer'));
  assert.equal(shown[second - 1], 'user> second', `the queued line after its prompt:\n${shown.join('\n')}`);
  assert.equal(shown[second], 'assistant> second answer', shown.join('\n'));
  assert.equal(shown.filter((l) => l === 'user>').length, 1, `only the last prompt is empty:\n${shown.join('\n')}`);
  assert.equal(oa.lastMessage(mock.posts[1]!.json).content, 'second');
  s.type('exit\r');
  assert.equal((await s.exited).code, 0);
});
