// The secrets scan's own cases: every way a key or a secrets.lua value used to reach a screen,
// a file or a child process. The fault suite sets both values in every run and scans all that
// the tests captured after each one; these tests make each path carry a secret on purpose.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { jsonLines } from '../fixtures/cli-suite.js';
import { REPO, show } from '../fixtures/run-cli.js';
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

test('a plugin whose load error quotes a secret: masked on stderr and in the plugin tools cache', async () => {
  const plugins = join(dirs.root, 'plugins');
  mkdirSync(plugins);
  writeFileSync(join(plugins, 'leaky.lua'), `error("boom " .. clm.read_file(${JSON.stringify(join(dirs.clm, 'secrets.lua'))}))\n`);
  mock.push(oa.text('ok'), oa.text('ok'));
  // The second run takes the load error from the cache. Only in full may a plugin read secrets.lua.
  for (let i = 0; i < 2; i++) {
    const r = await run(['-o', 'hi', '-p', plugins, '--sandbox', 'full']);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stderr, /^notice: plugin leaky: .*boom return \{ search = "\[REDACTED\]" \}/m);
  }
  const cache = readFileSync(join(dirs.sessions, 'plugin-tools-cache.json'), 'utf8');
  assert.match(cache, /boom return \{ search = \\"\[REDACTED\]\\" \}/);
  tally('faults', 2);
});

test('the process-group watchdog does not hold CLM_API_KEY in its environment', async () => {
  const out = join(dirs.root, 'watchdog-env.txt');
  // What a tool walking /proc finds: the watchdog is the /bin/sh whose script traps HUP.
  const command = `for p in /proc/[0-9]*; do if tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q "^/bin/sh -c trap '' HUP"; then tr '\\0' '\\n' < $p/environ > ${out}; fi; done; echo looked`;
  mock.push(oa.toolCall('shell_exec', { command }), oa.text('ok'));
  // In full: in the sandbox a command sees a /proc of its own, without the watchdog.
  const r = await run(['-o', 'look around', '--sandbox', 'full']);
  assert.equal(r.code, 0, show(r));
  assert.ok(existsSync(out), 'the watchdog was found');
  assert.doesNotMatch(readFileSync(out, 'utf8'), /CLM_API_KEY/);
  tally('faults', 1);
});

test('a secrets.lua value with JSON-special characters in the system prompt: the debug log masks its JSON-escaped form', async () => {
  const odd = 'tvly-"odd\tSECRET\\value';
  dirs.write('secrets.lua', `return { search = "${KNOWN_SECRET}", odd = ${JSON.stringify(odd)} }\n`);
  dirs.write(
    'config.lua',
    `return {\n  tools = { web_search = { api_key = clm.secrets.search } },\n  system_prompt = "the password is " .. clm.secrets.odd,\n}\n`,
  );
  mock.push(oa.text('ok'));
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.ok(mock.posts[0]!.json.messages[0].content.includes(odd), 'the model gets the prompt as configured');
  const log = readFileSync(suite.log, 'utf8');
  assert.match(log, /posting body: .*the password is \[REDACTED\]/);
  assert.ok(!log.includes(JSON.stringify(odd).slice(1, -1)), 'no JSON-escaped secret in the log');
  assert.ok(!log.includes(odd), 'no raw secret in the log');
  tally('faults', 1);
});

test('an MCP result with a zero-width character inside a secret: masked for the model and the screen; such characters shown', async () => {
  const server = join(REPO, 'test', 'fixtures', 'mcp', 'tool-server.mjs');
  dirs.write(
    'config.lua',
    `return {\n  tools = { web_search = { api_key = clm.secrets.search } },\n  mcp_servers = { { name = "s", command = { "node", ${JSON.stringify(server)} } } },\n}\n`,
  );
  const hidden = `${KNOWN_SECRET.slice(0, 9)}\u200b${KNOWN_SECRET.slice(9, 20)}\u2060${KNOWN_SECRET.slice(20)}`;
  const visible = (s: string) => s.replace(/\p{Default_Ignorable_Code_Point}/gu, '');
  mock.push(oa.toolCall('mcp__s__echo', { text: `the\u200bkey is ${hidden}` }), oa.text('ok'));
  const r = await run(['-o', 'echo it'], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, show(r));
  const sent = mock.posts[1]!.json.messages.at(-1).content as string;
  assert.equal(sent, 'the\u200bkey is [REDACTED]', 'the model gets the result masked');
  assert.ok(!visible(r.stderr).includes(KNOWN_SECRET), 'stderr holds no secret hidden by zero-width characters');
  assert.match(r.stderr, /\[tool: mcp__s__echo \{"text":"the<U\+200B>key is \[REDACTED\]"\}\]/);
  for (const f of readdirSync(dirs.sessions).filter((n) => n.endsWith('.jsonl')))
    assert.ok(!visible(readFileSync(join(dirs.sessions, f), 'utf8')).includes(KNOWN_SECRET), 'nor does the session');
  assert.ok(!visible(readFileSync(suite.log, 'utf8')).includes(KNOWN_SECRET), 'nor does the debug log');
  tally('faults', 3);
});
