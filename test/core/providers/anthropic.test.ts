// Anthropic Messages adapter: request building, reply parsing, stream decoding.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicAdapter, EMPTY_RESULT, LEADING_USER, MISSING_RESULT } from '../../../src/core/providers/anthropic.js';
import type { ToolSchema } from '../../../src/core/providers/adapter.js';
import * as A from '../../fixtures/anthropic-replies.js';
import { decode, sseOf } from './stream-helpers.js';
import { readCalls, readFile, requestHelpers, toolRound as makeToolRound } from './fixtures.js';

const { opts, build } = requestHelpers(anthropicAdapter, 'claude-test');
const toolRound = makeToolRound('a', 'b');

test('adapter identity: kind and endpoint', () => {
  assert.equal(anthropicAdapter.kind, 'anthropic');
  assert.equal(anthropicAdapter.endpointPath, 'messages');
});

test('headers: x-api-key and anthropic-version, never Authorization', () => {
  const h = anthropicAdapter.headers('sk-ant-1');
  assert.equal(h['content-type'], 'application/json');
  assert.equal(h['x-api-key'], 'sk-ant-1');
  assert.equal(h['anthropic-version'], '2023-06-01');
  assert.ok(!Object.keys(h).some((k) => k.toLowerCase() === 'authorization'));
  const none = anthropicAdapter.headers('');
  assert.ok(!('x-api-key' in none));
  assert.equal(none['anthropic-version'], '2023-06-01');
});

test('request: top-level system, no system role, key order, max_tokens, stream, caching', () => {
  const body = anthropicAdapter.buildRequest(
    opts(
      [
        { role: 'system', content: 'one' },
        { role: 'system', content: 'two' },
        { role: 'user', content: 'hi' },
      ],
      { stream: true, maxTokens: 1234 },
    ),
  );
  const j = JSON.parse(body);
  assert.deepEqual(Object.keys(j), ['model', 'system', 'messages', 'max_tokens', 'stream', 'cache_control', 'tools']);
  assert.equal(j.system, 'one\n\ntwo');
  assert.deepEqual(j.messages, [{ role: 'user', content: 'hi' }]);
  assert.equal(j.max_tokens, 1234);
  assert.equal(j.stream, true);
  assert.deepEqual(j.cache_control, { type: 'ephemeral' });
  assert.ok(!j.messages.some((m: any) => m.role === 'system'));
  assert.ok(!('tool_choice' in j));
});

test('request: no system key when there is no system prompt; max_tokens falls back to 64000', () => {
  const j = build([{ role: 'user', content: 'hi' }], { maxTokens: 0 });
  assert.ok(!('system' in j));
  assert.equal(j.max_tokens, 64000);
});

test('request: tools as {name, description, input_schema} with the pre-serialised schema bytes', () => {
  const body = anthropicAdapter.buildRequest(opts([{ role: 'user', content: 'x' }]));
  assert.ok(body.includes(`"tools":[{"name":"read_file","description":"Read a file","input_schema":${readFile.parametersJson}}]`));
  const noType: ToolSchema = { name: 'odd', description: '', parameters: {}, parametersJson: '{}' };
  const j = build([{ role: 'user', content: 'x' }], { tools: [noType] });
  assert.deepEqual(j.tools, [{ name: 'odd', input_schema: { type: 'object', properties: {} } }]);
});

test('request: disable parallel tool use only when asked', () => {
  const j = build([{ role: 'user', content: 'x' }], { disableParallelToolCalls: true });
  assert.deepEqual(j.tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  const k = Object.keys(j);
  assert.equal(k[k.length - 1], 'tool_choice');
  assert.ok(!('tool_choice' in build([{ role: 'user', content: 'x' }])));
  // Without tools there is nothing to choose.
  assert.ok(!('tool_choice' in build([{ role: 'user', content: 'x' }], { tools: null, disableParallelToolCalls: true })));
});

test('request: tool_use blocks and ONE merged user message of tool_result blocks, ids paired', () => {
  const j = build(toolRound);
  assert.equal(j.messages.length, 3);
  assert.deepEqual(j.messages[1], {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'call_a', name: 'read_file', input: { path: 'a' } },
      { type: 'tool_use', id: 'call_b', name: 'read_file', input: { path: 'b' } },
    ],
  });
  assert.deepEqual(j.messages[2], {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'call_a', content: 'A!' },
      { type: 'tool_result', tool_use_id: 'call_b', content: 'B!' },
    ],
  });
});

test('request: tool_use input is {} for unparsable or non-object arguments', () => {
  const j = build([
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 'c1', name: 'read_file', args: '{"path":' },
        { id: 'c2', name: 'read_file', args: '[1,2]' },
        { id: 'c3', name: 'read_file', args: '' },
      ],
    },
    { role: 'tool', content: '1', toolCallId: 'c1' },
    { role: 'tool', content: '2', toolCallId: 'c2' },
    { role: 'tool', content: '3', toolCallId: 'c3' },
  ]);
  assert.deepEqual(
    j.messages[1].content.map((b: any) => b.input),
    [{}, {}, {}],
  );
});

test('request: results arriving in completion order still pair by id', () => {
  const j = build(makeToolRound('b', 'a'));
  assert.deepEqual(
    j.messages[2].content.map((b: any) => [b.tool_use_id, b.content]),
    [
      ['call_b', 'B!'],
      ['call_a', 'A!'],
    ],
  );
});

test('validity: first message is user, roles alternate, no empty messages', () => {
  const j = build([
    { role: 'assistant', content: 'Welcome back.' },
    { role: 'assistant', content: '' },
    { role: 'user', content: 'first' },
    { role: 'user', content: '   ' },
    { role: 'user', content: 'second' },
    { role: 'assistant', content: null },
    { role: 'assistant', content: 'answer' },
  ]);
  assert.deepEqual(j.messages, [
    { role: 'user', content: LEADING_USER },
    { role: 'assistant', content: 'Welcome back.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'first' },
        { type: 'text', text: 'second' },
      ],
    },
    { role: 'assistant', content: 'answer' },
  ]);
  // A history of only a system prompt still yields a valid request.
  assert.deepEqual(build([{ role: 'system', content: 's' }]).messages, [{ role: 'user', content: LEADING_USER }]);
});

test('validity: an empty tool output is sent as a placeholder, never as empty content', () => {
  const j = build([
    { role: 'user', content: 'go' },
    readCalls('c1', 'c2'),
    { role: 'tool', content: '', toolCallId: 'c1' },
    { role: 'tool', content: null, toolCallId: 'c2' },
  ]);
  assert.deepEqual(
    j.messages[2].content.map((b: any) => b.content),
    [EMPTY_RESULT, EMPTY_RESULT],
  );
});

test('validity: a call without a result gets a stand-in result before the conversation moves on', () => {
  const j = build([
    { role: 'user', content: 'go' },
    readCalls('c1', 'c2'),
    { role: 'tool', content: 'one', toolCallId: 'c1' },
    { role: 'user', content: 'never mind' },
  ]);
  assert.equal(j.messages.length, 3);
  assert.deepEqual(j.messages[2], {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'c1', content: 'one' },
      { type: 'tool_result', tool_use_id: 'c2', content: MISSING_RESULT, is_error: true },
      { type: 'text', text: 'never mind' },
    ],
  });
  // Trailing unanswered calls (e.g. compaction right after a cancel) are closed as well.
  const t = build([{ role: 'user', content: 'go' }, readCalls('c9')]);
  assert.deepEqual(t.messages[2], {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'c9', content: MISSING_RESULT, is_error: true }],
  });
});

test('validity: a result with no matching call is sent as text, after the tool_results', () => {
  const j = build([
    { role: 'user', content: 'go' },
    readCalls('c1'),
    { role: 'tool', content: 'stray', toolCallId: 'zzz', toolName: 'shell' },
    { role: 'tool', content: 'ok', toolCallId: 'c1' },
  ]);
  assert.deepEqual(j.messages[2].content, [
    { type: 'tool_result', tool_use_id: 'c1', content: 'ok' },
    { type: 'text', text: '[tool result from shell]\nstray' },
  ]);
});

test('validity: empty, invalid and repeated call ids become unique valid tool_use ids', () => {
  const j = build([
    { role: 'user', content: 'go' },
    readCalls('call_0'),
    { role: 'tool', content: 'r1', toolCallId: 'call_0' },
    readCalls('call_0', '', 'fc.1/x'),
    { role: 'tool', content: 'r2', toolCallId: 'call_0' },
    { role: 'tool', content: 'r3', toolCallId: '' },
    { role: 'tool', content: 'r4', toolCallId: 'fc.1/x' },
  ]);
  const uses = j.messages.filter((m: any) => m.role === 'assistant').flatMap((m: any) => m.content.map((b: any) => b.id));
  assert.equal(new Set(uses).size, uses.length);
  for (const id of uses) assert.match(id, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual(
    j.messages[2].content.map((b: any) => b.tool_use_id),
    [uses[0]],
  );
  assert.deepEqual(
    j.messages[4].content.map((b: any) => b.tool_use_id),
    uses.slice(1),
  );
  assert.deepEqual(
    j.messages[4].content.map((b: any) => b.content),
    ['r2', 'r3', 'r4'],
  );
});

test('request without tools (compaction summary): calls and results become plain text', () => {
  const j = build([...toolRound, { role: 'user', content: 'Summarize.' }], { tools: null });
  assert.ok(!('tools' in j));
  const blocks = JSON.stringify(j.messages);
  assert.ok(!blocks.includes('tool_use') && !blocks.includes('tool_result'));
  assert.deepEqual(j.messages[1], {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading.' },
      { type: 'text', text: '[tool call read_file {"path":"a"}]' },
      { type: 'text', text: '[tool call read_file {"path":"b"}]' },
    ],
  });
  assert.equal(j.messages[2].content[2].text, 'Summarize.');
  assert.equal(j.messages[2].content[0].text, '[tool result from read_file]\nA!');
});

test('byte-stable prefix: appending a turn leaves the earlier messages byte-identical', () => {
  const first = anthropicAdapter.buildRequest(opts(toolRound));
  const second = anthropicAdapter.buildRequest(
    opts([...toolRound, { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'thanks' }]),
  );
  const cut = first.indexOf(']', first.lastIndexOf('"tool_result"'));
  assert.equal(second.slice(0, cut), first.slice(0, cut));
  assert.equal(anthropicAdapter.buildRequest(opts(toolRound)), first);
});

test('reply: text, thinking, usage counting cache tokens toward the prompt', () => {
  const r = A.text('Hello', { thinking: 'hmm', usage: { input: 10, output: 5, cacheRead: 1000, cacheCreation: 200 } });
  const p = anthropicAdapter.parseReply(JSON.stringify((r as any).body));
  assert.equal(p.content, 'Hello');
  assert.equal(p.reasoning, 'hmm');
  assert.deepEqual(p.toolCalls, []);
  assert.equal(p.finishReason, 'stop');
  assert.deepEqual(p.usage, {
    promptTokens: 1210,
    completionTokens: 5,
    totalTokens: 1215,
    tokensPerSec: 0,
    cacheReadTokens: 1000,
    cacheCreationTokens: 200,
  });
});

test('reply: tool_use becomes a tool call with the printed input; stop reasons map', () => {
  const r = A.toolCall('read_file', { path: 'x' }, 'toolu_9', { text: 'Let me look.' });
  const p = anthropicAdapter.parseReply(JSON.stringify((r as any).body));
  assert.equal(p.content, 'Let me look.');
  assert.deepEqual(p.toolCalls, [{ id: 'toolu_9', name: 'read_file', args: '{"path":"x"}' }]);
  assert.equal(p.finishReason, 'tool_calls');
  const fin = (stop: string) => anthropicAdapter.parseReply(JSON.stringify((A.text('x', { stop }) as any).body)).finishReason;
  assert.equal(fin('max_tokens'), 'length');
  assert.equal(fin('stop_sequence'), 'stop');
  assert.equal(fin('refusal'), 'content_filter');
  assert.equal(fin('model_context_window_exceeded'), 'length');
  assert.equal(fin('pause_turn'), 'other');
  const noUsage = anthropicAdapter.parseReply('{"type":"message","content":[],"stop_reason":"end_turn"}');
  assert.equal(noUsage.content, null);
  assert.equal(noUsage.usage, null);
});

test('reply: an error body, an HTML page and a body without content throw clear errors', () => {
  assert.throws(
    () => anthropicAdapter.parseReply('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    /Overloaded/,
  );
  assert.throws(() => anthropicAdapter.parseReply('<!DOCTYPE html><html><body>Bad gateway</body></html>'), /not JSON.*<!DOCTYPE html>/);
  assert.throws(() => anthropicAdapter.parseReply(''), /not JSON/);
  assert.throws(() => anthropicAdapter.parseReply('{"id":"x"}'), /no content array/);
});

test('errorMessage: the message of an Anthropic error body, null otherwise', () => {
  const r = A.httpError(400, 'messages: roles must alternate');
  assert.equal(anthropicAdapter.errorMessage(JSON.stringify((r as any).body)), 'messages: roles must alternate');
  assert.equal(anthropicAdapter.errorMessage('{"type":"error","error":{"type":"rate_limit_error"}}'), 'rate_limit_error');
  assert.equal(anthropicAdapter.errorMessage('<html>502</html>'), null);
  assert.equal(anthropicAdapter.errorMessage('{"ok":true}'), null);
});

test('stream: thinking, text, ping, stop reason, usage with cache tokens, done', () => {
  const a = decode(
    anthropicAdapter.newStreamDecoder(),
    sseOf(A.streamText(['Hel', 'lo'], { thinking: ['let me ', 'think'], usage: { input: 7, output: 3, cacheRead: 50, cacheCreation: 5 } })),
  );
  assert.equal(a.text, 'Hello');
  assert.equal(a.reasoning, 'let me think');
  assert.deepEqual(a.calls, []);
  assert.equal(a.finishReason, 'stop');
  assert.deepEqual(a.usage, {
    promptTokens: 62,
    completionTokens: 3,
    totalTokens: 65,
    tokensPerSec: 0,
    cacheReadTokens: 50,
    cacheCreationTokens: 5,
  });
  assert.equal(a.done, true);
  assert.equal(a.error, undefined);
  // Only message_delta reports usage (message_start's output count is a placeholder).
  assert.equal(a.deltas.filter((d) => d.usage).length, 1);
});

test('stream: tool_use id/name at its block index, input JSON assembled from fragments', () => {
  const args = '{"path":"src/some/long/file.ts"}';
  const a = decode(
    anthropicAdapter.newStreamDecoder(),
    sseOf(A.streamToolCall('read_file', args, 'toolu_7', { text: 'Looking.', usage: { input: 3, output: 9 } })),
  );
  assert.equal(a.text, 'Looking.');
  assert.deepEqual(a.calls, [{ index: 1, id: 'toolu_7', name: 'read_file', args }]);
  assert.equal(a.finishReason, 'tool_calls');
  assert.equal(a.usage?.completionTokens, 9);
  assert.equal(a.done, true);
});

test('stream: an error event ends the turn with its message', () => {
  const a = decode(anthropicAdapter.newStreamDecoder(), sseOf(A.errorEvent('Overloaded', { partial: 'Hal' })));
  assert.equal(a.text, 'Hal');
  assert.equal(a.error, 'Overloaded');
  assert.equal(a.done, false);
  const bare = anthropicAdapter.newStreamDecoder().feed('error', '{"type":"error","error":{"type":"api_error"}}');
  assert.deepEqual(bare, { error: 'api_error' });
});

test('stream: ping, unknown events, stop events, keep-alives and [DONE] yield nothing; data that is not an object is an error', () => {
  const d = anthropicAdapter.newStreamDecoder();
  assert.equal(d.feed('ping', '{"type":"ping"}'), null);
  assert.equal(d.feed('brand_new_event', '{"type":"brand_new_event","x":1}'), null);
  assert.equal(d.feed('content_block_stop', '{"type":"content_block_stop","index":0}'), null);
  assert.equal(
    d.feed('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}'),
    null,
  );
  assert.equal(d.feed('', ''), null);
  assert.equal(d.feed('', '[DONE]'), null);
  assert.deepEqual(d.feed('', '42'), { error: 'stream event is not a JSON object: 42' });
  // The event name is used when the data has no type.
  assert.deepEqual(d.feed('message_stop', '{}'), { done: true });
});

test('stream: data that is not JSON is a malformed stream: an error naming it (as in every dialect)', () => {
  const d = anthropicAdapter.newStreamDecoder();
  assert.deepEqual(d.feed('message_start', '{"type":"message_st'), { error: 'could not parse stream event: {"type":"message_st' });
  assert.deepEqual(d.feed('', '<html>gateway timeout</html>'), { error: 'could not parse stream event: <html>gateway timeout</html>' });
});

test('stream: message_delta with repeated input counts updates the prompt size', () => {
  const d = anthropicAdapter.newStreamDecoder();
  d.feed('message_start', JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } }));
  const out = d.feed(
    'message_delta',
    JSON.stringify({
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens' },
      usage: { input_tokens: 7, cache_read_input_tokens: 100, output_tokens: 42 },
    }),
  );
  assert.equal(out?.finishReason, 'length');
  // The later count (7, not message_start's 5) is the one that stands.
  assert.deepEqual(out?.usage, { promptTokens: 107, completionTokens: 42, totalTokens: 149, tokensPerSec: 0, cacheReadTokens: 100 });
});

test('stream: a tool_use whose input comes whole in content_block_start', () => {
  const d = anthropicAdapter.newStreamDecoder();
  const out = d.feed(
    'content_block_start',
    JSON.stringify({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'p' } },
    }),
  );
  assert.deepEqual(out, { toolCalls: [{ index: 0, id: 't1', name: 'read_file', args: '{"path":"p"}' }] });
});
