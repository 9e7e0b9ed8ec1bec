// Fuzzing each dialect's stream decoder and the request path that assembles its deltas:
// - any event name and data (text, any JSON, JSON shaped like the dialect's own events with
//   fields of the wrong types) never throws, and every delta has the documented shape;
// - a streamed reply of any text and any tool-call arguments, cut into any chunks, comes out of
//   LlmCall exactly as it went in (through the SSE reader, the decoder and the assembler).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openaiAdapter } from '../../src/core/providers/openai.js';
import { anthropicAdapter } from '../../src/core/providers/anthropic.js';
import { responsesAdapter } from '../../src/core/providers/responses.js';
import type { ParsedReply, ProviderAdapter, StreamDelta } from '../../src/core/providers/adapter.js';
import type { Usage } from '../../src/core/types.js';
import { LlmCall, type LlmFailure } from '../../src/core/llm-call.js';
import * as oa from '../fixtures/openai-replies.js';
import * as an from '../fixtures/anthropic-replies.js';
import * as rs from '../fixtures/responses-replies.js';
import type { Reply } from '../fixtures/mock-llm.js';
import { scriptedHost } from '../fixtures/scripted-host.js';
import { anyText, check, checkAsync, cutAt, fc } from '../fixtures/fuzz.js';

const ADAPTERS: ProviderAdapter[] = [openaiAdapter, anthropicAdapter, responsesAdapter];
const FINISH = new Set(['stop', 'length', 'tool_calls', 'content_filter', 'other']);

/** The documented shape of a delta: only known fields, each of its type. */
function assertDelta(d: StreamDelta | null): void {
  if (d === null) return;
  assert.equal(typeof d, 'object');
  for (const k of Object.keys(d))
    assert.ok(['text', 'reasoning', 'toolCalls', 'finishReason', 'usage', 'error', 'done'].includes(k), `unknown field ${k}`);
  for (const k of ['text', 'reasoning', 'error'] as const) if (d[k] !== undefined) assert.equal(typeof d[k], 'string', k);
  if (d.done !== undefined) assert.equal(typeof d.done, 'boolean');
  if (d.finishReason !== undefined) assert.ok(FINISH.has(d.finishReason), d.finishReason);
  if (d.usage !== undefined) assertUsage(d.usage);
  for (const c of d.toolCalls ?? []) {
    assert.ok(Number.isSafeInteger(c.index) && c.index >= 0, `index ${c.index}`);
    for (const k of ['id', 'name', 'args'] as const) if (c[k] !== undefined) assert.equal(typeof c[k], 'string', k);
  }
}

/** Token counts are whole, non-negative and finite whatever the server sent (they drive compaction). */
function assertUsage(u: Usage): void {
  for (const k of ['promptTokens', 'completionTokens', 'totalTokens', 'cacheReadTokens', 'cacheCreationTokens'] as const) {
    const v = u[k];
    if (v !== undefined) assert.ok(Number.isSafeInteger(v) && v >= 0, `usage.${k} = ${v}`);
  }
  assert.ok(Number.isFinite(u.tokensPerSec) && u.tokensPerSec >= 0, `usage.tokensPerSec = ${u.tokensPerSec}`);
}

// Event types and field names the dialects know, so generated objects reach their branches.
const TYPES = [
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
  'response.reasoning_summary_part.added',
  'response.output_item.added',
  'response.output_item.done',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.completed',
  'response.incomplete',
  'response.failed',
  'response.created',
];
const KEYS = [
  'type',
  'choices',
  'delta',
  'message',
  'content',
  'reasoning',
  'reasoning_content',
  'tool_calls',
  'index',
  'id',
  'function',
  'name',
  'arguments',
  'finish_reason',
  'usage',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'timings',
  'predicted_per_second',
  'error',
  'text',
  'thinking',
  'content_block',
  'input',
  'partial_json',
  'stop_reason',
  'input_tokens',
  'output_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
  'item',
  'output_index',
  'summary_index',
  'call_id',
  'response',
  'output',
  'status',
  'incomplete_details',
  'reason',
  'code',
  'text_delta',
  'thinking_delta',
  'input_json_delta',
  'tool_use',
  'function_call',
  'output_text',
];
const leaf = fc.oneof(
  fc.constantFrom(...TYPES, ...KEYS),
  anyText(12),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(-1, 0, 1, 1.5, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308),
);
const { shaped } = fc.letrec<{ shaped: unknown }>((tie) => ({
  shaped: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('shaped'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('shaped'), { maxKeys: 5 }),
  ),
}));
const eventData = fc.oneof(
  anyText(60),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  shaped.map((v) => JSON.stringify(v) ?? 'null'),
  fc
    .record({ type: fc.constantFrom(...TYPES) }, { requiredKeys: [] })
    .chain((head) => fc.dictionary(fc.constantFrom(...KEYS), shaped, { maxKeys: 4 }).map((rest) => JSON.stringify({ ...rest, ...head }))),
  fc.constantFrom('[DONE]', '', ' ', '{}', '[]', 'null', '{"choices":[{}]}', '{"choices":null}', '{"type":"error"}'),
);

// Numbers a server may put where counts and indices belong.
const wildNum = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 1.5, 2 ** 53, 1e308, -1e308, '12', '', null, true));
const usageObj = fc
  .dictionary(
    fc.constantFrom(
      'prompt_tokens',
      'completion_tokens',
      'total_tokens',
      'input_tokens',
      'output_tokens',
      'cache_read_input_tokens',
      'cache_creation_input_tokens',
    ),
    wildNum,
    { maxKeys: 7 },
  )
  .chain((u) => fc.record({ cached_tokens: wildNum }).map((d) => ({ ...u, input_tokens_details: d })));
/** Events of each dialect's real types carrying wild counts and indices. */
const wildEvents: Record<string, fc.Arbitrary<string>> = {
  openai: fc
    .oneof(
      fc.record({ usage: usageObj, timings: fc.record({ predicted_per_second: wildNum }) }).map((o) => ({ choices: [], ...o })),
      fc.record({ index: wildNum, args: anyText(8) }).map(({ index, args }) => ({
        choices: [{ delta: { tool_calls: [{ index, id: 'c', function: { name: 'n', arguments: args } }] } }],
      })),
    )
    .map((o) => JSON.stringify(o)),
  anthropic: fc
    .oneof(
      usageObj.map((usage) => ({ type: 'message_start', message: { usage } })),
      usageObj.map((usage) => ({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage })),
      wildNum.map((index) => ({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: 't', name: 'n', input: {} } })),
      wildNum.map((index) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '{}' } })),
    )
    .map((o) => JSON.stringify(o)),
  'openai-responses': fc
    .oneof(
      usageObj.map((usage) => ({ type: 'response.completed', response: { usage } })),
      usageObj.map((usage) => ({ type: 'response.incomplete', response: { usage } })),
      wildNum.map((output_index) => ({
        type: 'response.output_item.added',
        output_index,
        item: { type: 'function_call', call_id: 'c', name: 'n' },
      })),
      wildNum.map((output_index) => ({ type: 'response.function_call_arguments.delta', output_index, delta: 'x' })),
    )
    .map((o) => JSON.stringify(o)),
};
const wildBodies: Record<string, fc.Arbitrary<string>> = {
  openai: usageObj.map((usage) =>
    JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }], usage }),
  ),
  anthropic: usageObj.map((usage) =>
    JSON.stringify({ type: 'message', content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', usage }),
  ),
  'openai-responses': usageObj.map((usage) => JSON.stringify({ status: 'completed', output: [], usage })),
};

for (const adapter of ADAPTERS) {
  test(`${adapter.kind}: wild counts and indices in its own events and replies come out whole, non-negative and finite`, () => {
    check(300, fc.array(wildEvents[adapter.kind]!, { minLength: 1, maxLength: 6 }), (events) => {
      const d = adapter.newStreamDecoder();
      for (const e of events) assertDelta(d.feed('', e));
    });
    check(200, wildBodies[adapter.kind]!, (body) => {
      const r = adapter.parseReply(body);
      if (r.usage) assertUsage(r.usage);
    });
  });
}

for (const adapter of ADAPTERS) {
  test(`${adapter.kind} decoder: any event sequence never throws; every delta has the documented shape`, () => {
    check(
      300,
      fc.array(fc.record({ event: fc.oneof(fc.constantFrom(...TYPES, ''), anyText(10)), data: eventData }), {
        minLength: 1,
        maxLength: 12,
      }),
      (events) => {
        const d = adapter.newStreamDecoder();
        for (const e of events) assertDelta(d.feed(e.event, e.data));
      },
    );
  });

  test(`${adapter.kind}: parseReply and errorMessage on any body: a reply or an Error, never another throw`, () => {
    check(300, eventData, (body) => {
      try {
        const r = adapter.parseReply(body);
        assert.ok(r.content === null || typeof r.content === 'string');
        assert.ok(Array.isArray(r.toolCalls));
        for (const c of r.toolCalls) for (const k of ['id', 'name', 'args'] as const) assert.equal(typeof c[k], 'string', k);
        if (r.usage) assertUsage(r.usage);
      } catch (e) {
        assert.ok(
          e instanceof Error && !(e instanceof TypeError) && !(e instanceof RangeError),
          `${(e as Error).name}: ${(e as Error).message}`,
        );
        assert.ok((e as Error).message.length > 0);
      }
      const m = adapter.errorMessage(body);
      assert.ok(m === null || typeof m === 'string');
    });
  });
}

/** A reply fixture as the SSE bytes a server would send. */
function sseBytes(reply: Reply): Uint8Array {
  if (!('sse' in reply)) throw new Error('not a streamed reply');
  const text =
    reply.sse.map((e) => (typeof e === 'string' ? e : `data: ${JSON.stringify(e)}\n\n`)).join('') +
    ('done' in reply && reply.done ? 'data: [DONE]\n\n' : '');
  return new TextEncoder().encode(text);
}

function request(adapter: ProviderAdapter, chunks: Uint8Array[]): Promise<{ reply?: ParsedReply; fail?: LlmFailure; text: string }> {
  const host = scriptedHost([{ chunks }]);
  let text = '';
  return new Promise((resolve) => {
    new LlmCall({
      host,
      adapter,
      url: 'http://x/',
      headers: {},
      body: '{}',
      stream: true,
      maxTries: 1,
      retryBaseMs: 1,
      onText: (t) => {
        text += t;
      },
      onDone: (reply) => resolve({ reply, text }),
      onFail: (fail) => resolve({ fail, text }),
    }).start();
  });
}

const textParts = fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 6 });
const cuts = fc.array(fc.nat(), { maxLength: 10 });
const builders = {
  openai: { text: (p: string[]) => oa.streamText(p), call: (n: string, a: string, id: string) => oa.streamToolCall(n, a, id) },
  anthropic: { text: (p: string[]) => an.streamText(p), call: (n: string, a: string, id: string) => an.streamToolCall(n, a, id) },
  'openai-responses': { text: (p: string[]) => rs.streamText(p), call: (n: string, a: string, id: string) => rs.streamToolCall(n, a, id) },
};

for (const adapter of ADAPTERS) {
  const b = builders[adapter.kind as keyof typeof builders];

  test(`${adapter.kind}: a streamed text reply cut into any chunks arrives whole and in order`, async () => {
    await checkAsync(150, fc.record({ parts: textParts, cuts }), async ({ parts, cuts: at }) => {
      const r = await request(adapter, cutAt(sseBytes(b.text(parts)), at));
      assert.equal(r.fail, undefined, r.fail?.message);
      const whole = parts.join('');
      assert.equal(r.text, whole);
      assert.equal(r.reply!.content ?? '', whole);
      assert.equal(r.reply!.finishReason, 'stop');
    });
  });

  test(`${adapter.kind}: a streamed tool call with any arguments, cut into any chunks, keeps its name, id and arguments`, async () => {
    const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/);
    await checkAsync(
      150,
      fc.record({
        name: fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/),
        id,
        args: fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string({ unit: 'grapheme', maxLength: 30 }),
        ),
        cuts,
      }),
      async ({ name, id: callId, args, cuts: at }) => {
        const r = await request(adapter, cutAt(sseBytes(b.call(name, args, callId)), at));
        assert.equal(r.fail, undefined, r.fail?.message);
        assert.deepEqual(r.reply!.toolCalls, [{ id: callId, name, args: args || '{}' }]);
        assert.equal(r.reply!.finishReason, 'tool_calls');
      },
    );
  });

  test(`${adapter.kind}: any bytes as a stream end the request with a reply or a clear failure, never a throw`, async () => {
    await checkAsync(
      150,
      fc.record({
        data: fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          eventData.map((d) => new TextEncoder().encode(`data: ${d}\n\n`)),
        ),
        cuts,
      }),
      async ({ data, cuts: at }) => {
        const r = await request(adapter, cutAt(data, at));
        if (r.fail) assert.ok(r.fail.message.length > 0);
        else assert.ok(Array.isArray(r.reply!.toolCalls));
      },
    );
  });
}
