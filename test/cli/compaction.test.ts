// The real `clm` binary, one-shot mode, and mid-chain compaction (issue 4: "The one-shot CLI
// probes before its first request, so its compaction threshold uses the real context size").
// A llama.cpp-like mock (GET /v1/models 200, GET /props with n_ctx 4096) and a resumed session
// with three earlier exchanges: a tool call whose usage is over 70 % of 4096 makes the run fold
// the history before it resumes the chain; without /props the context size is unknown and the
// same usage stays under the fixed 100,000-token threshold.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { show, type CliResult } from '../fixtures/run-cli.js';
import { cliSuite, jsonLines, sessionIdOf, writeSession, type SessionMessage } from '../fixtures/cli-suite.js';
import type { RecordedRequest, Reply } from '../fixtures/mock-llm.js';

const { mock, dirs, run } = await cliSuite({
  dirs: 'each',
  setup: (d) => {
    mkdirSync(join(d.root, 'work'));
    writeFileSync(join(d.root, 'work', 'notes.txt'), 'n');
  },
});

const ID = '20250102-030405-c0ffee01';
const EARLIER: SessionMessage[] = [
  { role: 'user', content: 'first earlier question' },
  { role: 'assistant', content: 'first earlier answer' },
  { role: 'user', content: 'second earlier question' },
  { role: 'assistant', content: 'second earlier answer' },
  { role: 'user', content: 'third earlier question' },
  { role: 'assistant', content: 'third earlier answer' },
];
const PROPS = { build_info: 'b', default_generation_settings: { n_ctx: 4096 }, total_slots: 1 };
const SUMMARY = 'SUMMARY: the user asked two questions and got two answers.';
const SUMMARY_PROMPT = /^Summarize the conversation so far/;
// 4 = the first two exchanges; 10 = system + 6 earlier + prompt + tool call + tool result;
// 7 = system + summary + the third exchange + prompt + tool call + tool result.
const COMPACTED = /^compacted 4 messages into a summary: 10 → 7 messages, ~\d+ → ~\d+ tokens$/;

/** The endpoint answers the connection probe: GET /v1/models 200, and /props unless told not to. */
function llamaServer(props: boolean) {
  mock.onGet('/v1/models', { body: { object: 'list', data: [{ id: 'local-model', object: 'model' }] } });
  if (props) mock.onGet('/props', { body: PROPS });
}

/**
 * A one-shot run resuming the seeded session: the first reply is a list_dir call reporting
 * `usage`, then `later` answers the following requests.
 */
function resumedRun(usage: { prompt: number; completion: number }, later: Reply[], args: string[] = []) {
  writeSession(dirs, ID, EARLIER);
  mock.push(oa.streamToolCall('list_dir', JSON.stringify({ path: join(dirs.root, 'work') }), 'c1', { usage }), ...later);
  return run([...args, '-r', ID, '-o', 'list the work directory']);
}

const isCompaction = (req: RecordedRequest) => SUMMARY_PROMPT.test(String(oa.lastMessage(req.json)?.content ?? ''));
const contents = (req: RecordedRequest): string[] => req.json.messages.map((m: any) => String(m.content ?? ''));

/** The probe (GET /v1/models, then GET /props) went out before the first chat request. */
function assertProbedFirst() {
  const paths = mock.requests.map((q) => `${q.method} ${q.path}`);
  const firstPost = paths.findIndex((p) => p.startsWith('POST '));
  assert.ok(firstPost > 0, paths.join('\n'));
  assert.ok(paths.indexOf('GET /v1/models') >= 0 && paths.indexOf('GET /v1/models') < firstPost, paths.join('\n'));
  assert.ok(paths.indexOf('GET /props') >= 0 && paths.indexOf('GET /props') < firstPost, paths.join('\n'));
}

/** Request 1 is the compaction request and request 2 resumes the chain from the folded history. */
function assertCompactedChain() {
  assert.equal(mock.posts.length, 3, mock.posts.map((p) => p.body.slice(0, 200)).join('\n'));
  const [first, fold, resumed] = mock.posts as [RecordedRequest, RecordedRequest, RecordedRequest];
  assert.ok(!isCompaction(first));
  assert.deepEqual(
    contents(first).slice(1, 7),
    EARLIER.map((m) => m.content),
    'the resumed history is sent',
  );

  // The compaction request: no tools, not streamed, the summary prompt as the last user message,
  // after the whole history including the tool round.
  assert.equal(fold.path, '/v1/chat/completions');
  assert.ok(!('tools' in fold.json), 'a compaction request offers no tools');
  assert.equal(fold.json.stream, false);
  const last = oa.lastMessage(fold.json);
  assert.equal(last.role, 'user');
  assert.match(last.content, SUMMARY_PROMPT);
  assert.ok(contents(fold).includes('first earlier question'));
  assert.ok(
    fold.json.messages.some((m: any) => m.role === 'tool' && m.tool_call_id === 'c1'),
    'the tool result is summarised too',
  );

  // The chain goes on from the folded history: system, summary, the last exchanges kept verbatim.
  assert.ok(!isCompaction(resumed));
  assert.ok(
    resumed.json.tools.some((t: any) => t.function.name === 'list_dir'),
    'the resumed chain offers the tools again',
  );
  const msgs = resumed.json.messages;
  assert.equal(msgs[0].role, 'system');
  assert.deepEqual({ role: msgs[1].role, content: msgs[1].content }, { role: 'user', content: SUMMARY });
  assert.deepEqual(contents(resumed).slice(2, 5), ['third earlier question', 'third earlier answer', 'list the work directory']);
  assert.ok(!contents(resumed).some((c) => /^(first|second) earlier/.test(c)), 'the folded turns are gone');
  assert.equal(msgs.at(-1).role, 'tool');
  assert.equal(msgs.at(-1).tool_call_id, 'c1');
  assert.match(msgs.at(-1).content, /notes\.txt/);
  assert.equal(msgs.length, 7);
}

/**
 * The run that must compact (/props n_ctx 4096, 3000 + 100 tokens after the tool round), checked
 * up to the requests it sent: probe first, then tool round, compaction, resumed chain.
 */
async function compactingRun(args: string[] = []) {
  llamaServer(true);
  const r = await resumedRun(
    { prompt: 3000, completion: 100 },
    [
      oa.text(SUMMARY, { usage: { prompt: 3200, completion: 40 } }),
      oa.streamText(['the final ', 'answer'], { usage: { prompt: 900, completion: 5 } }),
    ],
    args,
  );
  assert.equal(r.code, 0, show(r));
  assertProbedFirst();
  assertCompactedChain();
  return r;
}

/** The texts of the `notice: …` lines on stderr. */
const stderrNotices = (r: CliResult) =>
  r.stderr
    .split('\n')
    .filter((l) => l.startsWith('notice: '))
    .map((l) => l.slice('notice: '.length));

test('/props n_ctx 4096 and a reply using 3100 tokens: the run compacts, then resumes the chain and answers', async () => {
  const r = await compactingRun();
  assert.equal(r.stdout, 'the final answer\n');
  assert.equal(stderrNotices(r).filter((t) => COMPACTED.test(t)).length, 1, r.stderr);
  // The notice comes after the tool round that crossed the threshold.
  assert.ok(r.stderr.indexOf('[result: list_dir') < r.stderr.indexOf('notice: compacted'), r.stderr);
  assert.doesNotMatch(r.stderr, /^error: /m);
  assert.equal(sessionIdOf(r), ID);
});

test('stream-json: the compaction notice is a notice event between the tool result and the answer', async () => {
  const r = await compactingRun(['--output-format', 'stream-json']);
  const events = jsonLines(r.stdout);
  const types = events.map((e) => e.type);
  assert.equal(types[0], 'start');
  const compacted = events.filter((e) => e.type === 'notice' && COMPACTED.test(e.text));
  assert.equal(compacted.length, 1, r.stdout);
  const at = events.indexOf(compacted[0]!);
  assert.ok(types.indexOf('tool_result') < at, types.join(' '));
  assert.ok(at < types.indexOf('text'), types.join(' '));
  const result = events.at(-1)!;
  assert.equal(result.type, 'result');
  assert.equal(result.status, 'ok');
  assert.equal(result.result, 'the final answer');
  assert.equal(result.session_id, ID);
  assert.doesNotMatch(r.stderr, /compacted/, 'stream-json keeps the notice on stdout');
});

test('json: the one result object on stdout, the compaction notice on stderr', async () => {
  const r = await compactingRun(['--output-format', 'json']);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, r.stdout);
  const o = JSON.parse(lines[0]!);
  assert.equal(o.status, 'ok');
  assert.equal(o.result, 'the final answer');
  assert.equal(stderrNotices(r).filter((t) => COMPACTED.test(t)).length, 1, r.stderr);
});

test('/props n_ctx 4096 and a reply using under 70 %: no compaction', async () => {
  llamaServer(true);
  const r = await resumedRun({ prompt: 2700, completion: 100 }, [oa.streamText(['no fold needed'])]);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'no fold needed\n');
  assertProbedFirst();
  assert.equal(mock.posts.length, 2);
  assert.ok(!mock.posts.some(isCompaction));
  assert.doesNotMatch(r.stderr, /compacted/);
});

test('without /props (404) the context size is unknown: the same 3100 tokens do not trigger compaction', async () => {
  llamaServer(false);
  const r = await resumedRun({ prompt: 3000, completion: 100 }, [oa.streamText(['the final ', 'answer'])]);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'the final answer\n');
  const props = mock.requests.filter((q) => q.method === 'GET' && q.path === '/props');
  assert.equal(props.length, 1, 'the probe asked for /props and got a 404');
  assert.equal(mock.posts.length, 2, mock.posts.map((p) => p.body.slice(0, 200)).join('\n'));
  assert.ok(!mock.posts.some(isCompaction));
  // The chain went straight on with the full history and the tool result.
  const second = mock.posts[1]!;
  assert.ok(second.json.tools.length > 0);
  assert.deepEqual(
    contents(second).slice(1, 7),
    EARLIER.map((m) => m.content),
  );
  assert.equal(oa.lastMessage(second.json).tool_call_id, 'c1');
  assert.doesNotMatch(r.stderr, /compacted/);
});

test('a resumed conversation already over the threshold is compacted before the first prompt', async () => {
  llamaServer(true);
  // A long first exchange: ~3,200 estimated tokens, over 70 % of a 4,096-token context; once it
  // is folded the rest is small.
  const long = EARLIER.map((m, i) => (i < 2 ? { ...m, content: `${m.content} ${'lorem ipsum '.repeat(500)}` } : m));
  writeSession(dirs, ID, long);
  mock.push(oa.text(SUMMARY), oa.streamText(['the answer']));
  const r = await run(['-r', ID, '-o', 'and now?']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'the answer\n');
  assert.equal(mock.posts.length, 2);
  assert.ok(isCompaction(mock.posts[0]!), 'the first request is the compaction');
  const sent = contents(mock.posts[1]!);
  assert.ok(sent.includes(SUMMARY), 'the prompt goes out with the folded history');
  assert.equal(sent.at(-1), 'and now?');
  assert.ok(sent.join('').length < long.map((m) => m.content).join('').length, 'smaller than the resumed transcript');
  assert.match(r.stderr, /notice: the resumed conversation \(~\d+ tokens\) is over the compaction threshold; compacting it first/);

  // The compaction was saved: the next resume continues from the folded conversation and does
  // not compact again.
  const file = readFileSync(join(dirs.sessions, `${ID}.jsonl`), 'utf8');
  assert.match(file, /"type":"compact","index":0,"count":2,"summary":"SUMMARY: /);
  mock.reset();
  llamaServer(true);
  mock.push(oa.streamText(['second answer']));
  const again = await run(['-r', ID, '-o', 'and then?']);
  assert.equal(again.code, 0, show(again));
  assert.equal(mock.posts.length, 1, 'no second compaction');
  const resent = contents(mock.posts[0]!);
  assert.equal(resent[1], SUMMARY);
  assert.ok(
    !resent.some((c) => c.startsWith('first earlier question') || c.startsWith('first earlier answer')),
    'the folded messages stay folded',
  );
  assert.deepEqual(resent.slice(-3), ['and now?', 'the answer', 'and then?']);
});

test('a probe answer that arrives after the first request is still used for the threshold', async () => {
  // /props answers only once the first chat request has arrived, and that request's reply waits
  // for /props: with a probe in front of the first request this would never finish.
  let propsAnswered = false;
  mock.onGet('/v1/models', { body: { object: 'list', data: [{ id: 'local-model', object: 'model' }] } });
  mock.onGet('/props', {
    handle: async (_req, res) => {
      while (mock.posts.length < 1) await new Promise((r) => setTimeout(r, 5));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PROPS));
      propsAnswered = true;
    },
  });
  const first = oa.toolCall('list_dir', { path: join(dirs.root, 'work') }, 'c1', { usage: { prompt: 3000, completion: 100 } });
  mock.push(
    {
      handle: async (_req, res) => {
        while (!propsAnswered) await new Promise((r) => setTimeout(r, 5));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify((first as { body: object }).body));
      },
    },
    oa.text('the final answer'),
  );
  const r = await run(['-S', '-o', 'list the work directory'], { timeoutMs: 15_000 });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'the final answer\n');
  // The learned 4096-token context put 3100 tokens over the threshold; one prompt and one tool
  // round hold nothing to fold, which is said instead of asking for a summary.
  assert.equal(mock.posts.length, 2, mock.posts.map((p) => p.body.slice(0, 200)).join('\n'));
  assert.match(r.stderr, /notice: the context is over the compaction threshold, but there is nothing to compact yet/);
});
