// The real `clm` binary, one-shot mode (issue 2): flags, streamed and non-streamed replies, the
// request it sends, tool lines, failures and the debug log. Run `node scripts/build.mjs --cli`
// first (npm test does).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { makeDirs, runCli, show, type CliResult } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';

const { mock, dirs, run } = await cliSuite();
// Started before the other tests and awaited last (it used to take ~7 s of retries).
let dead: Promise<CliResult>;

before(() => {
  const deadDirs = makeDirs();
  dead = runCli(['-u', 'http://127.0.0.1:1/v1', '-p', deadDirs.empty, '-o', 'hello'], { dirs: deadDirs });
  void dead.finally(() => deadDirs.cleanup()).catch(() => undefined);
});
after(async () => {
  await dead.catch(() => undefined);
});

test('-V prints the version, -h the usage, both exit 0', async () => {
  const v = await runCli(['-V'], { dirs });
  assert.equal(v.code, 0, show(v));
  assert.equal(v.stdout, 'clm 0.2.0\n');
  assert.equal(v.stderr, '');
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal(v.stdout.trim(), `clm ${pkg.version}`);
  const h = await runCli(['--help'], { dirs });
  assert.equal(h.code, 0, show(h));
  assert.match(h.stdout, /^usage: clm/);
  assert.match(h.stdout, /-o, --oneshot PROMPT/);
  assert.match(h.stdout, /--output-format/);
  const h2 = await runCli(['-h'], { dirs });
  assert.equal(h2.code, 0);
  assert.equal(h2.stdout, h.stdout);
});

test('a usage error: the error and one line pointing at --help on stderr, exit 2, nothing on stdout', async () => {
  for (const args of [
    ['--bogus'],
    ['-o', 'x', '-Z'],
    ['stray'],
    ['-m'],
    ['--output-format', 'xml', '-o', 'x'],
    ['--output-format', 'json'],
  ]) {
    const r = await runCli(args, { dirs });
    assert.equal(r.code, 2, `${args.join(' ')}\n${show(r)}`);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 2, r.stderr);
    assert.match(lines[0]!, /^clm: \S/);
    assert.equal(lines[1], "run 'clm --help' for the options");
  }
  assert.match(
    (await runCli(['--output-format', 'xml'], { dirs })).stderr,
    /^clm: --output-format: unknown format 'xml' \(text, json, stream-json\)\n/,
  );
  const r = await runCli(['--bogus'], { dirs });
  assert.match(r.stderr, /unknown option --bogus/);
  assert.equal(mock.posts.length, 0);
});

test('streamed reply: only the reply on stdout, request to BASE/chat/completions with the defaults', async () => {
  mock.push(oa.streamText(['Hel', 'lo ', 'world'], { usage: { prompt: 12, completion: 3 } }));
  const r = await run(['-o', 'say hello']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'Hello world\n');
  assert.equal(mock.posts.length, 1);
  const req = mock.posts[0]!;
  assert.equal(req.path, '/v1/chat/completions');
  assert.equal(req.json.model, 'local-model');
  assert.equal(req.json.stream, true);
  assert.equal(req.headers.authorization, undefined, 'no key configured: no Authorization header');
  const msgs = req.json.messages;
  assert.equal(msgs[0].role, 'system');
  assert.deepEqual(msgs.at(-1), { role: 'user', content: 'say hello' });
  assert.match(r.stderr, /\[12\+3 tok\]/);
});

test('without a configured system prompt, the CLI tells the model its tools reach files and commands', async () => {
  mock.push(oa.text('ok'));
  const r = await run(['-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const sys = mock.posts[0]!.json.messages[0];
  assert.equal(sys.role, 'system');
  assert.match(
    sys.content,
    /^You are a helpful assistant\. .*reading or modifying the user's files or running a command on their system\./,
  );
});

// A server that ignores "stream": true and answers with one JSON object. The engine parses it
// (llm-call's non-stream fallback) but Agent.replyDone(r, streamed = true) then skips emitText,
// so the reply lands in the history but is never shown and the run "succeeds" with no output.
test('a streamed request answered with a whole JSON reply still prints the reply', async () => {
  mock.push(oa.text('whole reply'));
  const r = await run(['-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts[0]!.json.stream, true);
  assert.equal(r.stdout, 'whole reply\n');
});

test('-S: a non-streamed request, the reply on stdout with a final newline', async () => {
  mock.push(oa.text('plain answer', { usage: { prompt: 5, completion: 2 } }), oa.text('second'));
  const r = await run(['-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'plain answer\n');
  assert.equal(mock.posts[0]!.json.stream, false);
  const r2 = await run(['--no-stream', '--oneshot=q2']);
  assert.equal(r2.code, 0, show(r2));
  assert.equal(mock.posts[1]!.json.stream, false);
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, 'q2');
});

test('-m sets the model; -u with a trailing slash or the full endpoint gets /chat/completions once', async () => {
  mock.script(() => oa.text('ok'));
  let r = await run(['-S', '-m', 'qwen3:8b', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts[0]!.json.model, 'qwen3:8b');
  // Attached value form.
  r = await run(['-S', '-mOrg/Model-7B', '-o', 'q']);
  assert.equal(r.code, 2, 'a model spec with "/" names a provider, and none is configured');
  assert.match(r.stderr, /unknown provider 'Org'/);
  r = await runCli(['-u', `${mock.base}/`, '-p', dirs.empty, '-S', '-o', 'q'], { dirs });
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.at(-1)!.path, '/v1/chat/completions');
  r = await runCli(['-u', `${mock.base}/chat/completions`, '-p', dirs.empty, '-S', '-o', 'q'], { dirs });
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.at(-1)!.path, '/v1/chat/completions');
  r = await runCli(['-u', `${mock.url}/api/v9`, '-p', dirs.empty, '-S', '-o', 'q'], { dirs });
  assert.equal(mock.posts.at(-1)!.path, '/api/v9/chat/completions');
});

test('CLM_API_KEY is sent as a bearer token', async () => {
  mock.push(oa.text('ok'));
  const r = await run(['-S', '-o', 'q'], { env: { CLM_API_KEY: 'sk-test-bearer-123' } });
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts[0]!.headers.authorization, 'Bearer sk-test-bearer-123');
  assert.ok(!r.stdout.includes('sk-test-bearer-123') && !r.stderr.includes('sk-test-bearer-123'));
});

test('a tool round: one stderr line per call and per result, tools run without prompting', async () => {
  const work = join(dirs.root, 'work');
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'alpha.txt'), 'a');
  writeFileSync(join(work, 'beta.txt'), 'b');
  const target = join(work, 'out.txt');
  mock.push(
    oa.toolCalls([
      { id: 'c1', name: 'list_dir', args: { path: work } },
      { id: 'c2', name: 'write_file', args: { path: target, content: 'written by clm\n' } },
    ]),
    oa.streamText(['all ', 'done']),
  );
  const r = await run(['-o', 'look around']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'all done\n', 'tool lines stay off stdout');
  assert.equal(readFileSync(target, 'utf8'), 'written by clm\n');
  const lines = r.stderr.split('\n');
  assert.equal(lines.filter((l) => l.startsWith('[tool: list_dir ')).length, 1, r.stderr);
  assert.equal(lines.filter((l) => l.startsWith('[tool: write_file ')).length, 1, r.stderr);
  assert.equal(lines.filter((l) => /^\[result: list_dir, \d+ bytes\]$/.test(l)).length, 1, r.stderr);
  assert.equal(lines.filter((l) => /^\[result: write_file, \d+ bytes\]$/.test(l)).length, 1, r.stderr);
  assert.ok(lines.find((l) => l.startsWith('[tool: list_dir '))!.includes(work));
  // The results reached the model.
  assert.equal(mock.posts.length, 2);
  const tools = mock.posts[1]!.json.messages.filter((m: any) => m.role === 'tool');
  assert.equal(tools.length, 2);
  const listing = tools.find((m: any) => m.tool_call_id === 'c1').content as string;
  assert.match(listing, /alpha\.txt/);
  assert.match(listing, /beta\.txt/);
  assert.doesNotMatch(tools.find((m: any) => m.tool_call_id === 'c2').content, /tool failed|denied/);
  // The first request advertised the builtin tools.
  const names = mock.posts[0]!.json.tools.map((t: any) => t.function.name);
  for (const n of ['read_file', 'write_file', 'list_dir', 'shell_exec', 'bg_exec']) assert.ok(names.includes(n), names.join(' '));
});

test('a failed turn (HTTP 400, not retried): "error: HTTP 400: …" and exit 1', async () => {
  mock.push(oa.httpError(400, 'model not found: nope'));
  const r = await run(['-o', 'q']);
  assert.equal(r.code, 1, show(r));
  assert.equal(mock.posts.length, 1, 'a 400 is not retried');
  assert.match(r.stderr, /^error: HTTP 400: model not found: nope$/m);
  assert.equal(r.stdout.trim(), '');
});

test('a 500 is retried, then the turn succeeds', async () => {
  mock.push(oa.httpError(500, 'boom', { 'retry-after': '0' }), oa.text('recovered'));
  const r = await run(['-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.length, 2);
  assert.equal(r.stdout, 'recovered\n');
});

test('CLM_DEBUG_LOG: request lines are logged, the API key never is', async () => {
  const key = 'sk-debug-secret-98765';
  const log = join(dirs.root, 'debug.log');
  mock.push(oa.toolCall('list_dir', { path: dirs.root }), oa.text(`the key is ${key}? no.`));
  const r = await run(['-S', '-o', `please use ${key}`], { env: { CLM_API_KEY: key, CLM_DEBUG_LOG: log } });
  assert.equal(r.code, 0, show(r));
  assert.ok(existsSync(log), 'the log file was created');
  const text = readFileSync(log, 'utf8');
  assert.match(text, /posting body/i, text.slice(0, 2000));
  assert.match(text, /chat\/completions/);
  assert.match(text, /^\d\d:\d\d:\d\d\.\d{3} \[\d+\] /m);
  // Each call as the original logs it, then its result.
  const call = text.indexOf(`[tool] list_dir({"path":${JSON.stringify(dirs.root)}})`);
  assert.ok(call > 0, text.slice(0, 3000));
  assert.ok(call < text.indexOf('[result] list_dir -> '), 'the call comes before its result');
  assert.ok(!text.includes(key), 'the API key must not be in the debug log');
  assert.equal(mock.posts[0]!.headers.authorization, `Bearer ${key}`);
});

test('a long reply to a slow reader is written whole (no cut at the 64 KiB pipe buffer)', async () => {
  const big = 'x'.repeat(400_000) + 'END';
  mock.push(oa.text(big), oa.text(big));
  const r = await run(['-S', '-o', 'q'], { readDelayMs: 400 });
  assert.equal(r.code, 0, `exit ${r.code}\n${r.stderr}`);
  assert.equal(r.stdout.length, big.length + 1);
  assert.ok(r.stdout.endsWith('END\n'));
  const j = await run(['-S', '--output-format', 'json', '-o', 'q'], { readDelayMs: 400 });
  assert.equal(j.code, 0, j.stderr);
  assert.equal(JSON.parse(j.stdout).result, big);
});

test('a reader that goes away (| head): no EPIPE crash, the run still completes', async () => {
  mock.push(oa.text('y'.repeat(300_000)));
  const r = await run(['-S', '-o', 'q'], { closeStdoutEarly: true });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /EPIPE|Unhandled|at .*\.js:\d+/);
  assert.match(r.stderr, /^session: /m, 'the run finished normally');
});

test('a dead endpoint: exit 1 at once (no retries) with a message that says what to check', async () => {
  const r = await dead;
  assert.equal(r.code, 1, show(r));
  assert.match(
    r.stderr,
    /^error: cannot connect to http:\/\/127\.0\.0\.1:1\/v1\/chat\/completions \(connect ECONNREFUSED 127\.0\.0\.1:1\): is the server running, and is the URL right\?$/m,
    r.stderr,
  );
  assert.doesNotMatch(r.stderr, /retrying/, 'a refused first connection is not retried');
  assert.equal(r.stdout.trim(), '');
});

test('the first chat request does not wait for the connection probe (GET models, /props)', { timeout: 60_000 }, async () => {
  // A models endpoint that never answers: the turn goes ahead without it. The reply takes a
  // while, so that the probe, sent once the chat request is on its way, is out before the run ends.
  mock.onGet('/v1/models', { hang: true });
  mock.push(oa.streamText(['answered ', 'without the probe'], { chunkDelayMs: 300 }));
  const r = await run(['-o', 'q'], { timeoutMs: 15_000 });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'answered without the probe\n');
  const paths = mock.requests.map((q) => `${q.method} ${q.path}`);
  assert.deepEqual(
    paths.filter((p) => p.startsWith('GET')),
    ['GET /v1/models'],
    'the probe still went out',
  );
});

test('CLM_DEBUG_LOG naming a FIFO: no reader ⇒ the run goes on without a log (it hung in open, deaf to SIGTERM); a pipe with a reader gets the lines', async () => {
  const { execFileSync } = await import('node:child_process');
  const fifo = join(dirs.root, 'log.fifo');
  execFileSync('mkfifo', [fifo]);
  mock.push(oa.text('no reader'));
  const r = await run(['-S', '-o', 'q'], { env: { CLM_DEBUG_LOG: fifo }, timeoutMs: 20_000 });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'no reader\n');
  // A pipe with a reader (clm's stderr into cat): the log goes there whole.
  mock.push(oa.text('with a reader'));
  const r2 = await run(['-S', '-o', 'q'], {
    env: { CLM_DEBUG_LOG: '/dev/stderr' },
    timeoutMs: 20_000,
    prefix: ['sh', '-c', '"$@" 2>&1 | cat', 'sh'],
  });
  assert.equal(r2.code, 0, show(r2));
  assert.match(r2.stdout, /with a reader/);
  assert.match(r2.stdout, /posting body/);
});
