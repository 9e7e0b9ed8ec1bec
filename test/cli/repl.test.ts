// The real `clm` binary as a headless REPL (issue 5): piped stdin, banner, prompts, one
// `assistant> ` per reply, every line processed in order, quit/exit/EOF.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { makeDirs, show, spawnCli, waitFor } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';

const { mock, dirs, run, spawn } = await cliSuite();
const repl = (input: string, args: string[] = []) => run(args, { input });
const count = (s: string, sub: string) => s.split(sub).length - 1;
const lastUser = (i: number) => oa.lastMessage(mock.posts[i]!.json).content;

test('banner, prompts, one assistant> per streamed reply, quit ends before later lines', async () => {
  mock.script((req) => oa.streamText(['re: ', String(oa.lastMessage(req.json).content), '!'], { usage: { prompt: 3, completion: 2 } }));
  const r = await repl('first\nsecond\nquit\nthird\n');
  assert.equal(r.code, 0, show(r));
  const lines = r.stdout.split('\n');
  assert.equal(lines[0], `clm agent. api: ${mock.base}/chat/completions`);
  assert.equal(lines[1], "type 'quit' or 'exit' to stop.");
  assert.equal(mock.posts.length, 2, 'quit stops reading: "third" is not sent');
  assert.deepEqual([lastUser(0), lastUser(1)], ['first', 'second']);
  assert.equal(count(r.stdout, 'assistant> '), 2, r.stdout);
  assert.ok(r.stdout.includes('assistant> re: first!\n'), r.stdout);
  assert.ok(r.stdout.includes('assistant> re: second!\n'), r.stdout);
  assert.equal(count(r.stdout, 'user> '), 3, 'a prompt before each of the three lines read');
  assert.equal(count(r.stdout, '[3+2 tok]'), 2);
  assert.ok(r.stdout.indexOf('re: first!') < r.stdout.indexOf('re: second!'));
  assert.match(r.stderr, /^session: \S+/m);
});

test('every piped line is processed, in order, even while earlier turns are still running', async () => {
  // Each reply takes a while, so the later lines are already buffered when the first turn ends.
  mock.script((req) => ({ ...oa.text(`ok ${oa.lastMessage(req.json).content}`), delayMs: 60 }));
  const r = await repl('one\n\ntwo\n   \nthree\nfour\n', ['-S']);
  assert.equal(r.code, 0, show(r));
  assert.deepEqual(
    mock.posts.map((_, i) => lastUser(i)),
    ['one', 'two', 'three', 'four'],
  );
  // Each request carries the whole conversation so far.
  assert.equal(mock.posts[3]!.json.messages.filter((m: any) => m.role === 'user').length, 4);
  const order = ['ok one', 'ok two', 'ok three', 'ok four'].map((s) => r.stdout.indexOf(`assistant> ${s}\n`));
  assert.ok(
    order.every((x, i) => x >= 0 && (i === 0 || x > order[i - 1]!)),
    r.stdout,
  );
});

test('EOF ends the REPL after the last line (no trailing newline needed); exit 0', async () => {
  mock.script(() => oa.text('fine'));
  const r = await repl('alpha\nexit-not\nomega', ['-S']);
  assert.equal(r.code, 0, show(r));
  assert.deepEqual(
    mock.posts.map((_, i) => lastUser(i)),
    ['alpha', 'exit-not', 'omega'],
  );
  assert.ok(r.stdout.endsWith('user> \n'), JSON.stringify(r.stdout.slice(-40)));
});

test('exit ends it too; empty input is a clean exit without a session', async () => {
  const r = await repl('exit\nhello\n');
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.length, 0);
  assert.doesNotMatch(r.stderr, /session:/, 'an empty session is not kept');
  const r2 = await repl('');
  assert.equal(r2.code, 0, show(r2));
  assert.equal(mock.posts.length, 0);
});

test('tool and error lines; the REPL keeps going after a failed turn', async () => {
  const work = join(dirs.root, 'w');
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'inside.txt'), '');
  mock.push(oa.httpError(400, 'no such model'), oa.toolCall('list_dir', { path: work }, 'c1'), oa.text('listed'));
  const r = await repl('bad\nlist it\n', ['-S']);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stderr, /^error: HTTP 400: no such model$/m);
  assert.equal(mock.posts.length, 3);
  assert.match(r.stdout, /\[tool: list_dir \{"path":".*"\}\]\n/);
  assert.match(r.stdout, /\[result: list_dir\]\n[^\n]*inside\.txt/);
  assert.ok(r.stdout.includes('assistant> listed\n'));
  // The failed turn's prompt stays in the history; the second turn is sent after it.
  assert.equal(lastUser(1), 'list it');
});

test('-H forces the REPL; -o takes precedence over the REPL', async () => {
  mock.script(() => oa.text('yes'));
  const r = await repl('hi\n', ['-S', '-H']);
  assert.equal(r.code, 0, show(r));
  assert.ok(r.stdout.includes('assistant> yes\n'));
  const o = await repl('ignored stdin\n', ['-S', '-o', 'prompt']);
  assert.equal(o.stdout, 'yes\n');
  assert.equal(mock.posts.length, 2);
  assert.equal(lastUser(1), 'prompt');
});

test('Ctrl-C cancels a running turn and the REPL goes on with the next line', async () => {
  mock.push({ hang: true }, oa.text('second answer'));
  const c = spawn(['-S'], { keepStdin: true });
  c.child.stdin!.write('hang please\n');
  await waitFor(() => mock.posts.length === 1, 'the first request');
  c.child.kill('SIGINT');
  c.child.stdin!.end('next one\n');
  const r = await c.result;
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.length, 2);
  assert.equal(lastUser(1), 'next one');
  assert.ok(r.stdout.includes('assistant> second answer'), r.stdout);
  assert.doesNotMatch(r.stderr, /^error: /m, 'a cancelled turn is not an error');
});

test('Ctrl-C at the prompt ends the REPL with status 130 and leaves no empty session', async () => {
  const d = makeDirs();
  try {
    const c = spawnCli(['-u', mock.base, '-p', d.empty], { dirs: d, keepStdin: true });
    await waitFor(() => c.stdout.includes('user> '), 'the prompt');
    c.child.kill('SIGINT');
    const r = await c.result;
    assert.equal(r.code, 130, show(r));
    assert.equal(mock.posts.length, 0);
    const left = existsSync(d.sessions) ? readdirSync(d.sessions).filter((f) => f.endsWith('.jsonl')) : [];
    assert.deepEqual(left, [], 'the empty session file is deleted');
  } finally {
    d.cleanup();
  }
});
