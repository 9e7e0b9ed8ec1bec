// The agent end to end over the Node host against the mock LLM speaking OpenAI chat completions:
// the original's test_agent.c cases for this dialect plus retries, cancel, busy and bad input.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import * as oa from '../fixtures/openai-replies.js';
import { harness, echoTool, recordingHost } from '../fixtures/agent-harness.js';
import { MAX_RETRY_WAIT_MS } from '../../src/core/llm-call.js';
import { ClmError, ECANCELED, EIO, E2BIG, EAGAIN } from '../../src/core/errors.js';
import { NOTHING_TO_COMPACT } from '../../src/core/compaction.js';
import { createNodeHost } from '../../src/host/node.js';
import type { Message } from '../../src/core/types.js';

const mock = await mockLlmPerFile();

test('text reply: system prompt sent, one request, callback order (test_text_reply)', async () => {
  mock.push(oa.text('hi there', { usage: { prompt: 11, completion: 4 }, reasoning: 'thought' }));
  const r = harness(mock, { cfg: { systemPrompt: 'You are a pirate.' } });
  const done = r.turnDone();
  r.agent.submit('hello');
  assert.equal(await done, 0);
  assert.equal(mock.posts.length, 1);
  const req = mock.posts[0]!.json;
  assert.match(req.messages[0].content, /^You are a pirate\.\n\ncurrent time: /);
  assert.equal(req.messages[1].content, 'hello');
  assert.equal(req.model, 'local-model');
  assert.equal(req.stream, false);
  assert.equal(mock.posts[0]!.headers.authorization, 'Bearer test');
  assert.equal(r.text, 'hi there');
  const tail = r.events.slice(r.events.indexOf('finish:stop'));
  assert.deepEqual(tail, [
    'finish:stop',
    'usage:11/4',
    'reasoning:thought',
    'message:assistant',
    'text:hi there',
    'state:complete',
    'done:0',
  ]);
  assert.equal(r.agent.state, 'complete');
  assert.equal(r.agent.messages.at(-1)!.content, 'hi there');
});

test('tool call round trip with a gated tool (test_tool_call)', async () => {
  mock.push(oa.toolCall('echo_hello', {}, 'call_a'), oa.text('final answer'));
  const r = harness(mock, { tools: [echoTool('echo_hello')], permission: 'allow_once' });
  const done = r.turnDone();
  r.agent.submit('say hello');
  assert.equal(await done, 0);
  assert.equal(r.results.length, 1);
  assert.equal(r.results[0]!.outcome, 'ok');
  assert.equal(mock.posts.length, 2);
  const msgs = mock.posts[1]!.json.messages;
  assert.deepEqual(msgs.at(-1), { role: 'tool', content: 'hello', tool_call_id: 'call_a' });
  assert.equal(msgs.at(-2).tool_calls[0].function.name, 'echo_hello');
  assert.equal(r.text, 'final answer');
  assert.deepEqual(r.permissions, [{ name: 'echo_hello', args: '{}' }]);
  // on_tool_batch(0,n) precedes the assistant tool-call message; result → message → batch.
  const i = r.events.indexOf('batch:0/1');
  assert.deepEqual(r.events.slice(i, i + 2), ['batch:0/1', 'message:assistant']);
  const j = r.events.indexOf('result:echo_hello:ok');
  assert.deepEqual(r.events.slice(j, j + 3), ['result:echo_hello:ok', 'message:tool', 'batch:1/1']);
});

test('binary tool output is replaced by a notice (test_binary_tool_output)', async () => {
  mock.push(oa.toolCall('bin', {}), oa.text('ok'));
  const r = harness(mock, { tools: [echoTool('bin', new Uint8Array([0x68, 0x69, 0, 0x89, 0x50, 0x4e, 0x47]), { noPrompt: true })] });
  const done = r.turnDone();
  r.agent.submit('x');
  assert.equal(await done, 0);
  assert.match(r.results[0]!.content, /binary data at byte offset 2 of 7/);
  assert.equal(r.results[0]!.outcome, 'ok');
  assert.match(mock.posts[1]!.body, /binary data at byte offset 2 of 7/);
});

test('mid-chain autocompaction between tool batches (test_autocompact_mid_chain)', async () => {
  mock.push(oa.toolCall('t', {}, 'c1', { usage: { prompt: 99000, completion: 2000 } }), oa.text('SUMMARY OF WORK'), oa.text('final'));
  let startedSeen = false;
  const r = harness(mock, { tools: [echoTool('t', 'out', { noPrompt: true })], callbacks: {} });
  r.agent.restoreHistory(
    [1, 2, 3].flatMap((i) => [
      { role: 'user' as const, content: `old ${i}` },
      { role: 'assistant' as const, content: `reply ${i}` },
    ]),
  );
  const done = r.turnDone();
  r.agent.submit('first');
  // Poll the consuming flag from the state callback, as a UI would.
  const poll = setInterval(() => {
    if (r.agent.takeMidChainCompactStarted()) startedSeen = true;
  }, 1);
  assert.equal(await done, 0);
  clearInterval(poll);
  assert.equal(mock.posts.length, 3);
  assert.match(JSON.stringify(mock.posts[1]!.json.messages.at(-1)), /Summarize the conversation so far/);
  assert.equal(mock.posts[1]!.json.tools, undefined);
  assert.equal(r.text, 'final');
  assert.equal(r.agent.overAutocompactThreshold(), false);
  assert.ok(startedSeen || r.agent.takeMidChainCompactStarted());
  assert.equal(r.agent.takeMidChainCompactSucceeded(), true);
  assert.equal(r.agent.takeMidChainCompactSucceeded(), false, 'consuming flag');
  assert.equal(r.agent.takeMidChainCompactError(), false);
  assert.equal(r.doneCount, 1, 'mid-chain compaction never ends the turn');
});

test('mid-chain compaction with nothing to fold sends no request, raises no flag and resumes the chain', async () => {
  mock.push(oa.toolCall('t', {}, 'c1', { usage: { prompt: 99000, completion: 2000 } }), oa.text('final'));
  const r = harness(mock, { tools: [echoTool('t', 'out', { noPrompt: true })] });
  const done = r.turnDone();
  r.agent.submit('only turn');
  assert.equal(await done, 0);
  assert.equal(mock.posts.length, 2);
  assert.equal(r.agent.takeMidChainCompactError(), false);
  assert.equal(r.agent.takeMidChainCompactStarted(), false);
  assert.equal(r.agent.lastError, '');
  assert.equal(r.agent.takeMidChainCompactSucceeded(), false);
  assert.equal(r.text, 'final');
});

test('explicit compact falls back to reasoning when content is empty (test_compact_reasoning_fallback)', async () => {
  const r = harness(mock);
  for (const t of ['one', 'two', 'three']) {
    mock.push(oa.text(`answer ${t}`));
    const d = r.turnDone();
    r.agent.submit(t);
    assert.equal(await d, 0);
  }
  mock.push(oa.text('', { reasoning: 'the summary', reasoningKey: 'reasoning', finish: 'length' }));
  const d = r.turnDone();
  r.agent.compact();
  assert.equal(await d, 0);
  assert.equal(r.agent.state, 'complete');
  const msgs = r.agent.messages;
  assert.ok(msgs.some((m) => m.content === 'the summary'));
  assert.ok(!msgs.some((m) => m.content === 'one'));
  assert.ok(r.notices.some((n) => /compacted \d+ messages/.test(n)));
});

test('compacting a conversation larger than the context window sends what fits, and folds it all', async () => {
  const r = harness(mock, { cfg: { contextSize: 8000 } });
  const history: Message[] = [{ role: 'user', content: 'the task' }];
  for (let i = 0; i < 100; i++)
    history.push({ role: 'assistant', content: `answer ${i} ${'word '.repeat(400)}` }, { role: 'user', content: `question ${i + 1}` });
  r.agent.restoreHistory(history);
  mock.push(oa.text('the summary'));
  const d = r.turnDone();
  r.agent.compact();
  assert.equal(await d, 0);
  const sent = mock.posts[0]!.json.messages as { role: string; content: string }[];
  assert.ok(JSON.stringify(sent).length < 8000 * 4, `${JSON.stringify(sent).length} characters sent for a window of 8,000 tokens`);
  assert.equal(sent[1]!.content, 'the task');
  assert.match(sent.at(-1)!.content, /^\(\d+ older messages left out: they did not fit the context window\.\) Summarize/);
  assert.equal(sent.at(-2)!.content, 'question 100', 'the newest message');
  const after = r.agent.messages.filter((m) => m.role !== 'system');
  assert.ok(after.length <= 5, `${after.length} messages after the compaction`);
  assert.ok(after.some((m) => m.content === 'the summary'));
});

test('compact with nothing to fold ends with EAGAIN', async () => {
  const r = harness(mock);
  mock.push(oa.text('a'));
  let d = r.turnDone();
  r.agent.submit('only');
  await d;
  d = r.turnDone();
  r.agent.compact();
  assert.equal(await d, EAGAIN);
  assert.equal(mock.posts.length, 1, 'no summary request');
  assert.equal(r.agent.lastError, '');
  assert.equal(r.agent.state, 'complete');
  assert.deepEqual(r.notices, [NOTHING_TO_COMPACT]);
});

test('model without tool support: one notice, retry without tools, sticky (test_tools_unsupported_retry)', async () => {
  mock.push({ status: 400, body: 'registry.ollama.ai/library/gemma does not support tools' }, oa.text('ok'));
  const r = harness(mock, { tools: [echoTool('t')] });
  let d = r.turnDone();
  r.agent.submit('hi');
  assert.equal(await d, 0);
  assert.equal(mock.posts.length, 2);
  assert.ok(mock.posts[0]!.json.tools);
  assert.equal(mock.posts[1]!.json.tools, undefined);
  assert.deepEqual(r.notices, ['model does not support tool calls; continuing without tools']);
  mock.push(oa.text('again'));
  d = r.turnDone();
  r.agent.submit('more');
  assert.equal(await d, 0);
  assert.equal(mock.posts.length, 3);
  assert.equal(mock.posts[2]!.json.tools, undefined);
  assert.equal(r.notices.length, 1);
});

test('streamed text is assembled (test_stream_text)', async () => {
  mock.push(oa.streamText(['hi', ' there']));
  const r = harness(mock, { cfg: { stream: true } });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(r.text, 'hi there');
  assert.equal(mock.posts.length, 1);
  assert.deepEqual(mock.posts[0]!.json.stream_options, { include_usage: true });
  assert.equal(r.agent.messages.at(-1)!.content, 'hi there');
  // Streaming order: text deltas, then finish → usage → message → state → done.
  assert.deepEqual(r.events.slice(-4), ['finish:stop', 'message:assistant', 'state:complete', 'done:0']);
});

test('streamed tool call dispatched, then streamed answer (test_stream_tool)', async () => {
  mock.push(oa.streamToolCall('echo_hello', '{"who":"world"}', 'call_s'), oa.streamText(['done']));
  const r = harness(mock, { cfg: { stream: true }, tools: [echoTool('echo_hello', 'hello', { noPrompt: true })] });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(mock.posts.length, 2);
  assert.ok(r.events.includes('begin:echo_hello:{"who":"world"}'));
  const m = mock.posts[1]!.json.messages;
  assert.equal(m.at(-2).tool_calls[0].id, 'call_s');
  assert.equal(m.at(-2).tool_calls[0].function.arguments, '{"who":"world"}');
  assert.equal(m.at(-1).content, 'hello');
  assert.equal(r.text, 'done');
});

test('stream meta: reasoning, finish, usage from the empty-choices chunk, tokens/s (test_stream_meta)', async () => {
  mock.push(oa.streamText(['ok'], { reasoning: ['hmm'], usage: { prompt: 10, completion: 5, tps: 42.5 } }));
  const r = harness(mock, { cfg: { stream: true } });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(r.reasoning, 'hmm');
  assert.equal(r.usage.length, 1);
  assert.deepEqual(r.usage[0], { promptTokens: 10, completionTokens: 5, totalTokens: 15, tokensPerSec: 42.5 });
  assert.ok(r.events.includes('finish:stop'));
  assert.ok(!r.agent.messages.some((m) => m.content === 'hmm'), 'reasoning is never stored');
});

test('SSE edge cases through the agent: CRLF, comments, multi-line data, no final newline', async () => {
  const ev = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  mock.push({
    sse: [
      ': keep-alive\r\n\r\n',
      ev({ choices: [{ delta: { content: 'a' } }] }),
      'data: {"choices":[{"delta":\ndata: {"content":"b"}}]}\n\n',
      ev({ choices: [{ delta: {}, finish_reason: 'stop' }] }),
      'data: [DONE]',
    ],
  });
  const r = harness(mock, { cfg: { stream: true } });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(r.text, 'ab');
});

test('server that ignores stream:true and sends one JSON reply still works', async () => {
  mock.push(oa.text('whole'));
  const r = harness(mock, { cfg: { stream: true } });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(r.agent.messages.at(-1)!.content, 'whole');
});

test('dead endpoint: error, state ERROR, next submit accepted (test_recover_after_error)', async () => {
  const r = harness(mock, { cfg: { baseUrl: 'http://127.0.0.1:1/v1/chat/completions', maxTries: 1 } });
  let d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, EIO);
  assert.equal(r.agent.state, 'error');
  assert.match(r.agent.lastError, /ECONNREFUSED/);
  d = r.turnDone();
  r.agent.submit('again');
  assert.equal(await d, EIO);
  // set_provider after an error turn (test_set_provider_after_error)
  r.agent.setProvider({ baseUrl: `${mock.base}/chat/completions`, model: 'm2' });
  mock.push(oa.text('back'));
  d = r.turnDone();
  r.agent.submit('now');
  assert.equal(await d, 0);
  assert.equal(mock.posts.at(-1)!.json.model, 'm2');
});

test('a refused connection before the server was ever reached fails at once, saying what to check', async () => {
  // A long backoff: a retry would show as a rate_limited state and a "retrying" notice.
  const r = harness(mock, { cfg: { baseUrl: 'http://127.0.0.1:1/v1/chat/completions' }, retryBaseMs: 60_000 });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, EIO);
  assert.ok(!r.states.includes('rate_limited'), r.states.join(' '));
  assert.deepEqual(r.notices, []);
  assert.equal(
    r.agent.lastError,
    'cannot connect to http://127.0.0.1:1/v1/chat/completions (connect ECONNREFUSED 127.0.0.1:1): is the server running, and is the URL right?',
  );
});

test('a refused connection after the server answered once is retried (a server restarting)', async () => {
  const { createServer } = await import('node:http');
  const body = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'up' }, finish_reason: 'stop' }] });
  const srv = createServer((_q, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  const port = (srv.address() as { port: number }).port;
  const r = harness(mock, { cfg: { baseUrl: `http://127.0.0.1:${port}/v1/chat/completions`, maxTries: 2 }, retryBaseMs: 1 });
  let d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  await new Promise<void>((res) => {
    srv.close(() => res());
    srv.closeAllConnections();
  });
  d = r.turnDone();
  r.agent.submit('again');
  assert.equal(await d, EIO);
  assert.ok(r.states.includes('rate_limited'), r.states.join(' '));
  assert.match(r.notices.join('\n'), /ECONNREFUSED.*retrying in 1 ms/);
  assert.match(r.agent.lastError, /ECONNREFUSED/);
});

test('HTTP errors carry status and the server message; 4xx is not retried', async () => {
  mock.push(oa.httpError(401, 'invalid api key'));
  const r = harness(mock);
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, EIO);
  assert.equal(r.agent.lastError, 'HTTP 401: invalid api key');
  assert.equal(mock.posts.length, 1);
});

test('429 with Retry-After is retried in RATE_LIMITED after the wait the header asks for, then succeeds', async () => {
  const later = new Date(Date.now() + 120_000).toUTCString();
  mock.push(
    oa.httpError(429, 'slow down', { 'retry-after': '7' }),
    { status: 503, body: 'busy' },
    oa.httpError(503, 'down', { 'retry-after': later }),
    oa.text('finally'),
  );
  const host = recordingHost();
  const r = harness(mock, { host, cfg: { maxTries: 5 } });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(mock.posts.length, 4);
  // The header's seconds; then backoff (base 20 ms, second try: 40 ms) where there is no header;
  // an HTTP date two minutes ahead is held to the 60 s ceiling.
  assert.deepEqual(host.waits, [7000, 40, MAX_RETRY_WAIT_MS]);
  assert.deepEqual(r.states.filter((s) => s === 'rate_limited').length, 3);
  assert.equal(r.text, 'finally');
});

test('a Retry-After HTTP date is a wait until that time', async () => {
  const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 30_000);
  mock.push(oa.httpError(429, 'later', { 'retry-after': at.toUTCString() }), oa.text('ok'));
  const host = recordingHost();
  const r = harness(mock, { host });
  const t0 = Date.now();
  assert.equal((await r.agent.run('x')).status, 0);
  assert.equal(host.waits.length, 1);
  const asked = host.waits[0]!;
  // Measured against the clock when the reply came: between 30 s ahead of the submit and now.
  assert.ok(asked <= at.getTime() - t0 && asked >= at.getTime() - Date.now(), `waited ${asked} ms for ${at.toUTCString()}`);
  assert.ok(asked > 25_000, `waited ${asked} ms`);
});

test('retries stop after 4 tries with the last error', async () => {
  for (let i = 0; i < 4; i++) mock.push({ status: 500, body: { error: { message: 'boom' } } });
  const r = harness(mock, { retryBaseMs: 1 });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, EIO);
  assert.equal(mock.posts.length, 4);
  assert.equal(r.agent.lastError, 'HTTP 500: boom');
});

test('RATE_LIMITED counts as in flight and can be cancelled', async () => {
  mock.push(oa.httpError(429, 'wait', { 'retry-after': '30' }));
  const r = harness(mock);
  const d = r.turnDone();
  r.agent.submit('x');
  while (r.agent.state !== 'rate_limited') await new Promise((res) => setTimeout(res, 2));
  assert.throws(
    () => r.agent.submit('y'),
    (e: unknown) => e instanceof ClmError && e.code === 'EBUSY',
  );
  assert.throws(
    () => r.agent.compact(),
    (e: unknown) => e instanceof ClmError && e.code === 'EBUSY',
  );
  assert.throws(
    () => r.agent.setProvider({ baseUrl: mock.base }),
    (e: unknown) => e instanceof ClmError && e.code === 'EBUSY',
  );
  r.agent.cancel();
  assert.equal(await d, ECANCELED);
  assert.equal(r.agent.state, 'complete');
  assert.equal(r.agent.lastError, '');
});

test('EBUSY while in flight; cancel ends with ECANCELED; repeated cancel EALREADY; idle cancel EINVAL', async () => {
  mock.push({ hang: true });
  const r = harness(mock);
  const d = r.turnDone();
  r.agent.submit('x');
  assert.throws(
    () => r.agent.submit('y'),
    (e: unknown) => e instanceof ClmError && e.code === 'EBUSY' && e.errno === -16,
  );
  assert.equal(r.agent.lastError, 'turn already in progress');
  // Cancel once the server holds the request, so the hanging reply is not left queued.
  while (mock.posts.length < 1) await new Promise((res) => setTimeout(res, 2));
  r.agent.cancel();
  assert.equal(await d, ECANCELED);
  assert.throws(
    () => r.agent.cancel(),
    (e: unknown) => e instanceof ClmError && e.code === 'EALREADY',
  );
  assert.equal(r.doneCount, 1);
  mock.push(oa.text('fine'));
  const d2 = r.turnDone();
  r.agent.submit('next');
  assert.equal(await d2, 0);
  assert.throws(
    () => r.agent.cancel(),
    (e: unknown) => e instanceof ClmError && e.code === 'EINVAL',
  );
});

test('cancel during a tool call aborts it and still pairs every call with a result', async () => {
  let aborted = false;
  mock.push(
    oa.toolCalls([
      { name: 'slow', args: {} },
      { name: 'fast', args: {} },
    ]),
  );
  const r = harness(mock, {
    tools: [
      {
        name: 'slow',
        noPrompt: true,
        invoke: (inv) => {
          inv.signal.addEventListener('abort', () => {
            aborted = true;
          });
        },
      },
      echoTool('fast', 'quick', { noPrompt: true }),
    ],
  });
  const d = r.turnDone();
  r.agent.submit('x');
  while (r.results.length < 1) await new Promise((res) => setTimeout(res, 2));
  r.agent.cancel();
  assert.equal(await d, ECANCELED);
  assert.ok(aborted);
  const tools = r.agent.messages.filter((m) => m.role === 'tool');
  assert.equal(tools.length, 2);
  assert.ok(tools.some((m) => m.content === '[tool failed: cancelled by user]'));
  assert.equal(r.doneCount, 1);
});

test('permission: deny once fails the call after one prompt (test_perm_deny)', async () => {
  mock.push(oa.toolCall('g', {}), oa.text('ok'));
  const r = harness(mock, { tools: [echoTool('g')], permission: 'deny_once' });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(r.permissions.length, 1);
  assert.equal(r.results[0]!.outcome, 'failed');
  assert.equal(r.results[0]!.content, '[tool failed: denied by user]');
});

test('permission: no_prompt tool never prompts (test_perm_no_prompt)', async () => {
  mock.push(oa.toolCall('np', {}), oa.text('ok'));
  const r = harness(mock, { tools: [echoTool('np', 'x', { noPrompt: true })], permission: 'deny_once' });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(r.permissions.length, 0);
  assert.equal(r.results[0]!.outcome, 'ok');
});

test('permission: allow always is remembered (test_perm_remember), deny always too', async () => {
  const r = harness(mock, { tools: [echoTool('g')], permission: 'allow_always' });
  for (let i = 0; i < 2; i++) {
    mock.push(oa.toolCall('g', {}), oa.text('ok'));
    const d = r.turnDone();
    r.agent.submit('x');
    assert.equal(await d, 0);
  }
  assert.equal(r.permissions.length, 1);
  assert.deepEqual(
    r.results.map((x) => x.outcome),
    ['ok', 'ok'],
  );
  const r2 = harness(mock, { tools: [echoTool('g')], permission: 'deny_always' });
  for (let i = 0; i < 2; i++) {
    mock.push(oa.toolCall('g', {}), oa.text('ok'));
    const d = r2.turnDone();
    r2.agent.submit('x');
    await d;
  }
  assert.equal(r2.permissions.length, 1);
  assert.equal(r2.results[1]!.content, '[tool failed: denied by user (remembered)]');
});

test('permission: no handler denies gated tools (test_perm_no_handler)', async () => {
  mock.push(oa.toolCall('g', {}), oa.text('ok'));
  const r = harness(mock, { tools: [echoTool('g')] });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(r.results[0]!.outcome, 'failed');
  assert.equal(r.results[0]!.content, '[tool failed: denied: no permission policy]');
});

test('hidden tools are not advertised (test_hidden_tool); schema order and stability', async () => {
  mock.push(oa.text('a'), oa.text('b'));
  const r = harness(mock, {
    tools: [
      echoTool('visible_tool'),
      echoTool('secret_tool', 'x', { hidden: true }),
      { name: 'third', parameters: '{"properties":{"p":{"type":"string"}}}', timeoutOverridable: true, invoke: (i) => i.complete('') },
    ],
  });
  let d = r.turnDone();
  r.agent.submit('x');
  await d;
  d = r.turnDone();
  r.agent.submit('y');
  await d;
  const body = mock.posts[0]!.body;
  assert.match(body, /visible_tool/);
  assert.doesNotMatch(body, /secret_tool/);
  const names = mock.posts[0]!.json.tools.map((t: any) => t.function.name);
  assert.deepEqual(names, ['visible_tool', 'third']);
  const third = mock.posts[0]!.json.tools[1].function.parameters;
  assert.equal(third.type, 'object');
  assert.deepEqual(Object.keys(third.properties), ['p', 'timeout_ms']);
  // Byte-stable prefix: the second request starts with the first's messages and the same tools.
  const tools0 = mock.posts[0]!.body.slice(mock.posts[0]!.body.indexOf('"tools"'));
  const tools1 = mock.posts[1]!.body.slice(mock.posts[1]!.body.indexOf('"tools"'));
  assert.equal(tools0, tools1);
  const p0 = mock.posts[0]!.body.slice(0, mock.posts[0]!.body.indexOf('],"stream"'));
  assert.ok(mock.posts[1]!.body.startsWith(p0));
});

test('duplicate tool names are refused with EEXIST', () => {
  const r = harness(mock, { tools: [echoTool('a')] });
  assert.throws(
    () => r.agent.addTool(echoTool('a')),
    (e: unknown) => e instanceof ClmError && e.code === 'EEXIST',
  );
  r.agent.removeTool('a');
  r.agent.addTool(echoTool('a'));
});

test('unknown tool, malformed arguments, throwing tool: clear results, turn continues', async () => {
  mock.push(
    oa.toolCalls([
      { name: 'nope', args: {} },
      { name: 'thrower', args: '{not json' },
    ]),
    oa.text('recovered'),
  );
  const r = harness(mock, {
    tools: [
      {
        name: 'thrower',
        noPrompt: true,
        invoke: (inv) => {
          JSON.parse(inv.args);
          inv.complete('unreachable');
        },
      },
    ],
  });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  const byName = Object.fromEntries(r.results.map((x) => [x.name, x.content]));
  assert.equal(byName.nope, "[tool failed: unknown tool 'nope']");
  assert.match(byName.thrower!, /^\[tool failed: .*JSON/);
  // The malformed arguments are kept in history but sent as {} so strict servers accept the request.
  assert.equal(r.agent.messages.find((m) => m.toolCalls)!.toolCalls![1]!.args, '{not json');
  assert.equal(mock.posts[1]!.json.messages.at(-3).tool_calls[1].function.arguments, '{}');
  assert.equal(r.text, 'recovered');
});

test('a tool that never completes times out; a late completion is dropped', async () => {
  let late: (() => void) | undefined;
  mock.push(oa.toolCall('stuck', {}), oa.text('after timeout'));
  const r = harness(mock, {
    tools: [
      {
        name: 'stuck',
        noPrompt: true,
        timeoutMs: 50,
        invoke: (inv) => {
          late = () => inv.complete('late');
        },
      },
    ],
  });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  assert.equal(r.results[0]!.outcome, 'timedout');
  assert.equal(r.results[0]!.content, '[tool failed: timed out after 50 ms]');
  late!();
  assert.equal(r.results.length, 1);
  assert.equal(r.agent.messages.filter((m) => m.role === 'tool').length, 1);
});

test('bad server output: non-JSON 200, malformed SSE, stream cut mid-event — clear error, agent usable', async () => {
  const r = harness(mock);
  mock.push({ body: '<html>proxy error</html>' });
  let d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, EIO);
  assert.match(r.agent.lastError, /could not parse llm response: <html>proxy error<\/html>/);

  const rs = harness(mock, { cfg: { stream: true } });
  mock.push({ sse: ['data: {"choices":[{"delta":{"content":"a"}}]}\n\n', 'data: {broken\n\n'] });
  d = rs.turnDone();
  rs.agent.submit('x');
  assert.equal(await d, EIO);
  assert.match(rs.agent.lastError, /could not parse stream event: \{broken/);

  mock.push({ sse: ['data: {"choices":[{"delta":{"content":"par'] });
  d = rs.turnDone();
  rs.agent.submit('y');
  assert.equal(await d, EIO);
  assert.match(rs.agent.lastError, /stream ended before the reply was complete/);

  mock.push({ sse: ['data: {"choices":[{"delta":{"content":"par"}}]}\n\n'] });
  d = rs.turnDone();
  rs.agent.submit('w');
  assert.equal(await d, EIO);
  assert.match(rs.agent.lastError, /stream ended before the reply was complete/);

  mock.push(oa.text('fine'));
  d = r.turnDone();
  r.agent.submit('z');
  assert.equal(await d, 0);
});

test('volatile tools: older results are superseded in the next request', async () => {
  mock.push(oa.toolCall('local_map', {}, 'm1'), oa.toolCall('local_map', {}, 'm2'), oa.text('done'));
  let n = 0;
  const r = harness(mock, {
    cfg: { volatileTools: ['local_*'] },
    tools: [{ name: 'local_map', noPrompt: true, invoke: (i) => i.complete(`map v${++n}`) }],
  });
  const d = r.turnDone();
  r.agent.submit('x');
  assert.equal(await d, 0);
  const last = mock.posts[2]!.json.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
  assert.deepEqual(last, ['[superseded by newer local_map]', 'map v2']);
});

test('max iterations ends the turn with E2BIG', async () => {
  mock.script(() => oa.toolCall('t', {}));
  const r = harness(mock, { cfg: { maxIterations: 3 }, tools: [echoTool('t', 'x', { noPrompt: true })] });
  const d = r.turnDone();
  r.agent.submit('loop');
  assert.equal(await d, E2BIG);
  assert.equal(r.agent.lastError, 'max iterations reached (3 tool rounds in one turn)');
  assert.equal(mock.posts.length, 3);
});

test('50 sequential tool rounds are not throttled', async () => {
  let rounds = 0;
  mock.script(() => (++rounds <= 50 ? oa.toolCall('t', {}, `c${rounds}`) : oa.text('end')));
  const host = recordingHost();
  const r = harness(mock, { host, tools: [echoTool('t', 'x', { noPrompt: true })] });
  const d = r.turnDone();
  r.agent.submit('go');
  assert.equal(await d, 0);
  assert.equal(mock.posts.length, 51);
  // No request and no tool call waited for anything: no timer was ever asked for.
  assert.deepEqual(host.waits, []);
  assert.ok(!r.states.includes('rate_limited'));
});

test('notify while busy is submitted right after the turn; never lost when onTurnDone submits', async () => {
  mock.push(
    { body: { choices: [{ message: { role: 'assistant', content: 'one' }, finish_reason: 'stop' }] }, delayMs: 30 },
    oa.text('two'),
    oa.text('three'),
  );
  const r = harness(mock);
  const d1 = r.turnDone();
  r.agent.submit('first');
  r.agent.notify('note A');
  r.agent.notify('note B');
  // The joined notifications start the second turn from inside the first one's end: waiting
  // for it after the first resolved would miss it, so both are awaited from here.
  const d2 = d1.then(() => r.turnDone());
  assert.equal(await d1, 0);
  assert.equal(await d2, 0);
  assert.equal(mock.posts.length, 2);
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, 'note A\n\nnote B');
  assert.deepEqual(
    r.agent.messages.slice(1).map((m) => [m.role, m.content]),
    [
      ['user', 'first'],
      ['assistant', 'one'],
      ['user', 'note A\n\nnote B'],
      ['assistant', 'two'],
    ],
  );
  assert.equal(r.doneCount, 2);
});

test('notifications queued when onTurnDone submits wait for that turn, then are sent', async () => {
  mock.push(
    { body: { choices: [{ message: { role: 'assistant', content: 'one' }, finish_reason: 'stop' }] }, delayMs: 30 },
    oa.text('two'),
    oa.text('three'),
  );
  let r!: ReturnType<typeof harness>;
  const statuses: number[] = [];
  const waiters: (() => void)[] = [];
  const nextDone = () => new Promise<void>((res) => waiters.push(res));
  r = harness(mock, {
    callbacks: {
      onTurnDone: (s) => {
        statuses.push(s);
        if (statuses.length === 1) r.agent.submit('from onTurnDone');
        for (const w of waiters.splice(0)) w();
      },
    },
  });
  r.agent.submit('first');
  r.agent.notify('queued note');
  await nextDone();
  await nextDone();
  // The second turn has ended; the queued note was submitted right after its onTurnDone.
  assert.equal(r.agent.busy, true, 'the queued notification started a turn');
  await nextDone();
  assert.deepEqual(statuses, [0, 0, 0]);
  assert.deepEqual(
    mock.posts.map((p) => p.json.messages.at(-1).content),
    ['first', 'from onTurnDone', 'queued note'],
  );
});

test('run() resolves with status and text', async () => {
  mock.push(oa.text('via run'));
  const r = harness(mock);
  const res = await r.agent.run('hello');
  assert.deepEqual(res, { status: 0, text: 'via run' });
  mock.push(oa.httpError(400, 'bad'));
  const bad = await r.agent.run('again');
  assert.equal(bad.status, EIO);
  assert.equal(bad.error, 'HTTP 400: bad');
});

test('context update is appended after 600 s, never a second system message', async () => {
  let now = new Date(2026, 0, 1, 12, 0, 0);
  mock.push(oa.text('a'), oa.text('b'));
  const r = harness(mock, { cfg: { clock: () => now } });
  await r.agent.run('first');
  now = new Date(2026, 0, 1, 12, 10, 0);
  await r.agent.run('second');
  const msgs = mock.posts[1]!.json.messages;
  assert.equal(msgs.filter((m: any) => m.role === 'system').length, 1);
  assert.match(msgs.at(-2).content, /^\[context update\] current time: Thu, 01 Jan 2026 12:10:00/);
  assert.equal(msgs.at(-1).content, 'second');
});

test('checkConnection: models 200 then /props learns the context; 4xx online; 5xx and dead offline', async () => {
  mock.onGet('/v1/models', { body: { data: [{ id: 'm1' }, { id: 'm2' }] } });
  mock.onGet('/props', { body: { build_info: 'b', default_generation_settings: { n_ctx: 8192 }, total_slots: 2 } });
  const r = harness(mock);
  const res = await r.agent.checkConnection();
  assert.deepEqual(res, { status: 'online', detail: null, ctxMax: 4096 });
  assert.equal(r.agent.ctxMax, 4096);
  assert.deepEqual(
    r.events.filter((e) => e.startsWith('conn:')),
    ['conn:checking:', 'conn:online:'],
  );
  assert.deepEqual(await r.agent.listModels(), ['m1', 'm2']);
  mock.onGet('/v1/models', { status: 401, body: { error: { message: 'no key' } } });
  const r2 = harness(mock);
  assert.equal((await r2.agent.checkConnection()).status, 'online');
  assert.equal(r2.agent.ctxMax, 0, 'props only after a 2xx');
  mock.onGet('/v1/models', { status: 502, body: 'bad gateway' });
  assert.deepEqual(await r2.agent.checkConnection(), { status: 'offline', detail: 'HTTP 502', ctxMax: 0 });
  const dead = harness(mock, { cfg: { baseUrl: 'http://127.0.0.1:1/v1/chat/completions' } });
  const off = await dead.agent.checkConnection();
  assert.equal(off.status, 'offline');
  assert.match(off.detail!, /ECONNREFUSED/);
});

test('restoreHistory appends without onMessage and keeps the fresh system prompt; clearHistory resets', async () => {
  const r = harness(mock, { cfg: { systemPrompt: 'NEW' } });
  const before = r.events.length;
  r.agent.restoreHistory([
    { role: 'system', content: 'OLD' },
    { role: 'user', content: 'u1' },
    { role: 'assistant', content: 'a1' },
  ]);
  assert.equal(r.events.length, before);
  assert.deepEqual(
    r.agent.messages.map((m) => m.content?.slice(0, 3)),
    ['NEW', 'u1', 'a1'],
  );
  r.agent.clearHistory();
  assert.equal(r.agent.messages.length, 1);
  assert.equal(r.events.at(-1), 'message:system');
});

test('setSystemPrompt: the same text keeps the very message (a byte-identical prefix); new text replaces it and outlives clearHistory; busy is EBUSY', async () => {
  const r = harness(mock, { cfg: { systemPrompt: 'FIRST' } });
  const first = r.agent.messages[0]!;
  r.agent.setSystemPrompt('FIRST');
  assert.equal(r.agent.messages[0], first, 'unchanged: the same message object');
  mock.push(oa.text('a'), oa.text('b'));
  assert.equal((await r.agent.run('one')).status, 0);
  r.agent.setSystemPrompt('SECOND');
  assert.match(r.agent.messages[0]!.content!, /^SECOND\n\ncurrent time: /);
  assert.equal(first.content!.startsWith('FIRST'), true, 'the old message is not edited in place');
  assert.equal((await r.agent.run('two')).status, 0);
  assert.match(mock.posts.at(-2)!.json.messages[0].content, /^FIRST/);
  assert.match(mock.posts.at(-1)!.json.messages[0].content, /^SECOND/);
  assert.deepEqual(
    mock.posts
      .at(-1)!
      .json.messages.slice(1)
      .map((m: { content: string }) => m.content),
    ['one', 'a', 'two'],
  );
  r.agent.clearHistory();
  assert.match(r.agent.messages[0]!.content!, /^SECOND/);
  mock.push({ hang: true });
  r.agent.submit('three');
  assert.throws(
    () => r.agent.setSystemPrompt('THIRD'),
    (e: unknown) => e instanceof ClmError && e.code === 'EBUSY',
  );
  assert.throws(
    () => r.agent.setSystemPrompt(3 as unknown as string),
    (e: unknown) => e instanceof ClmError && e.code === 'EINVAL',
  );
  r.agent.cancel();
});

test('close during a tool call: no callbacks afterwards, late completion harmless', async () => {
  let complete: (() => void) | undefined;
  let aborted = false;
  mock.push(oa.toolCall('slow', {}));
  const r = harness(mock, {
    tools: [
      {
        name: 'slow',
        noPrompt: true,
        invoke: (inv) => {
          complete = () => inv.complete('x');
          inv.signal.addEventListener('abort', () => {
            aborted = true;
          });
        },
      },
    ],
  });
  r.agent.submit('x');
  while (!complete) await new Promise((res) => setTimeout(res, 2));
  const n = r.events.length;
  r.agent.close();
  complete();
  await new Promise((res) => setTimeout(res, 10));
  assert.equal(r.events.length, n);
  assert.ok(aborted);
  assert.throws(() => r.agent.submit('y'), ClmError);
});

test('bad config is refused with EINVAL', async () => {
  const { createAgent } = await import('../../src/core/agent.js');
  const { createNodeHost } = await import('../../src/host/node.js');
  assert.throws(
    () => createAgent({ baseUrl: 'ftp://x' }, createNodeHost({ log: null })),
    (e: unknown) => e instanceof ClmError && e.code === 'EINVAL',
  );
  assert.throws(() => createAgent({ baseUrl: 'http://x', autocompactPct: 150 }, createNodeHost({ log: null })), /autocompactPct/);
});

test('parallel tool calls run together; results are recorded in completion order', async () => {
  mock.push(
    oa.toolCalls([
      { name: 'slow', args: {}, id: 's' },
      { name: 'fast', args: {}, id: 'f' },
    ]),
    oa.text('done'),
  );
  const started: string[] = [];
  const r = harness(mock, {
    tools: [
      {
        name: 'slow',
        noPrompt: true,
        invoke: (inv) => {
          started.push('slow');
          setTimeout(() => inv.complete('slow out'), 60);
        },
      },
      {
        name: 'fast',
        noPrompt: true,
        invoke: (inv) => {
          started.push('fast');
          setTimeout(() => inv.complete('fast out'), 5);
        },
      },
    ],
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.deepEqual(started, ['slow', 'fast'], 'both dispatched before either finished');
  const tools = mock.posts[1]!.json.messages.filter((m: any) => m.role === 'tool');
  assert.deepEqual(
    tools.map((m: any) => [m.tool_call_id, m.content]),
    [
      ['f', 'fast out'],
      ['s', 'slow out'],
    ],
  );
  assert.deepEqual(
    r.events.filter((e) => e.startsWith('batch:')),
    ['batch:0/2', 'batch:1/2', 'batch:2/2'],
  );
});

test('close settles pending run(), checkConnection() and listModels()', async () => {
  mock.push({ hang: true });
  mock.onGet('/v1/models', { hang: true });
  const r = harness(mock);
  const run = r.agent.run('x');
  const conn = r.agent.checkConnection();
  const models = r.agent.listModels();
  while (mock.requests.length < 3) await new Promise((res) => setTimeout(res, 2));
  r.agent.close();
  assert.deepEqual(await run, { status: ECANCELED, text: '', error: 'agent closed' });
  assert.deepEqual(await conn, { status: 'offline', detail: 'agent closed', ctxMax: 0 });
  await assert.rejects(models, /agent closed/);
});

test('setProvider returns rate limit and max_tokens to the defaults when the new connection sets none', async () => {
  const r = harness(mock, { cfg: { rateTokensPerSec: 1, rateBurst: 1 } });
  mock.push(oa.text('a'), oa.text('b'));
  assert.equal((await r.agent.run('first')).status, 0);
  r.agent.setProvider({ baseUrl: `${mock.base}/chat/completions` });
  const from = r.states.length;
  assert.equal((await r.agent.run('second')).status, 0);
  // The old 1 token/s bucket would make this request wait in RATE_LIMITED for minutes.
  assert.deepEqual(r.states.slice(from), ['thinking', 'complete']);
});

test('the LLM token bucket makes a request wait in RATE_LIMITED, then sends it', async () => {
  mock.push(oa.text('a'), oa.text('b'));
  // Each request costs its body length / 4 (a few hundred tokens) against a burst of 50 at 500/s.
  // The bucket reads a clock running at a tenth of real time, so the pause a loaded machine puts
  // between the two runs (it would need seconds) cannot refill the bucket and hide the wait.
  const base = createNodeHost({ log: null });
  const host = { ...base, now: () => performance.now() / 10 };
  const r = harness(mock, { host, cfg: { rateTokensPerSec: 500, rateBurst: 50 } });
  assert.equal((await r.agent.run('first')).status, 0);
  assert.ok(!r.states.includes('rate_limited'), 'the bucket starts full');
  const t0 = Date.now();
  assert.equal((await r.agent.run('second')).status, 0);
  assert.ok(Date.now() - t0 >= 10, `waited ${Date.now() - t0} ms`);
  const after = r.states.slice(r.states.lastIndexOf('complete', r.states.length - 2) + 1);
  assert.deepEqual(after.slice(0, 3), ['thinking', 'rate_limited', 'thinking']);
  r.agent.close();
  base.close();
});

test('stream() yields the turn as events and ends with done', async () => {
  mock.push(oa.toolCall('t', {}, 'c1'), oa.streamText(['he', 'llo'], { usage: { prompt: 3, completion: 2 } }));
  const r = harness(mock, { cfg: { stream: true }, tools: [echoTool('t', 'out', { noPrompt: true })] });
  const seen: string[] = [];
  for await (const e of r.agent.stream('go')) {
    if (e.type === 'text') seen.push(`text:${e.text}`);
    else if (e.type === 'tool_begin' || e.type === 'tool_result') seen.push(`${e.type}:${e.name}`);
    else if (e.type === 'turn_done') seen.push(`done:${e.status}`);
  }
  assert.deepEqual(seen, ['tool_begin:t', 'tool_result:t', 'text:he', 'text:llo', 'done:0']);
  assert.ok(r.events.includes('text:he'), 'the callbacks fired too');
  // A refused submit surfaces as an error of the iteration.
  mock.push({ hang: true });
  r.agent.submit('busy');
  await assert.rejects(async () => {
    for await (const _ of r.agent.stream('x')) {
      /* nothing */
    }
  }, /turn already in progress/);
  r.agent.cancel();
});
