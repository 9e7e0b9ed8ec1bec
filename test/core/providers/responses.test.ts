// OpenAI Responses adapter: request building, reply parsing, stream decoding.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MISSING_OUTPUT, responsesAdapter } from '../../../src/core/providers/responses.js';
import * as R from '../../fixtures/responses-replies.js';
import { decode, sseOf } from './stream-helpers.js';
import { readCalls, readFile, requestHelpers, toolRound as makeToolRound } from './fixtures.js';

const { opts, build } = requestHelpers(responsesAdapter, 'gpt-test');
const body = (r: any) => JSON.stringify(r.body);
// The results in completion order (b finished first).
const toolRound = makeToolRound('b', 'a');

test('adapter identity: kind and endpoint', () => {
  assert.equal(responsesAdapter.kind, 'openai-responses');
  assert.equal(responsesAdapter.endpointPath, 'responses');
});

test('headers: bearer token only when a key is set', () => {
  assert.deepEqual(responsesAdapter.headers('sk-1'), { 'content-type': 'application/json', authorization: 'Bearer sk-1' });
  assert.deepEqual(responsesAdapter.headers(''), { 'content-type': 'application/json' });
});

test('request: stateless body with input items, flat non-strict tools, tool_choice auto', () => {
  const raw = responsesAdapter.buildRequest(opts(toolRound, { stream: true }));
  const j = JSON.parse(raw);
  assert.deepEqual(Object.keys(j), ['model', 'input', 'stream', 'store', 'tools', 'tool_choice']);
  assert.equal(j.stream, true);
  assert.equal(j.store, false);
  assert.ok(!('previous_response_id' in j) && !('instructions' in j));
  assert.deepEqual(j.input, [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'read a and b' },
    { role: 'assistant', content: 'Reading.' },
    { type: 'function_call', call_id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
    { type: 'function_call', call_id: 'call_b', name: 'read_file', arguments: '{"path":"b"}' },
    { type: 'function_call_output', call_id: 'call_b', output: 'B!' },
    { type: 'function_call_output', call_id: 'call_a', output: 'A!' },
  ]);
  assert.ok(
    raw.includes(
      `"tools":[{"type":"function","name":"read_file","description":"Read a file","parameters":${readFile.parametersJson},"strict":false}]`,
    ),
  );
  assert.equal(j.tool_choice, 'auto');
});

test('request: parallel_tool_calls:false only when disabling; nothing tool-related without tools', () => {
  const j = build([{ role: 'user', content: 'x' }], { disableParallelToolCalls: true });
  assert.deepEqual(Object.keys(j), ['model', 'input', 'stream', 'store', 'tools', 'parallel_tool_calls', 'tool_choice']);
  assert.equal(j.parallel_tool_calls, false);
  assert.ok(!('parallel_tool_calls' in build([{ role: 'user', content: 'x' }])));
  const none = build([{ role: 'user', content: 'x' }], { tools: null, disableParallelToolCalls: true });
  assert.deepEqual(Object.keys(none), ['model', 'input', 'stream', 'store']);
  const empty = build([{ role: 'user', content: 'x' }], { tools: [] });
  assert.ok(!('tools' in empty) && !('tool_choice' in empty));
});

test('request: a compaction request (no tools) still carries the calls and outputs', () => {
  const j = build([...toolRound, { role: 'user', content: 'Summarize.' }], { tools: null });
  assert.equal(j.input.filter((i: any) => i.type === 'function_call').length, 2);
  assert.deepEqual(j.input[j.input.length - 1], { role: 'user', content: 'Summarize.' });
});

test('validity: empty messages skipped, empty arguments sent as {}', () => {
  const j = build([
    { role: 'user', content: 'go' },
    { role: 'assistant', content: '' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'read_file', args: '' }] },
    { role: 'tool', content: null, toolCallId: 'c1' },
  ]);
  assert.deepEqual(j.input, [
    { role: 'user', content: 'go' },
    { type: 'function_call', call_id: 'c1', name: 'read_file', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: '' },
  ]);
});

test('validity: a call without output gets a stand-in; an output without call becomes user text', () => {
  const j = build([
    { role: 'user', content: 'go' },
    readCalls('c1', 'c2'),
    { role: 'tool', content: 'one', toolCallId: 'c1' },
    { role: 'tool', content: 'stray', toolCallId: 'nope', toolName: 'shell' },
    { role: 'user', content: 'stop' },
    readCalls('c3'),
  ]);
  // The block's outputs (real, then stand-ins) come first, then the unpaired one as text.
  assert.deepEqual(j.input.slice(3), [
    { type: 'function_call_output', call_id: 'c1', output: 'one' },
    { type: 'function_call_output', call_id: 'c2', output: MISSING_OUTPUT },
    { role: 'user', content: '[tool result from shell]\nstray' },
    { role: 'user', content: 'stop' },
    { type: 'function_call', call_id: 'c3', name: 'read_file', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c3', output: MISSING_OUTPUT },
  ]);
});

test('validity: empty and repeated call ids become unique, outputs follow their calls', () => {
  const j = build([
    { role: 'user', content: 'go' },
    readCalls('call_0'),
    { role: 'tool', content: 'r1', toolCallId: 'call_0' },
    readCalls('call_0', ''),
    { role: 'tool', content: 'r2', toolCallId: 'call_0' },
    { role: 'tool', content: 'r3', toolCallId: '' },
  ]);
  const calls = j.input.filter((i: any) => i.type === 'function_call').map((i: any) => i.call_id);
  const outs = j.input.filter((i: any) => i.type === 'function_call_output').map((i: any) => i.call_id);
  assert.equal(new Set(calls).size, 3);
  assert.ok(calls.every((c: string) => c !== ''));
  assert.deepEqual(outs, calls);
});

test('byte-stable prefix: appending a turn leaves the earlier input byte-identical', () => {
  const first = responsesAdapter.buildRequest(opts(toolRound));
  const second = responsesAdapter.buildRequest(
    opts([...toolRound, { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'thanks' }]),
  );
  const cut = first.indexOf('"output":"A!"}') + '"output":"A!"}'.length;
  assert.equal(second.slice(0, cut), first.slice(0, cut));
});

test('reply: message text, reasoning summaries, usage with cached tokens', () => {
  const p = responsesAdapter.parseReply(
    body(R.text('Hello', { reasoning: ['first', 'second'], usage: { input: 100, output: 20, cached: 64 } })),
  );
  assert.equal(p.content, 'Hello');
  assert.equal(p.reasoning, 'first\n\nsecond');
  assert.deepEqual(p.toolCalls, []);
  assert.equal(p.finishReason, 'stop');
  assert.deepEqual(p.usage, { promptTokens: 100, completionTokens: 20, totalTokens: 120, tokensPerSec: 0, cacheReadTokens: 64 });
});

test('reply: function_call items become tool calls (id = call_id), finish tool_calls', () => {
  const p = responsesAdapter.parseReply(
    body(
      R.toolCalls(
        [
          { name: 'read_file', args: { path: 'x' }, id: 'call_z' },
          { name: 'ls', args: '{}' },
        ],
        { text: 'Checking.' },
      ),
    ),
  );
  assert.equal(p.content, 'Checking.');
  assert.deepEqual(p.toolCalls, [
    { id: 'call_z', name: 'read_file', args: '{"path":"x"}' },
    { id: 'call_2', name: 'ls', args: '{}' },
  ]);
  assert.equal(p.finishReason, 'tool_calls');
});

test('reply: incomplete ⇒ length (or content_filter), raw reasoning text accepted', () => {
  assert.equal(
    responsesAdapter.parseReply(body(R.text('cut', { status: 'incomplete', incompleteReason: 'max_output_tokens' }))).finishReason,
    'length',
  );
  assert.equal(
    responsesAdapter.parseReply(body(R.text('', { status: 'incomplete', incompleteReason: 'content_filter' }))).finishReason,
    'content_filter',
  );
  const raw = responsesAdapter.parseReply(
    JSON.stringify({
      status: 'completed',
      output: [
        { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'thinking…' }] },
        { type: 'message', content: [{ type: 'refusal', refusal: 'No.' }] },
      ],
    }),
  );
  assert.equal(raw.reasoning, 'thinking…');
  assert.equal(raw.content, 'No.');
  assert.equal(raw.usage, null);
});

test('reply: failed and cancelled are errors with their message, not empty successes', () => {
  assert.throws(() => responsesAdapter.parseReply(body(R.failed('The model crashed', 'server_error'))), /The model crashed/);
  assert.throws(() => responsesAdapter.parseReply('{"status":"failed","error":null,"output":[]}'), /response failed/);
  assert.throws(() => responsesAdapter.parseReply('{"status":"cancelled","output":[]}'), /cancelled/);
});

test('reply: HTML, empty and shapeless bodies throw clear errors', () => {
  assert.throws(() => responsesAdapter.parseReply('<html><head><title>502 Bad Gateway</title></head></html>'), /not JSON.*502 Bad Gateway/);
  assert.throws(() => responsesAdapter.parseReply(''), /not JSON/);
  assert.throws(() => responsesAdapter.parseReply('{"error":{"message":"quota exceeded"}}'), /quota exceeded/);
  assert.throws(() => responsesAdapter.parseReply('{"id":"resp"}'), /no output array/);
});

test('errorMessage: the message of an OpenAI error body, null otherwise', () => {
  assert.equal(responsesAdapter.errorMessage(body(R.httpError(400, "Invalid value: 'foo'."))), "Invalid value: 'foo'.");
  assert.equal(responsesAdapter.errorMessage('<html>bad</html>'), null);
  assert.equal(responsesAdapter.errorMessage('{"nothing":1}'), null);
});

test('stream: reasoning summary parts, text deltas, completed ⇒ stop + usage + done', () => {
  const a = decode(
    responsesAdapter.newStreamDecoder(),
    sseOf(R.streamText(['Hel', 'lo'], { reasoning: ['plan', 'act'], usage: { input: 30, output: 4, cached: 10 } })),
  );
  assert.equal(a.text, 'Hello');
  assert.equal(a.reasoning, 'plan\n\nact');
  assert.equal(a.finishReason, 'stop');
  assert.deepEqual(a.usage, { promptTokens: 30, completionTokens: 4, totalTokens: 34, tokensPerSec: 0, cacheReadTokens: 10 });
  assert.equal(a.done, true);
  assert.deepEqual(a.calls, []);
});

test('stream: function call id/name from output_item.added, arguments from fragments', () => {
  const args = '{"path":"src/deep/file.ts"}';
  const a = decode(
    responsesAdapter.newStreamDecoder(),
    sseOf(R.streamToolCall('read_file', args, 'call_q', { text: 'On it.', usage: { input: 5, output: 6 } })),
  );
  assert.equal(a.text, 'On it.');
  // The .done events must not append the arguments a second time.
  assert.deepEqual(a.calls, [{ index: 1, id: 'call_q', name: 'read_file', args }]);
  assert.equal(a.finishReason, 'tool_calls');
  assert.equal(a.usage?.totalTokens, 11);
  assert.equal(a.done, true);
});

test('stream: arguments only in the finished item (no deltas) are still taken once', () => {
  const d = responsesAdapter.newStreamDecoder();
  const item = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'ls', arguments: '' };
  const raw = [
    `event: response.output_item.added\ndata: ${JSON.stringify({ type: 'response.output_item.added', output_index: 0, item })}\n\n`,
    `event: response.function_call_arguments.done\ndata: ${JSON.stringify({ type: 'response.function_call_arguments.done', output_index: 0, arguments: '{"a":1}' })}\n\n`,
    `event: response.output_item.done\ndata: ${JSON.stringify({ type: 'response.output_item.done', output_index: 0, item: { ...item, arguments: '{"a":1}' } })}\n\n`,
  ].join('');
  assert.deepEqual(decode(d, raw).calls, [{ index: 0, id: 'call_1', name: 'ls', args: '{"a":1}' }]);
});

test('stream: incomplete ⇒ length, done', () => {
  const a = decode(
    responsesAdapter.newStreamDecoder(),
    sseOf(R.streamText(['partial'], { incomplete: true, usage: { input: 1, output: 2 } })),
  );
  assert.equal(a.finishReason, 'length');
  assert.equal(a.done, true);
  assert.equal(a.text, 'partial');
});

test('stream: error event and response.failed end the turn with their message', () => {
  const e = decode(responsesAdapter.newStreamDecoder(), sseOf(R.errorEvent('Rate limit reached', { partial: 'Hi' })));
  assert.equal(e.text, 'Hi');
  assert.equal(e.error, 'Rate limit reached');
  const f = decode(responsesAdapter.newStreamDecoder(), sseOf(R.failedEvent('The server had an error')));
  assert.equal(f.error, 'The server had an error');
  assert.equal(f.finishReason, undefined);
  const nested = responsesAdapter.newStreamDecoder().feed('error', '{"type":"error","error":{"message":"nested"}}');
  assert.deepEqual(nested, { error: 'nested' });
  const bare = responsesAdapter
    .newStreamDecoder()
    .feed('response.failed', '{"type":"response.failed","response":{"status":"failed","error":null}}');
  assert.deepEqual(bare, { error: 'response failed' });
});

test('stream: unknown events, lifecycle events, keep-alives and [DONE] yield nothing', () => {
  const d = responsesAdapter.newStreamDecoder();
  assert.equal(d.feed('response.created', '{"type":"response.created","response":{"status":"in_progress"}}'), null);
  assert.equal(d.feed('response.web_search_call.searching', '{"type":"response.web_search_call.searching"}'), null);
  assert.equal(d.feed('response.output_text.done', '{"type":"response.output_text.done","text":"whole"}'), null);
  assert.equal(
    d.feed('response.output_item.added', '{"type":"response.output_item.added","output_index":0,"item":{"type":"message"}}'),
    null,
  );
  assert.equal(d.feed('keepalive', ''), null);
  assert.equal(d.feed('', '[DONE]'), null);
  // The event name is used when the data has no type.
  assert.deepEqual(d.feed('response.output_text.delta', '{"delta":"x"}'), { text: 'x' });
});

test('stream: data that is not JSON is a malformed stream: an error naming it (as in every dialect)', () => {
  const d = responsesAdapter.newStreamDecoder();
  assert.deepEqual(d.feed('', '{"type":"response.output_text.de'), {
    error: 'could not parse stream event: {"type":"response.output_text.de',
  });
  assert.deepEqual(d.feed('response.completed', 'not json'), { error: 'could not parse stream event: not json' });
});
