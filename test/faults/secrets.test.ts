// The secrets scan's own cases: every way a key or a secrets.lua value used to reach a screen,
// a file or a child process. The fault suite sets both values in every run and scans all that
// the tests captured after each one; these tests make each path carry a secret on purpose.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { jsonLines } from '../fixtures/cli-suite.js';
import { show } from '../fixtures/run-cli.js';
import { faultSuite, KNOWN_KEY, KNOWN_SECRET, plant } from '../fixtures/fault-suite.js';
import { tally } from '../fixtures/tally.js';

const suite = await faultSuite();
const { mock, dirs, run } = suite;

/** A 401 whose body quotes the key the request carried, as some gateways do. */
const echoKey = () => ({
  handle: (req: any, res: any) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { message: `Incorrect API key provided: ${String(req.headers.authorization).replace(/^Bearer /, '')}` } }),
    );
  },
});

test('an error body that echoes the key: masked on stderr (text), in json "error" and in stream-json', async () => {
  for (const format of ['text', 'json', 'stream-json']) {
    mock.push(echoKey());
    const r = await run(['-o', 'hi', '--output-format', format]);
    assert.equal(r.code, 1, show(r));
    assert.ok(mock.posts.at(-1)!.headers.authorization === `Bearer ${KNOWN_KEY}`, 'the server did get the key');
    if (format === 'text') assert.match(r.stderr, /^error: HTTP 401: Incorrect API key provided: \[REDACTED\]$/m);
    else {
      const result = format === 'json' ? JSON.parse(r.stdout) : jsonLines(r.stdout).at(-1)!;
      assert.equal(result.error, 'HTTP 401: Incorrect API key provided: [REDACTED]');
    }
  }
  tally('faults', 3);
});

test('tool output and a reply carrying a secrets.lua value: masked in stream-json, the REPL and text output', async () => {
  const file = plant(suite, 'notes.txt', `the search key is ${KNOWN_SECRET}\n`);
  // The reply splits the secret across two streamed deltas.
  const half = KNOWN_SECRET.length >> 1;
  const script = () => [
    oa.toolCall('shell_exec', { command: `cat ${file}` }),
    oa.streamText(['I found ', KNOWN_SECRET.slice(0, half), KNOWN_SECRET.slice(half), ' in it']),
  ];
  mock.push(...script());
  const s = await run(['-o', 'look', '--output-format', 'stream-json']);
  assert.equal(s.code, 0, show(s));
  const events = jsonLines(s.stdout);
  assert.equal(events.find((e) => e.type === 'tool_result')?.content, 'the search key is [REDACTED]\n');
  assert.equal(
    events
      .filter((e) => e.type === 'text')
      .map((e) => e.text)
      .join(''),
    'I found [REDACTED] in it',
  );
  assert.equal(events.at(-1)!.result, 'I found [REDACTED] in it');
  assert.ok(!mock.posts[1]!.body.includes(KNOWN_SECRET), 'the model does not see the secret either');
  assert.ok(mock.posts[1]!.body.includes('the search key is [REDACTED]'), 'it sees the rest of the output');

  mock.push(...script());
  const t = await run(['-o', 'look']);
  assert.equal(t.code, 0, show(t));
  assert.equal(t.stdout, 'I found [REDACTED] in it\n');

  mock.push(...script());
  const repl = await run(['-H'], { input: 'look\n' });
  assert.equal(repl.code, 0, show(repl));
  assert.match(repl.stdout, /\[result: shell_exec\]\nthe search key is \[REDACTED\]\n/);
  assert.match(repl.stdout, /assistant> I found \[REDACTED\] in it/);
  tally('faults', 3);
});

test('shell_exec and bg_exec children do not inherit CLM_API_KEY', async () => {
  const envFile = join(dirs.root, 'tool-env.txt');
  const bgFile = join(dirs.root, 'bg-env.txt');
  // Background jobs are stopped when clm exits: the foreground command waits (a bounded while)
  // for the background one's file, so a slow start under load cannot lose it.
  mock.push(
    oa.toolCalls([
      { id: 'a', name: 'bg_exec', args: { command: `env > ${bgFile}.tmp && mv ${bgFile}.tmp ${bgFile}` } },
      {
        id: 'b',
        name: 'shell_exec',
        args: { command: `i=0; while [ ! -e ${bgFile} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; env > ${envFile}; echo done` },
      },
    ]),
    oa.text('ok'),
  );
  const r = await run(['-o', 'env']);
  assert.equal(r.code, 0, show(r));
  const env = readFileSync(envFile, 'utf8');
  assert.match(env, /^XDG_STATE_HOME=/m, 'the rest of the environment is passed on');
  assert.doesNotMatch(env, /CLM_API_KEY/);
  assert.doesNotMatch(readFileSync(bgFile, 'utf8'), /CLM_API_KEY/);
  tally('faults', 1);
});

test('a syntax error in secrets.lua does not quote the secret (stderr, debug log)', async () => {
  dirs.write('secrets.lua', `return {\n  search = "${KNOWN_SECRET}\n}\n`);
  mock.push(oa.text('ok'));
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.match(
    r.stderr,
    /^notice: secrets\.lua:2: unfinished string \(the text there is not shown: it may hold a secret\); clm\.secrets is empty$/m,
  );
  assert.match(readFileSync(suite.log, 'utf8'), /secrets\.lua:2: unfinished string \(the text there is not shown/);
  tally('faults', 1);
});

test('the debug log is created 0600 and holds no key', async () => {
  mock.push(oa.text('ok'));
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.equal(statSync(suite.log).mode & 0o777, 0o600);
  const log = readFileSync(suite.log, 'utf8');
  assert.match(log, /Bearer \[REDACTED\]|posting body/);
  tally('faults', 1);
});

test('the evaluation cache in the state dir: written on the first run, used on the second, and (by the scan) free of secrets', async () => {
  mock.push(oa.text('ok'), oa.text('ok'));
  for (let i = 0; i < 2; i++) {
    const r = await run(['-o', 'hi']);
    assert.equal(r.code, 0, show(r));
  }
  const cache = join(dirs.sessions, 'config-cache.json');
  assert.equal(statSync(cache).mode & 0o777, 0o600);
  assert.match(readFileSync(suite.log, 'utf8'), /config: evaluation taken from the cache/);
  tally('faults', 1);
});
