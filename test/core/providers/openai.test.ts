// OpenAI chat adapter: tool-call/result pairing repair (OpenAI rejects unpaired histories),
// byte-stable prefixes, and stream data handling shared with the other dialects.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openaiAdapter, ollamaAdapter } from '../../../src/core/providers/openai.js';
import { MISSING_RESULT } from '../../../src/core/providers/pairing.js';
import type { Message } from '../../../src/core/types.js';
import { requestHelpers } from './fixtures.js';

const { opts, build } = requestHelpers(openaiAdapter, 'm');

/** A session restored after a crash mid-batch: c2 never got its result. */
const crashCut: Message[] = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'go' },
  {
    role: 'assistant',
    content: null,
    toolCalls: [
      { id: 'c1', name: 'read_file', args: '{"path":"a"}' },
      { id: 'c2', name: 'read_file', args: '{"path":"b"}' },
    ],
  },
  { role: 'tool', content: 'A', toolCallId: 'c1', toolName: 'read_file' },
  { role: 'user', content: 'continue' },
];

test('request: a call without a result gets a stand-in tool message before the next user turn', () => {
  const j = build(crashCut);
  assert.deepEqual(j.messages.slice(2), [
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
        { id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path":"b"}' } },
      ],
    },
    { role: 'tool', content: 'A', tool_call_id: 'c1' },
    { role: 'tool', content: MISSING_RESULT, tool_call_id: 'c2' },
    { role: 'user', content: 'continue' },
  ]);
  // The same for Ollama, which shares the request builder.
  assert.equal(ollamaAdapter.buildRequest(opts(crashCut)), openaiAdapter.buildRequest(opts(crashCut)));
});

test('request: a tool message whose id matches no call is sent as user text after the results', () => {
  const j = build([
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'read_file', args: '{}' }] },
    { role: 'tool', content: 'stray', toolCallId: 'gone', toolName: 'shell' },
    { role: 'tool', content: 'ok', toolCallId: 'c1', toolName: 'read_file' },
  ]);
  assert.deepEqual(j.messages.slice(2), [
    { role: 'tool', content: 'ok', tool_call_id: 'c1' },
    { role: 'user', content: '[tool result from shell]\nstray' },
  ]);
  assert.ok(!j.messages.some((m: any) => m.role === 'tool' && m.tool_call_id === 'gone'));
});

test('request: trailing unanswered calls (compaction request after a crash) are closed', () => {
  const h: Message[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c9', name: 'read_file', args: '{}' }] },
  ];
  const j = build([...h, { role: 'user', content: 'Summarize.' }], { tools: null });
  assert.deepEqual(
    j.messages.slice(1).map((m: any) => m.role),
    ['assistant', 'tool', 'user'],
  );
  assert.equal(j.messages[2].tool_call_id, 'c9');
});

test('byte-stable prefix: well-paired and repaired histories keep their earlier bytes', () => {
  const paired: Message[] = [
    ...crashCut.slice(0, 4),
    { role: 'tool', content: 'B', toolCallId: 'c2', toolName: 'read_file' },
    crashCut[4]!,
  ];
  for (const h of [paired, crashCut]) {
    const first = openaiAdapter.buildRequest(opts(h));
    const second = openaiAdapter.buildRequest(opts([...h, { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'thanks' }]));
    const cut = first.indexOf('],"stream"');
    assert.equal(second.slice(0, cut), first.slice(0, cut));
    assert.equal(openaiAdapter.buildRequest(opts(h)), first);
  }
});

test('stream: data that is not JSON ends the turn with an error; keep-alives and [DONE] do not', () => {
  const d = openaiAdapter.newStreamDecoder();
  assert.deepEqual(d.feed('', '{broken'), { error: 'could not parse stream event: {broken' });
  assert.equal(d.feed('', ''), null);
  assert.deepEqual(d.feed('', '[DONE]'), { done: true });
  assert.deepEqual(d.feed('', '{"choices":[{"delta":{"content":"x"}}]}'), { text: 'x' });
});

test('buildRequestBytes is exactly buildRequest as UTF-8, for every flag combination and a repaired history', async () => {
  const { openaiAdapter } = await import('../../../src/core/providers/openai.js');
  const tools = [
    { name: 't', description: 'd ✓', parameters: { type: 'object', properties: {} }, parametersJson: '{"type":"object","properties":{}}' },
  ];
  const messages = [
    { role: 'system' as const, content: 'sys 🦴' },
    { role: 'user' as const, content: 'héllo' },
    {
      role: 'assistant' as const,
      content: null,
      toolCalls: [
        { id: 'a', name: 't', args: '{}' },
        { id: 'b', name: 't', args: '{bad' },
      ],
    },
    { role: 'tool' as const, content: 'out', toolCallId: 'a', toolName: 't' },
  ];
  const dec = new TextDecoder();
  for (const stream of [true, false])
    for (const disableParallelToolCalls of [true, false])
      for (const t of [tools, null]) {
        const o = { model: 'm', messages, tools: t, stream, disableParallelToolCalls, maxTokens: 100 };
        const bytes = openaiAdapter.buildRequestBytes!(o);
        assert.equal(dec.decode(bytes), openaiAdapter.buildRequest(o));
        // Cached parts are reused, never mutated: a second build is identical.
        assert.deepEqual(openaiAdapter.buildRequestBytes!(o), bytes);
      }
});

test('stream: tool-call fragments go to the call their index names, also one per chunk', () => {
  const d = openaiAdapter.newStreamDecoder();
  assert.deepEqual(
    d.feed('', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'a', function: { name: 'x', arguments: '{' } }] } }] })),
    { toolCalls: [{ index: 0, id: 'a', name: 'x', args: '{' }] },
  );
  assert.deepEqual(
    d.feed('', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 1, id: 'b', function: { name: 'y', arguments: '{}' } }] } }] })),
    { toolCalls: [{ index: 1, id: 'b', name: 'y', args: '{}' }] },
  );
  // Without an index (some servers), a fragment's place in the array is its index.
  assert.deepEqual(
    d.feed(
      '',
      JSON.stringify({ choices: [{ delta: { tool_calls: [{ function: { arguments: '}' } }, { function: { arguments: 'z' } }] } }] }),
    ),
    {
      toolCalls: [
        { index: 0, id: undefined, name: undefined, args: '}' },
        { index: 1, id: undefined, name: undefined, args: 'z' },
      ],
    },
  );
});

test('stream: an error object in the stream ends the turn with its message', () => {
  const d = openaiAdapter.newStreamDecoder();
  assert.deepEqual(d.feed('', '{"error":{"message":"model overloaded"}}'), { error: 'model overloaded' });
  assert.deepEqual(d.feed('', '{"error":{"code":500}}'), { error: 'server reported an error in the stream' });
});

test('request: malformed stored arguments are sent as {}; parallel_tool_calls only when disabled', () => {
  const h: Message[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'read_file', args: '{"path":' }] },
    { role: 'tool', content: 'x', toolCallId: 'c1' },
  ];
  assert.equal(build(h).messages[1].tool_calls[0].function.arguments, '{}');
  assert.equal(build(h, { disableParallelToolCalls: true }).parallel_tool_calls, false);
  assert.equal(build(h).parallel_tool_calls, undefined);
  assert.equal(build(h, { disableParallelToolCalls: true, tools: null }).parallel_tool_calls, undefined, 'no tools, no flag');
});

test("reply: the server's total_tokens stands; a call without an id gets call_N", () => {
  const r = openaiAdapter.parseReply(
    JSON.stringify({
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ function: { name: 'a', arguments: '{}' } }, { id: '', function: { name: 'b', arguments: {} } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 21 },
    }),
  );
  assert.deepEqual(r.toolCalls, [
    { id: 'call_1', name: 'a', args: '{}' },
    { id: 'call_2', name: 'b', args: '{}' },
  ]);
  assert.deepEqual(r.usage, { promptTokens: 10, completionTokens: 5, totalTokens: 21, tokensPerSec: 0 });
});
