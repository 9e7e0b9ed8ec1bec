// The `extra_content` of OpenAI chat replies (Gemini's thought signature), unit by unit: which
// call of a reply it came on, whole and streamed (on a call's first fragment or a later one;
// Gemini's calls without `index`), on the message or a text delta; where a
// request puts it back (that call, that message, only for the server and model that sent it, the
// string and the byte builder alike, nothing else changed); the lossless message JSON; masking
// leaves it alone; a refusal of the field is recognised; Gemini's error arrays are read.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openaiAdapter, openaiErrorMessage } from '../../../src/core/providers/openai.js';
import { refusesReasoningField } from '../../../src/core/providers/chat-parts-answers.js';
import { messageToJson, parseMessageJson, validNonSystemCopies } from '../../../src/core/message-json.js';
import { mapReasoningText, reasoningText } from '../../../src/core/reasoning.js';
import { ClmError } from '../../../src/core/errors.js';
import { encodeMessageLine, parseSessionLine } from '../../../src/session/index.js';
import type { StreamDelta } from '../../../src/core/providers/adapter.js';
import type { AssistantMessage, Message, ReasoningPart } from '../../../src/core/types.js';
import { requestHelpers } from './fixtures.js';
import * as O from '../../fixtures/openai-replies.js';

const ORIGIN = 'gemini-3-flash-preview@https://generativelanguage.googleapis.com/v1beta/openai/chat/completions';
const sig = (n: string) => ({ google: { thought_signature: `SIG-${n}==` } });
const extra = (value: unknown, call?: number, origin = ORIGIN): ReasoningPart =>
  call === undefined
    ? { dialect: 'openai', type: 'extra_content', value, origin }
    : { dialect: 'openai', type: 'extra_content', value, origin, call };

const parallel: O.CallIn[] = [
  { id: 'fc_a', name: 'read_file', args: { path: 'a' }, extra: sig('1') },
  { id: 'fc_b', name: 'read_file', args: { path: 'b' } },
];

// ---- parsing --------------------------------------------------------------------------------

test('a whole reply: the extra content of each call that has one, by its index, and the message’s own', () => {
  const parse = (reply: any, origin?: string) => openaiAdapter.parseReply(JSON.stringify(reply.body), origin);
  const r = parse(O.toolCalls(parallel, { finish: 'stop' }), ORIGIN);
  assert.deepEqual(
    r.toolCalls.map((c) => c.id),
    ['fc_a', 'fc_b'],
  );
  assert.deepEqual(r.reasoningParts, [extra(sig('1'), 0)], 'the first of parallel calls carries it; the second none');
  const later = parse(O.toolCalls([{ ...parallel[1]! }, { ...parallel[0]! }]), ORIGIN);
  assert.deepEqual(later.reasoningParts, [extra(sig('1'), 1)], 'by its place among the calls');
  assert.deepEqual(parse(O.text('Done.', { extra: sig('3') }), ORIGIN).reasoningParts, [extra(sig('3'))], 'on the message: no call');
  const both = parse(O.toolCalls(parallel, { reasoning: 'think', extra: sig('m') }), ORIGIN);
  assert.deepEqual(both.reasoningParts, [
    { dialect: 'openai', type: 'reasoning_text', field: 'reasoning_content', text: 'think', origin: ORIGIN },
    extra(sig('1'), 0),
    extra(sig('m')),
  ]);
  const odd = { anything: [1, 'two', { three: null }], vertex: { thought_signature: 'V' } };
  assert.deepEqual(
    parse(O.toolCalls([{ ...parallel[0]!, extra: odd }]), ORIGIN).reasoningParts,
    [extra(odd, 0)],
    'verbatim, whatever it holds',
  );
  assert.equal(parse(O.toolCalls(parallel)).reasoningParts, undefined, 'no origin: nowhere to carry it');
  assert.equal(parse(O.toolCalls([{ ...parallel[0]!, extra: null }]), ORIGIN).reasoningParts, undefined, 'null is none');
});

/** Feed a streamed reply through a fresh decoder: its deltas. */
function feed(reply: any, origin: string | null = ORIGIN): StreamDelta[] {
  const d = openaiAdapter.newStreamDecoder(origin ?? undefined);
  const out = (reply.sse as object[]).map((e) => d.feed('', JSON.stringify(e))).filter((x) => x !== null);
  if (reply.done) out.push(d.feed('', '[DONE]')!);
  return out;
}

/** The calls as the stream assembler makes them (by index: first id and name win, arguments join), in index order. */
function assemble(deltas: StreamDelta[]): { id: string; name: string; args: string }[] {
  const calls = new Map<number, { id: string; name: string; args: string }>();
  for (const tc of deltas.flatMap((d) => d.toolCalls ?? [])) {
    const c = calls.get(tc.index) ?? { id: '', name: '', args: '' };
    calls.set(tc.index, c);
    if (tc.id && !c.id) c.id = tc.id;
    if (tc.name && !c.name) c.name = tc.name;
    if (tc.args) c.args += tc.args;
  }
  return [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
}
const parts = (deltas: StreamDelta[]) => deltas.flatMap((d) => d.reasoningParts ?? []);

test('streamed as Gemini sends them (each call whole in a delta of its own, no index), the extra content on the first fragment or a later one', () => {
  const want = [
    { id: 'fc_a', name: 'read_file', args: '{"path":"a"}' },
    { id: 'fc_b', name: 'read_file', args: '{"path":"b"}' },
  ];
  for (const index of ['none', 'own'] as const) {
    for (const extraLate of [false, true]) {
      const deltas = feed(O.streamCalls(parallel, { index, extraLate }));
      const what = `index ${index}, extra content ${extraLate ? 'on a later fragment' : 'on the first'}`;
      assert.deepEqual(assemble(deltas), want, `${what}: two calls, not one`);
      assert.deepEqual(parts(deltas), [extra(sig('1'), 0)], `${what}: on the first call`);
    }
  }
  // The second call is the one with the signature, its signature on a fragment of its own.
  const second = feed(O.streamCalls([parallel[1]!, parallel[0]!], { index: 'none', extraLate: true }));
  assert.deepEqual(parts(second), [extra(sig('1'), 1)]);
  assert.ok(second.find((d) => d.reasoningParts)!.finishReason, 'kept with the finish');
  assert.ok(
    feed(O.streamCalls(parallel), null).every((d) => !d.reasoningParts),
    'no origin: none kept',
  );
});

test('streamed: arguments split over fragments without index or id stay with their call; OpenAI’s indexed fragments, and fragments that each have an id of their own, are unchanged', () => {
  const chunk = (tc: object) => ({ choices: [{ index: 0, delta: { tool_calls: [tc] } }] });
  const split = {
    sse: [
      chunk({ id: 'fc_a', type: 'function', function: { name: 'read_file', arguments: '{"pa' } }),
      chunk({ function: { arguments: 'th":"a"}' } }),
      chunk({ extra_content: sig('1') }),
      chunk({ id: 'fc_b', type: 'function', function: { name: 'read_file', arguments: '{"path"' } }),
      chunk({ function: { arguments: ':"b"}' } }),
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ],
    done: true,
  };
  let deltas = feed(split);
  assert.deepEqual(assemble(deltas), [
    { id: 'fc_a', name: 'read_file', args: '{"path":"a"}' },
    { id: 'fc_b', name: 'read_file', args: '{"path":"b"}' },
  ]);
  assert.deepEqual(parts(deltas), [extra(sig('1'), 0)]);
  // Several calls in one delta, without index: one each, in their order (as before).
  deltas = feed({
    sse: [
      {
        choices: [
          {
            delta: {
              tool_calls: [
                { function: { name: 'a', arguments: '{}' } },
                { function: { name: 'b', arguments: '{}' }, extra_content: sig('b') },
              ],
            },
          },
        ],
      },
    ],
    done: true,
  });
  assert.deepEqual(
    assemble(deltas).map((c) => c.name),
    ['a', 'b'],
  );
  assert.deepEqual(parts(deltas), [extra(sig('b'), 1)]);
  // OpenAI: indexed fragments, the id on the first only.
  deltas = feed({
    sse: [
      chunk({ index: 0, id: 'call_1', function: { name: 'a', arguments: '' } }),
      chunk({ index: 1, id: 'call_2', function: { name: 'b', arguments: '' } }),
      chunk({ index: 0, function: { arguments: '{"x":' } }),
      chunk({ index: 1, function: { arguments: '{}' } }),
      chunk({ index: 0, function: { arguments: '1}' } }),
    ],
    done: true,
  });
  assert.deepEqual(assemble(deltas), [
    { id: 'call_1', name: 'a', args: '{"x":1}' },
    { id: 'call_2', name: 'b', args: '{}' },
  ]);
  assert.deepEqual(
    deltas.flatMap((d) => d.toolCalls ?? []).map((c) => c.index),
    [0, 1, 0, 1, 0],
  );
  assert.deepEqual(parts(deltas), []);
  // Indexed fragments out of order: the calls in index order, the extra content on its call.
  deltas = feed({
    sse: [
      chunk({ index: 1, id: 'call_2', function: { name: 'b', arguments: '{}' }, extra_content: sig('b') }),
      chunk({ index: 0, id: 'call_1', function: { name: 'a', arguments: '{}' } }),
    ],
    done: true,
  });
  assert.deepEqual(
    assemble(deltas).map((c) => c.id),
    ['call_1', 'call_2'],
  );
  assert.deepEqual(parts(deltas), [extra(sig('b'), 1)]);
  // An indexed fragment under another id and name is still its index's call (the first id stays).
  deltas = feed({
    sse: [
      chunk({ index: 0, id: 'call_1', function: { name: 'a', arguments: '{"x":' } }),
      chunk({ index: 0, id: 'call_9', function: { name: 'z', arguments: '1}' } }),
    ],
    done: true,
  });
  assert.deepEqual(assemble(deltas), [{ id: 'call_1', name: 'a', args: '{"x":1}' }]);
  // A server that stamps every fragment with an id of its own: the name comes once, so does the call.
  deltas = feed({
    sse: [chunk({ id: 'chunk-1', function: { name: 'a', arguments: '{"x"' } }), chunk({ id: 'chunk-2', function: { arguments: ':1}' } })],
    done: true,
  });
  assert.deepEqual(assemble(deltas), [{ id: 'chunk-1', name: 'a', args: '{"x":1}' }]);
});

test('streamed text: the message’s extra content from the delta it came on, first or last', () => {
  for (const extraLast of [false, true]) {
    const deltas = feed(O.streamText(['All ', 'done.'], { extra: sig('3'), extraLast }));
    assert.equal(deltas.map((d) => d.text ?? '').join(''), 'All done.');
    assert.deepEqual(parts(deltas), [extra(sig('3'))], extraLast ? 'on a last delta of its own' : 'on the first text delta');
  }
  const d = openaiAdapter.newStreamDecoder(ORIGIN);
  d.feed('', JSON.stringify({ choices: [{ delta: { content: 'x', extra_content: sig('old') } }] }));
  d.feed('', JSON.stringify({ choices: [{ delta: { extra_content: sig('new') } }] }));
  assert.deepEqual(
    d.feed('', '[DONE]'),
    { done: true, reasoningParts: [extra(sig('new'))] },
    'the latest, with [DONE] when no finish came',
  );
});

// ---- building -------------------------------------------------------------------------------

const chat = requestHelpers(openaiAdapter, 'gemini-3-flash-preview');
const dec = new TextDecoder();
/** The request body from the string and the byte builder (asserted equal). */
function body(h: Message[], origin?: string): string {
  const o = chat.opts(h, origin === undefined ? {} : { origin });
  const s = openaiAdapter.buildRequest(o);
  assert.equal(dec.decode(openaiAdapter.buildRequestBytes!(o)), s);
  return s;
}
const call = (id: string, path: string) => ({ id, name: 'read_file', args: JSON.stringify({ path }) });
const result = (id: string): Message => ({ role: 'tool', content: 'X', toolCallId: id, toolName: 'read_file' });
function history(reasoning: ReasoningPart[], ids = ['fc_a', 'fc_b']): Message[] {
  return [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, toolCalls: ids.map((id, i) => call(id, 'ab'[i]!)), reasoning },
    ...ids.map(result),
    { role: 'assistant', content: 'Done.', reasoning: [extra(sig('3'))] },
    { role: 'user', content: 'thanks' },
  ];
}

test('a request carries each extra content back verbatim on its own call and the message’s on the message, only to the server and model that sent it', () => {
  const h = history([extra(sig('1'), 0)]);
  const plain = body(history([]).map((m) => (m.role === 'assistant' ? { ...m, reasoning: undefined } : m)));
  assert.equal(body(h), plain, 'no origin: none goes back');
  assert.equal(
    body(h, 'gemini-3-pro-preview@https://generativelanguage.googleapis.com/v1beta/openai/chat/completions'),
    plain,
    'another model: none',
  );
  const carried = body(h, ORIGIN);
  assert.ok(
    carried.includes(
      '"tool_calls":[{"id":"fc_a","type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"a\\"}"},"extra_content":{"google":{"thought_signature":"SIG-1=="}}},{"id":"fc_b","type":"function"',
    ),
    carried,
  );
  assert.ok(carried.includes('{"role":"assistant","content":"Done.","extra_content":{"google":{"thought_signature":"SIG-3=="}}}'), carried);
  assert.equal(
    carried
      .replace(',"extra_content":{"google":{"thought_signature":"SIG-1=="}}', '')
      .replace(',"extra_content":{"google":{"thought_signature":"SIG-3=="}}', ''),
    plain,
    'nothing else changes',
  );
  assert.equal(body(h), plain, 'the cached form for one origin does not serve another');
  assert.equal(body(h, ORIGIN), carried);
  const j = JSON.parse(body(history([extra(sig('2'), 1), extra({ keep: [1, 2.5, 'x', null, true] }, 0)]), ORIGIN));
  assert.deepEqual(
    j.messages[1].tool_calls.map((c: any) => c.extra_content),
    [{ keep: [1, 2.5, 'x', null, true] }, sig('2')],
  );
  const other = JSON.parse(body(history([extra(sig('1'), 0, 'm@http://other')]), ORIGIN));
  assert.equal(other.messages[1].tool_calls[0].extra_content, undefined, "another origin's part stays out");
});

test('calls with repeated or missing ids (renamed for the wire) keep their own extra content', () => {
  // Vertex's compat layer has been seen naming every call after its function.
  const h = history([extra(sig('1'), 0), extra(sig('x'), 1)], ['read_file', 'read_file']);
  const j = JSON.parse(body(h, ORIGIN));
  assert.deepEqual(
    j.messages[1].tool_calls.map((c: any) => [c.id, c.extra_content]),
    [
      ['read_file', sig('1')],
      ['read_file_2', sig('x')],
    ],
  );
  const none = JSON.parse(body(history([extra(sig('1'), 1)], ['', '']), ORIGIN));
  assert.deepEqual(
    none.messages[1].tool_calls.map((c: any) => c.extra_content),
    [undefined, sig('1')],
  );
});

// ---- the message model ----------------------------------------------------------------------

test('message JSON keeps extra content losslessly; a malformed one is EINVAL naming its field', () => {
  const m: AssistantMessage = {
    role: 'assistant',
    content: null,
    toolCalls: [call('fc_a', 'a'), call('fc_b', 'b')],
    reasoning: [extra(sig('1'), 0), extra({ n: [1, { deep: 'x' }] }), extra(sig('2'), 1)],
  };
  const j = messageToJson(m);
  assert.deepEqual(Object.keys(j.reasoning![0]!), ['dialect', 'type', 'value', 'origin', 'call']);
  assert.deepEqual(j.reasoning![1], { dialect: 'openai', type: 'extra_content', value: { n: [1, { deep: 'x' }] }, origin: ORIGIN });
  const back = parseMessageJson(JSON.parse(JSON.stringify(j)));
  assert.deepEqual(back, m);
  assert.deepEqual(validNonSystemCopies([m]), [m]);
  assert.deepEqual(parseSessionLine(encodeMessageLine(m)), { kind: 'msg', message: m });
  const copy = validNonSystemCopies([m])[0] as AssistantMessage;
  assert.notEqual(
    (copy.reasoning![0] as { value: unknown }).value,
    (m.reasoning![0] as { value: unknown }).value,
    'the copy owns its value',
  );

  const einval = (part: object, msg: RegExp) =>
    assert.throws(
      () => parseMessageJson({ ...j, reasoning: [part] }),
      (e: unknown) => e instanceof ClmError && e.code === 'EINVAL' && msg.test(e.message),
    );
  const ok = j.reasoning![0]!;
  einval({ ...ok, value: undefined }, /^reasoning extra_content value is not a JSON value$/);
  einval({ ...ok, value: null }, /^reasoning extra_content value is not a JSON value$/);
  einval({ ...ok, origin: '' }, /^reasoning extra_content origin is not a non-empty string$/);
  einval({ ...ok, origin: 5 }, /^reasoning extra_content origin is not a non-empty string$/);
  for (const c of [2, -1, 0.5, '0'])
    einval({ ...ok, call: c }, /^reasoning extra_content call is not the index of one of the message's tool calls$/);
  assert.throws(
    () => parseMessageJson({ role: 'assistant', content: 'x', reasoning: [ok] }),
    /call is not the index of one of the message's tool calls/,
    'a message without calls has none to name',
  );
  assert.deepEqual(parseMessageJson({ role: 'assistant', content: 'x', reasoning: [{ ...ok, call: undefined }] }), {
    role: 'assistant',
    content: 'x',
    reasoning: [extra(sig('1'))],
  });
  assert.throws(
    () => validNonSystemCopies([{ ...m, reasoning: [extra(10n, 0)] }]),
    (e: unknown) => e instanceof ClmError && e.code === 'EINVAL' && /^invalid message in history: /.test(e.message),
    'a value that is not JSON',
  );
});

test('extra content is no text: nothing to read, and masking leaves it as it is', () => {
  const p = extra({ google: { thought_signature: 'sk-live-secret-1' } }, 0);
  assert.equal(reasoningText(p), '');
  assert.equal(
    mapReasoningText(p, (t) => t.replaceAll('sk-live-secret-1', '[REDACTED]')),
    p,
  );
});

test('a refusal of extra_content is recognised; Gemini asking for the signature is not one; its error arrays are read', () => {
  assert.ok(
    refusesReasoningField(`Invalid JSON payload received. Unknown name "extra_content" at 'messages[1].tool_calls[0]': Cannot find field.`),
  );
  assert.ok(refusesReasoningField("Additional properties are not allowed ('extra_content' was unexpected) - 'messages.1.tool_calls.0'"));
  const missing =
    'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:read_file` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.';
  assert.ok(!refusesReasoningField(missing));
  const geminiBody = JSON.stringify([{ error: { code: 400, message: missing, status: 'INVALID_ARGUMENT' } }]);
  assert.equal(openaiErrorMessage(geminiBody), missing);
  const state = { reasoningRefused: false, foreignRoundsAsText: false };
  assert.equal(
    openaiAdapter.resend!(400, geminiBody, 'HTTP 400', [], { kind: 'openai', origin: 'm@u' }, state),
    null,
    'nothing to drop or write',
  );
  assert.deepEqual(state, { reasoningRefused: false, foreignRoundsAsText: false });
  assert.equal(openaiErrorMessage(JSON.stringify({ error: { message: 'plain' } })), 'plain');
});
