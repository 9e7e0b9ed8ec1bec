// The launcher's V8 code cache (bin/clm.cjs): kept in the state directory, one file per kind of
// run, checked against the bundle's hash and Node's version; a cache that does not fit (another
// build, junk) costs a compile, never the run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { BIN, CLI, runCli, show } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';

const suite = await cliSuite({ dirs: 'each' });
const { mock, dirs, run } = suite;
const cacheDir = () => join(dirs.state, 'clm', 'code-cache');
/** The build hash a program of dist/ names (cli: the whole program; cli-oneshot: the one-shot one). */
const build = (program = 'cli-oneshot') => /^\/\/ clm-build ([0-9a-f]+)\n/.exec(readFileSync(join(CLI, `../${program}.cjs`), 'utf8'))?.[1];

async function turn(text: string) {
  mock.push(oa.text(text));
  const r = await run(['-o', 'hi'], { entry: BIN });
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, new RegExp(text));
  return r;
}

test('a one-shot run leaves a cache for its build and Node, and the next run uses it as it is', async () => {
  await turn('first');
  const file = join(cacheDir(), 'cli-oneshot.bin');
  assert.ok(existsSync(file), 'no code cache after the first run');
  const bytes = readFileSync(file);
  const key = bytes.toString('latin1', 0, bytes.indexOf(10));
  // The one-shot program's: a one-shot run reads that, not the whole program.
  assert.ok(build() && build() !== build('cli'), 'dist/cli-oneshot.cjs names no build of its own');
  assert.ok(key.includes(` ${build()} `) && key.includes(` ${process.version} `), `key ${key}`);
  assert.ok(bytes.length - key.length > 10_000, 'the cache holds no code');
  const before = statSync(file).mtimeMs;
  await turn('second');
  assert.equal(statSync(file).mtimeMs, before, 'an accepted cache was written again');
  assert.deepEqual(readFileSync(file), bytes);
});

test('a run that only looks like a one-shot goes to the whole program, and leaves the one-shot cache alone', {
  timeout: 60_000,
}, async () => {
  // -o here is the model's name: the REPL runs (the launcher took it for a one-shot).
  mock.push(oa.text('from the repl'));
  const r = await run(['-H', '-m', '-o'], { entry: BIN, input: 'hello\n' });
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /from the repl/);
  assert.equal(mock.posts.at(-1)!.json.model, '-o');
  // -o with no prompt: the whole program's usage error, exit 2.
  const usage = await run(['-o'], { entry: BIN });
  assert.equal(usage.code, 2, show(usage));
  assert.match(usage.stderr, /-o needs a value/);
  // Neither run was a one-shot: a cache of what the one-shot program compiled to hand them over
  // would be taken by every later one-shot.
  assert.deepEqual(existsSync(cacheDir()) ? readdirSync(cacheDir()) : [], [], 'a cache was kept');
  await turn('a real one-shot');
  assert.ok(existsSync(join(cacheDir(), 'cli-oneshot.bin')));
});

test('the one-shot program holds no screen: half the whole program, neither marked nor highlight.js', () => {
  const whole = readFileSync(join(CLI, '../cli.cjs'), 'latin1');
  const oneshot = readFileSync(join(CLI, '../cli-oneshot.cjs'), 'latin1');
  assert.ok(oneshot.length < whole.length * 0.6, `${oneshot.length} of ${whole.length} bytes`);
  for (const mark of ['input parameter is undefined or null' /* marked */, 'highlight.js', 'resumed session']) {
    assert.ok(whole.includes(mark), `the whole program has no ${mark}: the check is stale`);
    assert.ok(!oneshot.includes(mark), `the one-shot program holds ${mark}`);
  }
});

test('the REPL keeps its own cache file; help keeps none', async () => {
  const h = await run(['-h'], { entry: BIN });
  assert.equal(h.code, 0, show(h));
  assert.ok(!existsSync(cacheDir()), 'help wrote a cache');
  mock.push(oa.text('from the repl'));
  const r = await run([], { entry: BIN, input: 'hello\n' });
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /from the repl/);
  assert.ok(existsSync(join(cacheDir(), 'cli-interactive.bin')));
  assert.ok(!existsSync(join(cacheDir(), 'cli-oneshot.bin')));
});

test('a run that fails, and the commands, leave no cache; the next run that succeeds writes the whole one', async () => {
  // A usage error and a turn the server refuses: each compiled a little of the program; a cache
  // of it would be taken by every later start.
  const usage = await run(['-o', 'hi', '--no-such-flag'], { entry: BIN });
  assert.equal(usage.code, 2, show(usage));
  mock.push(oa.httpError(400, 'no such model'));
  const refused = await run(['-o', 'hi'], { entry: BIN });
  assert.notEqual(refused.code, 0, show(refused));
  assert.match(refused.stderr, /no such model/);
  // The commands, as a person types them (nothing before them): one that succeeds keeps none either.
  const list = await runCli(['permissions', 'list'], { dirs, entry: BIN });
  assert.equal(list.code, 0, show(list));
  const diff = await runCli(['diff', '20260101-000000-00000000'], { dirs, entry: BIN });
  assert.match(diff.stderr, /20260101-000000-00000000/, show(diff));
  assert.deepEqual(existsSync(cacheDir()) ? readdirSync(cacheDir()) : [], [], 'a cache was kept');
  await turn('at last');
  const file = join(cacheDir(), 'cli-oneshot.bin');
  assert.ok(existsSync(file), 'no cache after the run that succeeded');
  assert.ok(statSync(file).size > 100_000, `a cache of ${statSync(file).size} bytes`);
});

test('an interactive run writes its cache once ready for a prompt, not what its session compiles later', async () => {
  const { spawn } = suite;
  const file = join(cacheDir(), 'cli-interactive.bin');
  const repl = spawn([], { entry: BIN, keepStdin: true });
  const end = Date.now() + 30_000;
  while (!existsSync(file) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.ok(existsSync(file), 'no cache before the first prompt');
  const atReady = readFileSync(file);
  mock.push(oa.text('a reply after the cache'));
  repl.child.stdin!.end('hello\n');
  const r = await repl.result;
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /a reply after the cache/);
  assert.deepEqual(readFileSync(file), atReady, 'the cache was written again at exit');
});

test('junk under the right key, and a cache of another build, are replaced after a normal run', async () => {
  await turn('fill');
  const file = join(cacheDir(), 'cli-oneshot.bin');
  const good = readFileSync(file);
  const key = good.subarray(0, good.indexOf(10) + 1);
  writeFileSync(file, Buffer.concat([key, Buffer.alloc(50_000, 0x5a)]));
  await turn('after junk');
  assert.deepEqual(readFileSync(file).subarray(0, key.length), key);
  assert.ok(!readFileSync(file).subarray(key.length).equals(Buffer.alloc(50_000, 0x5a)), 'the junk was kept');
  writeFileSync(
    file,
    Buffer.concat([Buffer.from(key.toString('latin1').replace(build()!, '0'.repeat(32)), 'latin1'), good.subarray(key.length)]),
  );
  await turn('after another build');
  assert.ok(readFileSync(file).subarray(0, key.length).equals(key), 'the other build’s cache was kept');
});

test('the cached code starts 8-byte aligned in its file, so V8 takes it where it was read', async () => {
  await turn('aligned');
  const bytes = readFileSync(join(cacheDir(), 'cli-oneshot.bin'));
  assert.equal((bytes.indexOf(10) + 1) % 8, 0, `the key line is ${bytes.indexOf(10) + 1} bytes`);
});

test('a FIFO where the cache belongs neither holds the start nor stays', async () => {
  const file = join(cacheDir(), 'cli-oneshot.bin');
  mkdirSync(cacheDir(), { recursive: true });
  execFileSync('mkfifo', [file]);
  await turn('past the fifo');
  assert.ok(statSync(file).isFile(), 'the FIFO is still there');
  await turn('from the cache');
});
