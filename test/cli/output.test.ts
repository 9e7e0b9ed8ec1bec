// The real `clm` binary (issue 5): --output-format json / stream-json, exit codes (0, 1, 2, 130)
// and the headless tool policy (--allow-tools / --deny-tools).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { show, waitFor } from '../fixtures/run-cli.js';
import { cliSuite, jsonLines, sessionIdOf } from '../fixtures/cli-suite.js';

const { mock, dirs, run, spawn } = await cliSuite({
  setup: (d) => {
    mkdirSync(join(d.root, 'work'));
    writeFileSync(join(d.root, 'work', 'f.txt'), 'x');
  },
});

const toolMessages = (i: number) => mock.posts[i]!.json.messages.filter((m: any) => m.role === 'tool');

test('--output-format json: one object with result, status, usage, tool calls and session id', async () => {
  mock.push(
    oa.toolCall('list_dir', { path: join(dirs.root, 'work') }, 'c1', { usage: { prompt: 10, completion: 5 } }),
    oa.streamText(['the ', 'answer'], { usage: { prompt: 20, completion: 7 } }),
  );
  const r = await run(['--output-format', 'json', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, 'exactly one line on stdout');
  const o = JSON.parse(lines[0]!);
  assert.equal(o.type, 'result');
  assert.equal(typeof o.version, 'number');
  assert.equal(o.result, 'the answer');
  assert.equal(o.status, 'ok');
  assert.equal(o.exit_code, 0);
  assert.deepEqual(o.usage, { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 });
  assert.equal(o.tool_calls.length, 1);
  assert.equal(o.tool_calls[0].name, 'list_dir');
  assert.equal(JSON.parse(o.tool_calls[0].args).path, join(dirs.root, 'work'));
  assert.equal(o.tool_calls[0].outcome, 'ok');
  assert.ok(o.tool_calls[0].output_bytes > 0);
  assert.match(o.session_id, /^\d{8}-\d{6}-[0-9a-f]{8}$/);
  assert.ok(existsSync(join(dirs.sessions, `${o.session_id}.jsonl`)));
  assert.equal(o.model, 'local-model');
  assert.equal(typeof o.duration_ms, 'number');
  assert.doesNotMatch(r.stderr, /\[tool: /, 'json mode prints no progress lines');
});

test('--output-format json on a failed turn: status error, the error text, exit 1', async () => {
  mock.push(oa.httpError(400, 'bad request body'));
  const r = await run(['--output-format=json', '-o', 'q']);
  assert.equal(r.code, 1, show(r));
  const o = JSON.parse(r.stdout);
  assert.equal(o.status, 'error');
  assert.equal(o.exit_code, 1);
  assert.equal(o.error, 'HTTP 400: bad request body');
  assert.equal(o.result, '');
});

test('--output-format stream-json: every line is a versioned JSON event, in order', async () => {
  mock.push(
    oa.streamToolCall('list_dir', JSON.stringify({ path: join(dirs.root, 'work') }), 'c1', { usage: { prompt: 10, completion: 5 } }),
    oa.streamText(['Hel', 'lo'], { usage: { prompt: 20, completion: 7 }, reasoning: ['hmm'] }),
  );
  const r = await run(['--output-format', 'stream-json', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.ok(r.stdout.endsWith('\n'));
  const events = jsonLines(r.stdout);
  for (const e of events) {
    assert.equal(typeof e.version, 'number', JSON.stringify(e));
    assert.equal(e.version, events[0]!.version);
    assert.equal(typeof e.type, 'string');
  }
  const types = events.map((e) => e.type);
  const first = (t: string) => types.indexOf(t);
  assert.equal(types[0], 'start');
  assert.equal(types.at(-1), 'result');
  assert.equal(types.filter((t) => t === 'result').length, 1);
  for (const t of ['text', 'reasoning', 'tool_begin', 'tool_result', 'usage']) assert.ok(first(t) > 0, `${t} missing: ${types.join(' ')}`);
  assert.ok(first('tool_begin') < first('tool_result'), types.join(' '));
  assert.ok(first('tool_result') < first('text'), types.join(' '));
  assert.ok(first('usage') < first('tool_result'), "the first reply's usage comes before the tool runs");
  assert.ok(types.lastIndexOf('usage') < types.indexOf('result'));
  const start = events[0]!;
  assert.equal(start.model, 'local-model');
  assert.ok(Array.isArray(start.tools) && start.tools.includes('list_dir'));
  assert.match(start.session_id, /^\d{8}-\d{6}-[0-9a-f]{8}$/);
  const begin = events[first('tool_begin')]!;
  assert.equal(begin.name, 'list_dir');
  assert.equal(JSON.parse(begin.args).path, join(dirs.root, 'work'));
  const res = events[first('tool_result')]!;
  assert.equal(res.outcome, 'ok');
  assert.match(res.content, /f\.txt/);
  assert.equal(
    events
      .filter((e) => e.type === 'text')
      .map((e) => e.text)
      .join(''),
    'Hello',
  );
  assert.equal(events[first('reasoning')]!.text, 'hmm');
  const result = events.at(-1)!;
  assert.equal(result.result, 'Hello');
  assert.equal(result.status, 'ok');
  assert.deepEqual(result.usage, { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 });
  assert.equal(result.session_id, start.session_id);
});

test('exit codes: 0 success, 1 failed turn, 2 usage and configuration errors', async () => {
  mock.push(oa.text('ok'));
  assert.equal((await run(['-S', '-o', 'q'])).code, 0);
  mock.push(oa.httpError(401, 'invalid key'));
  assert.equal((await run(['-S', '-o', 'q'])).code, 1);
  assert.equal((await run(['--output-format', 'yaml', '-o', 'q'])).code, 2);
  assert.equal((await run(['-u', 'ftp://nowhere', '-o', 'q'])).code, 2);
  assert.equal((await run(['--provider', 'nope', '-o', 'q'])).code, 2);
  const repl = await run(['--output-format', 'json'], { input: 'hello\n' });
  assert.equal(repl.code, 2, `--output-format without -o is refused, not ignored\n${show(repl)}`);
  assert.match(repl.stderr, /--output-format json needs -o/);
  assert.equal(mock.posts.length, 2, 'usage and config errors send nothing');
});

test('SIGINT during a hanging request: exit 130, status cancelled', async () => {
  mock.push({ hang: true });
  const c = spawn(['--output-format', 'json', '-o', 'q']);
  await waitFor(() => mock.posts.length === 1, 'the request');
  c.child.kill('SIGINT');
  const r = await c.result;
  assert.equal(r.code, 130, show(r));
  const o = JSON.parse(r.stdout);
  assert.equal(o.status, 'cancelled');
  assert.equal(o.exit_code, 130);
});

for (const [sig, code] of [
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const) {
  test(`${sig} during a turn (timeout(1), a closed terminal): json and stream-json still end with the result object; the session line is printed`, async () => {
    for (const fmt of ['json', 'stream-json', 'text']) {
      mock.reset();
      mock.push({ hang: true });
      const c = spawn(['--output-format', fmt, '-o', 'q']);
      await waitFor(() => mock.posts.length === 1, 'the request');
      c.child.kill(sig);
      const r = await c.result;
      assert.equal(r.code, code, show(r));
      assert.match(r.stderr, new RegExp(`clm: ended by ${sig}`));
      const id = sessionIdOf(r);
      assert.ok(existsSync(join(dirs.sessions, `${id}.jsonl`)), 'the session named is kept');
      if (fmt === 'text') continue;
      const lines = jsonLines(r.stdout);
      const o = lines.at(-1)!;
      assert.equal(o.type, 'result', r.stdout);
      assert.equal(o.status, 'cancelled');
      assert.equal(o.exit_code, code);
      assert.equal(o.error, `ended by ${sig}`);
      assert.equal(o.session_id, id);
      if (fmt === 'json') assert.equal(lines.length, 1);
    }
  });
}

test('SIGINT in text mode: exit 130 quickly', async () => {
  mock.push({ hang: true });
  const c = spawn(['-o', 'q']);
  await waitFor(() => mock.posts.length === 1, 'the request');
  // The request never answers: only the signal can end this run (else run-cli's kill, code null).
  c.child.kill('SIGINT');
  const r = await c.result;
  assert.equal(r.code, 130, show(r));
});

test('--deny-tools: a denied call reaches the model as a policy denial and does not run', async () => {
  const target = join(dirs.root, 'denied.txt');
  mock.push(
    oa.toolCalls([
      { id: 'w', name: 'write_file', args: { path: target, content: 'no' } },
      { id: 'l', name: 'list_dir', args: { path: join(dirs.root, 'work') } },
    ]),
    oa.text('ok'),
  );
  const r = await run(['-S', '--deny-tools', 'shell_*, write_*', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.ok(!existsSync(target), 'the denied tool did not run');
  const [w, l] = ['w', 'l'].map((id) => toolMessages(1).find((m: any) => m.tool_call_id === id));
  assert.match(w.content, /^\[tool failed: denied by policy.*\]$/);
  assert.match(l.content, /f\.txt/, 'a tool not matched still runs');
  assert.match(r.stderr, /\[x write_file\] \[tool failed: denied by policy/);
});

test('--allow-tools: tools outside the list are denied, no-prompt ones too', async () => {
  mock.push(
    oa.toolCalls([
      { id: 'l', name: 'list_dir', args: { path: join(dirs.root, 'work') } },
      { id: 'r', name: 'read_file', args: { path: join(dirs.root, 'work', 'f.txt') } },
    ]),
    oa.text('ok'),
  );
  const r = await run(['-S', '--allow-tools=read_*', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const [l, rd] = ['l', 'r'].map((id) => toolMessages(1).find((m: any) => m.tool_call_id === id));
  assert.match(l.content, /^\[tool failed: denied by policy.*allow-tools.*\]$/);
  assert.doesNotMatch(rd.content, /tool failed/);
  assert.match(rd.content, /x/);
});

test('--deny-tools wins over --allow-tools', async () => {
  mock.push(oa.toolCall('read_file', { path: join(dirs.root, 'work', 'f.txt') }, 'r'), oa.text('ok'));
  const r = await run(['-S', '--allow-tools', '*', '--deny-tools', 'read_file', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.match(toolMessages(1)[0].content, /^\[tool failed: denied by policy/);
});

test('json: outcomes belong to their own call when calls of one tool finish out of order; result is the final reply', async () => {
  mock.push(
    oa.toolCalls(
      [
        { id: 'slow', name: 'shell_exec', args: { command: 'sleep 0.3; exit 3' } },
        { id: 'fast', name: 'shell_exec', args: { command: 'echo quick' } },
      ],
      { content: 'Let me check.' },
    ),
    oa.text('The answer.'),
  );
  const r = await run(['-S', '--output-format', 'json', '-o', 'go']);
  assert.equal(r.code, 0, show(r));
  const o = JSON.parse(r.stdout);
  assert.equal(o.result, 'The answer.');
  const byId = Object.fromEntries(o.tool_calls.map((t: any) => [t.id, t.outcome]));
  assert.deepEqual(byId, { slow: 'failed', fast: 'ok' });
});

const advertised = (i: number): string[] => (mock.posts[i]!.json.tools ?? []).map((t: any) => t.function.name);

test('denied tools are not advertised: not in the request, not in stream-json start.tools', async () => {
  mock.push(oa.streamText(['ok']));
  let r = await run(['--deny-tools', '*', '--output-format', 'stream-json', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.deepEqual(advertised(0), [], 'no tool schema is sent');
  assert.equal(mock.posts[0]!.json.tools, undefined);
  assert.deepEqual(jsonLines(r.stdout)[0]!.tools, []);

  mock.push(oa.streamText(['ok']));
  r = await run(['--deny-tools', 'shell_*,bg_*', '--output-format', 'stream-json', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.ok(!advertised(1).some((n) => /^(shell|bg)_/.test(n)), advertised(1).join(' '));
  assert.ok(advertised(1).includes('read_file'));
  assert.deepEqual(jsonLines(r.stdout)[0]!.tools, advertised(1));

  mock.push(oa.streamText(['ok']));
  r = await run(['--allow-tools', 'read_*,list_dir', '-o', 'q']);
  assert.deepEqual(advertised(2).sort(), ['list_dir', 'read_file']);
  assert.doesNotMatch(r.stderr, /matches no tool/);
});

test('a policy pattern that matches no tool gets a warning; one that matches does not', async () => {
  mock.push(oa.streamText(['ok']));
  const r = await run(['--deny-tools', 'shel_exec,read_*', '--allow-tools', 'nothing_like_this', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stderr, /^notice: --deny-tools: 'shel_exec' matches no tool$/m);
  assert.match(r.stderr, /^notice: --allow-tools: 'nothing_like_this' matches no tool$/m);
  assert.doesNotMatch(r.stderr, /'read_\*' matches/);
});

test("json and stream-json put the result object's keys in the same order; unknown tokens_per_sec is null", async () => {
  mock.push(oa.streamText(['a'], { usage: { prompt: 3, completion: 1 } }));
  const j = await run(['--output-format', 'json', '-o', 'q']);
  mock.push(oa.streamText(['a'], { usage: { prompt: 3, completion: 1 } }));
  const s = await run(['--output-format', 'stream-json', '-o', 'q']);
  const events = jsonLines(s.stdout);
  assert.deepEqual(Object.keys(events.at(-1)!), Object.keys(JSON.parse(j.stdout)));
  const usage = events.find((e) => e.type === 'usage')!;
  assert.equal(usage.tokens_per_sec, null, JSON.stringify(usage));
  mock.push(oa.streamText(['a'], { usage: { prompt: 3, completion: 1, tps: 42.5 } }));
  const t = await run(['--output-format', 'stream-json', '-o', 'q']);
  assert.equal(jsonLines(t.stdout).find((e) => e.type === 'usage')!.tokens_per_sec, 42.5);
});

test('Ctrl-C while starting up: json still prints one result object (status cancelled), exit 130', async () => {
  // An MCP server that never gets ready holds start-up; it marks when it has been started.
  const mark = join(dirs.root, 'mcp-started');
  const cfgDir = join(dirs.root, 'cfg-startup');
  mkdirSync(join(cfgDir, 'clm'), { recursive: true });
  writeFileSync(
    join(cfgDir, 'clm', 'config.lua'),
    `return {
  mcp_ready_timeout_ms = 60000,
  mcp_servers = { { name = "slow", command = { "sh", "-c", ${JSON.stringify(`touch '${mark}'; exec sleep 60`)} } } },
}
`,
  );
  for (const fmt of ['json', 'stream-json']) {
    rmSync(mark, { force: true });
    const c = spawn(['--output-format', fmt, '-o', 'q'], { env: { XDG_CONFIG_HOME: cfgDir } });
    await waitFor(() => existsSync(mark), 'the MCP server to start', 15_000);
    c.child.kill('SIGINT');
    const r = await c.result;
    assert.equal(r.code, 130, show(r));
    const lines = jsonLines(r.stdout);
    const o = lines.at(-1)!;
    assert.equal(o.type, 'result', r.stdout);
    assert.equal(o.status, 'cancelled');
    assert.equal(o.exit_code, 130);
    assert.equal(o.result, '');
    assert.deepEqual(o.tool_calls, []);
    if (fmt === 'json') assert.equal(lines.length, 1);
    assert.equal(mock.posts.length, 0);
  }
});

test('json and stream-json when the run cannot start (config.lua error, a missing session): still one result object with the error', async () => {
  const cfgDir = join(dirs.root, 'cfg-broken');
  mkdirSync(join(cfgDir, 'clm'), { recursive: true });
  writeFileSync(join(cfgDir, 'clm', 'config.lua'), 'return { model = \n');
  for (const fmt of ['json', 'stream-json']) {
    const r = await run(['--output-format', fmt, '-o', 'q'], { env: { XDG_CONFIG_HOME: cfgDir } });
    assert.equal(r.code, 2, show(r));
    assert.match(r.stderr, /clm: config\.lua:2: /);
    const lines = jsonLines(r.stdout);
    assert.equal(lines.length, 1, r.stdout);
    const o = lines[0]!;
    assert.equal(o.type, 'result');
    assert.equal(o.status, 'error');
    assert.equal(o.exit_code, 2);
    assert.match(o.error, /^config\.lua:2: /);
    assert.equal(o.session_id, null);

    const s = await run(['--output-format', fmt, '-r', '20990101-000000-deadbeef', '-o', 'q']);
    assert.equal(s.code, 1, show(s));
    const so = jsonLines(s.stdout);
    assert.equal(so.length, 1, s.stdout);
    assert.equal(so[0]!.status, 'error');
    assert.equal(so[0]!.exit_code, 1);
    assert.equal(so[0]!.error, 'no such session: 20990101-000000-deadbeef');
  }
  assert.equal(mock.posts.length, 0);
});
