// Fault battery, files: FIFOs, devices and links where clm expects its own files, a disk that
// fills while the session is logged, damaged session lines, and an stdout that cannot be
// written. Each run must end with a clear message, and the session must hold what it says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { show } from '../fixtures/run-cli.js';
import { sessionIdOf, writeSession } from '../fixtures/cli-suite.js';
import { faultSuite, plant } from '../fixtures/fault-suite.js';
import { tally } from '../fixtures/tally.js';

const suite = await faultSuite();
const { mock, dirs, run } = suite;
const sessionFiles = () => (existsSync(dirs.sessions) ? readdirSync(dirs.sessions).filter((n) => n.endsWith('.jsonl')) : []);
const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('config.lua as a FIFO, or a link to /dev/zero: exit 2 naming the file, nothing sent, no session', async () => {
  rmSync(join(dirs.clm, 'config.lua'));
  execFileSync('mkfifo', [join(dirs.clm, 'config.lua')]);
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /^clm: config\.lua: .*\/config\.lua is not a regular file \(a FIFO or device is never read\)/m);
  rmSync(join(dirs.clm, 'config.lua'));
  symlinkSync('/dev/zero', join(dirs.clm, 'config.lua'));
  const z = await run(['-o', 'hi']);
  assert.equal(z.code, 2, show(z));
  assert.match(z.stderr, /config\.lua is not a regular file/);
  assert.equal(mock.posts.length, 0);
  assert.deepEqual(sessionFiles(), []);
  tally('faults', 2);
});

test('secrets.lua as a FIFO: a notice, and the run goes on without secrets', async () => {
  rmSync(join(dirs.clm, 'secrets.lua'));
  execFileSync('mkfifo', [join(dirs.clm, 'secrets.lua')]);
  mock.push(oa.text('fine'));
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'fine\n');
  assert.match(r.stderr, /notice: secrets\.lua: .* is not a regular file \(a FIFO or device is never read\); clm\.secrets is empty/);
  tally('faults', 1);
});

test('-r ID naming a FIFO, or a link to another file: refused, the target untouched', async () => {
  mkdirSync(dirs.sessions, { recursive: true });
  const fifoId = '20260101-000000-aaaaaaaa';
  execFileSync('mkfifo', [join(dirs.sessions, `${fifoId}.jsonl`)]);
  const f = await run(['-r', fifoId, '-o', 'hi']);
  assert.equal(f.code, 1, show(f));
  assert.match(f.stderr, new RegExp(`^clm: session ${fifoId} is not a regular file$`, 'm'));

  const victim = plant(suite, 'victim.txt', 'precious\n');
  const linkId = '20260101-000000-bbbbbbbb';
  symlinkSync(victim, join(dirs.sessions, `${linkId}.jsonl`));
  mock.push(oa.text('appended?'));
  const l = await run(['-r', linkId, '-o', 'hi']);
  assert.equal(l.code, 1, show(l));
  assert.match(l.stderr, new RegExp(`^clm: session ${linkId} is a symbolic link; clm does not follow links to session files$`, 'm'));
  assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  assert.equal(mock.posts.length, 0);
  tally('faults', 2);
});

test('the plugin schema cache as a FIFO: ignored, the plugins still load and run', async () => {
  mkdirSync(dirs.sessions, { recursive: true });
  execFileSync('mkfifo', [join(dirs.sessions, 'plugin-tools-cache.json')]);
  const plugins = join(dirs.root, 'plugins');
  mkdirSync(plugins);
  writeFileSync(
    join(plugins, 'hello.lua'),
    `
    clm.tool_register("hello", { description = "greets", no_prompt = true,
      invoke = function(args, ctx) ctx:complete("hello from lua") end })`,
  );
  mock.push(oa.toolCall('hello', {}), oa.text('done'));
  const r = await run(['-o', 'greet', '-p', plugins]);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts[1]?.json.messages.at(-1).content, 'hello from lua');
  tally('faults', 1);
});

test('disk full while logging: the turn ends, the session says what it lacks (no resume hint)', async () => {
  // RLIMIT_FSIZE makes writes past 2 KiB fail with EFBIG (Node ignores SIGXFSZ), as a full disk would.
  mock.push(oa.text(`long reply ${'x'.repeat(6000)}`));
  const r = await run(['-o', 'hi'], { prefix: ['prlimit', '--fsize=2048'] });
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /^long reply x{6000}\n$/);
  assert.match(r.stderr, /notice: session logging failed; disabled \(writing session \S+: EFBIG: file too large, write\)/);
  assert.match(r.stderr, /^session: \S+ is incomplete: the last 1 entry was not saved \(EFBIG: file too large\)$/m);
  assert.doesNotMatch(r.stderr, /resume with/);
  const [file] = sessionFiles();
  assert.ok(file, 'the partial session is kept');
  const saved = lines(join(dirs.sessions, file));
  assert.deepEqual(
    saved.map((l) => (l.type === 'meta' ? 'meta' : `${l.role}`)),
    ['meta', 'user'],
  );
  tally('faults', 1);
});

test('resuming a session with damaged lines says how many were skipped', async () => {
  const id = '20260102-030405-0badc0de';
  const file = writeSession(dirs, id, [
    { role: 'user', content: 'first' },
    { role: 'assistant', content: 'one' },
  ]);
  writeFileSync(
    file,
    readFileSync(file, 'utf8') + 'garbage that is not json\n{"role":"emperor","type":"msg"}\n{"role":"user","content":"cut off by a cra',
  );
  mock.push(oa.text('two'));
  const r = await run(['-r', id, '-o', 'again']);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stderr, new RegExp(`notice: session ${id}: 3 damaged lines were skipped; their content is not restored`));
  assert.deepEqual(
    mock.posts[0]!.json.messages.slice(1).map((m: { content: string }) => m.content),
    ['first', 'one', 'again'],
  );
  assert.equal(sessionIdOf(r), id);
  const tail = readFileSync(file, 'utf8').split('\n').slice(-3);
  assert.deepEqual(
    tail.slice(0, 2).map((l) => (JSON.parse(l) as { content: string }).content),
    ['again', 'two'],
    'the new turn follows the cut line on lines of its own',
  );
  tally('faults', 1);
});

test('stdout that cannot be written (/dev/full): exit 1 with a message, in text and json', async () => {
  for (const format of ['text', 'json']) {
    mock.push(oa.text('lost reply'));
    const r = await run(['-o', 'hi', '--output-format', format], { prefix: ['sh', '-c', 'exec "$@" > /dev/full', 'sh'] });
    assert.equal(r.code, 1, `${format}\n${show(r)}`);
    assert.match(r.stderr, /^clm: cannot write the output: ENOSPC \(no space left on device\)$/m, format);
  }
  tally('faults', 2);
});
