// Reasoning parts and efforts, unit by unit: each dialect's effort parameter (and Anthropic's
// max_tokens), which replies yield parts to carry back and which only show, where parts go in a
// request, the lossless message JSON and session line, dropping foreign parts, and the settings
// from config.lua, the flag and AgentConfig.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicAdapter, AnthropicStreamDecoder, THINKING_BUDGET } from '../../../src/core/providers/anthropic.js';
import { responsesAdapter, ResponsesStreamDecoder } from '../../../src/core/providers/responses.js';
import { ollamaAdapter, openaiAdapter } from '../../../src/core/providers/openai.js';
import { refusesReasoningField } from '../../../src/core/providers/chat-parts-answers.js';
import { messageToJson, parseMessageJson, validNonSystemCopies } from '../../../src/core/message-json.js';
import {
  dropForeignReasoning,
  foreignness,
  mapReasoningText,
  reasoningOrigin,
  reasoningText,
  withoutReasoning,
} from '../../../src/core/reasoning.js';
import { validateConfig } from '../../../src/core/connection.js';
import { ClmError } from '../../../src/core/errors.js';
import { encodeMessageLine, parseSessionLine } from '../../../src/session/index.js';
import { ConfigError, loadConfig, resolveConnection, validateValues } from '../../../src/config/index.js';
import { parseCommandLine, UsageError } from '../../../src/cli/args.js';
import type { AssistantMessage, Message, ReasoningPart } from '../../../src/core/types.js';
import { requestHelpers } from './fixtures.js';
import { tempFor } from '../../config/helpers.js';
import * as A from '../../fixtures/anthropic-replies.js';
import * as R from '../../fixtures/responses-replies.js';
import * as O from '../../fixtures/openai-replies.js';

const thinking = (n: string, beforeCall?: number): ReasoningPart => ({
  dialect: 'anthropic',
  type: 'thinking',
  thinking: `t${n}`,
  signature: `s${n}`,
  ...(beforeCall ? { beforeCall } : {}),
});
const redacted = (d: string): ReasoningPart => ({ dialect: 'anthropic', type: 'redacted_thinking', data: d });
const item = (n: string, beforeCall?: number): ReasoningPart => ({
  dialect: 'openai-responses',
  type: 'reasoning',
  item: { id: `rs_${n}`, type: 'reasoning', summary: [{ type: 'summary_text', text: `sum ${n}` }], encrypted_content: `E${n}` },
  ...(beforeCall ? { beforeCall } : {}),
});

const ORIGIN = 'deepseek-v4-pro@https://api.deepseek.com/chat/completions';
const text = (t: string, field: 'reasoning_content' | 'reasoning' = 'reasoning_content', origin = ORIGIN): ReasoningPart => ({
  dialect: 'openai',
  type: 'reasoning_text',
  field,
  text: t,
  origin,
});

const call = (id: string) => ({ id, name: 'read_file', args: '{"path":"x"}' });
const result = (id: string): Message => ({ role: 'tool', content: 'X', toolCallId: id, toolName: 'read_file' });

/** user, an assistant message (text + calls + reasoning), its results. */
function loop(reasoning: ReasoningPart[], calls = ['c1'], content: string | null = 'Reading.'): Message[] {
  return [{ role: 'user', content: 'go' }, { role: 'assistant', content, toolCalls: calls.map(call), reasoning }, ...calls.map(result)];
}

/** The body of a streamed reply fed through a decoder, as the stream assembler sees it. */
function decode(decoder: { feed(e: string, d: string): any }, reply: any): any[] {
  const out: any[] = [];
  for (const chunk of reply.sse as string[]) {
    const ev = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
    const data = /^data: (.*)$/m.exec(chunk)?.[1] ?? '';
    const d = decoder.feed(ev, data);
    if (d) out.push(d);
  }
  return out;
}

// ---- Anthropic ------------------------------------------------------------------------------

const ant = requestHelpers(anthropicAdapter, 'claude');

test('anthropic: an effort asks for thinking with its budget; max_tokens grows by the budget when it would not fit', () => {
  const msgs: Message[] = [{ role: 'user', content: 'hi' }];
  assert.equal(ant.build(msgs).thinking, undefined);
  for (const effort of ['low', 'medium', 'high'] as const) {
    const b = ant.build(msgs, { reasoningEffort: effort });
    assert.deepEqual(b.thinking, { type: 'enabled', budget_tokens: THINKING_BUDGET[effort] });
    assert.equal(b.max_tokens, 64000, 'the default leaves room for every budget');
  }
  assert.equal(ant.build(msgs, { reasoningEffort: 'high', maxTokens: 8000 }).max_tokens, 8000 + THINKING_BUDGET.high);
  assert.equal(
    ant.build(msgs, { reasoningEffort: 'low', maxTokens: 4000 }).max_tokens,
    8000,
    'a budget equal to max_tokens does not fit either',
  );
  assert.ok(THINKING_BUDGET.low >= 1024, 'the API minimum');
});

test('anthropic: a tool loop whose last assistant turn started without thinking goes on without it', () => {
  const plain: Message[] = [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, toolCalls: [call('c1')] }, result('c1')];
  assert.equal(ant.build(plain, { reasoningEffort: 'medium' }).thinking, undefined);
  assert.deepEqual(ant.build(loop([thinking('1')]), { reasoningEffort: 'medium' }).thinking, {
    type: 'enabled',
    budget_tokens: THINKING_BUDGET.medium,
  });
  assert.deepEqual(ant.build(loop([redacted('R')]), { reasoningEffort: 'medium' }).thinking, {
    type: 'enabled',
    budget_tokens: THINKING_BUDGET.medium,
  });
  const after: Message[] = [...plain, { role: 'assistant', content: 'done' }, { role: 'user', content: 'next' }];
  assert.ok(ant.build(after, { reasoningEffort: 'medium' }).thinking, 'a new turn after a text answer may think again');
});

test('anthropic: parts go first, between the calls they preceded, and after the last; only anthropic parts', () => {
  const parts = [thinking('0'), item('x'), redacted('R0'), thinking('1', 1), thinking('2', 2)];
  const b = ant.build(loop(parts, ['c1', 'c2']));
  assert.deepEqual(
    b.messages[1].content.map((x: any) => x.type + (x.thinking ?? x.data ?? x.id ?? '')),
    ['thinkingt0', 'redacted_thinkingR0', 'text', 'tool_usec1', 'thinkingt1', 'tool_usec2', 'thinkingt2'],
  );
  assert.deepEqual(b.messages[1].content[0], { type: 'thinking', thinking: 't0', signature: 's0' });
});

test('anthropic: without tools the calls become text and their thinking stays out; a text answer keeps its thinking', () => {
  const h: Message[] = [
    ...loop([thinking('1')]),
    { role: 'assistant', content: 'done', reasoning: [thinking('2')] },
    { role: 'user', content: 'sum up' },
  ];
  const b = ant.build(h, { tools: null });
  const blocks = b.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
  assert.ok(!blocks.some((x: any) => x.type === 'tool_use'));
  assert.deepEqual(
    blocks.filter((x: any) => x.type === 'thinking').map((x: any) => x.thinking),
    ['t2'],
  );
});

test('anthropic: only signed thinking and non-empty redacted thinking are kept; unsigned thinking is still shown', () => {
  const r = anthropicAdapter.parseReply(
    JSON.stringify({
      type: 'message',
      role: 'assistant',
      stop_reason: 'tool_use',
      usage: {},
      content: [
        { type: 'thinking', thinking: 'unsigned' },
        { type: 'thinking', thinking: '', signature: 'S-empty-text' },
        { type: 'redacted_thinking', data: '' },
        { type: 'redacted_thinking', data: 'D' },
        { type: 'tool_use', id: 't1', name: 'read_file', input: {} },
        { type: 'thinking', thinking: 'after', signature: 'S2' },
      ],
    }),
  );
  assert.equal(r.reasoning, 'unsigned\n\nafter');
  assert.deepEqual(r.reasoningParts, [
    { dialect: 'anthropic', type: 'thinking', thinking: '', signature: 'S-empty-text' },
    { dialect: 'anthropic', type: 'redacted_thinking', data: 'D' },
    { dialect: 'anthropic', type: 'thinking', thinking: 'after', signature: 'S2', beforeCall: 1 },
  ]);
  assert.equal(anthropicAdapter.parseReply(JSON.stringify((A.text('hi') as any).body)).reasoningParts, undefined);
});

test('anthropic stream: a thinking block becomes a part at its stop; one the stream cut unsigned does not', () => {
  const blocks: A.BlockIn[] = [
    { type: 'thinking', thinking: 'deep thought', signature: 'SIG' },
    { type: 'redacted_thinking', data: 'RD' },
    { type: 'tool_use', id: 't1', name: 'x', input: { a: 1 } },
  ];
  const deltas = decode(new AnthropicStreamDecoder(), A.streamBlocks(blocks));
  assert.deepEqual(
    deltas.flatMap((d) => d.reasoningParts ?? []),
    [
      { dialect: 'anthropic', type: 'thinking', thinking: 'deep thought', signature: 'SIG' },
      { dialect: 'anthropic', type: 'redacted_thinking', data: 'RD' },
    ],
  );
  assert.equal(deltas.map((d) => d.reasoning ?? '').join(''), 'deep thought');
  // Cut after the thinking deltas, before the signature: nothing to carry.
  const cut = (A.streamBlocks(blocks) as any).sse.filter((s: string) => !/signature_delta|content_block_stop/.test(s));
  assert.deepEqual(
    decode(new AnthropicStreamDecoder(), { sse: cut }).flatMap((d) => d.reasoningParts ?? []),
    [{ dialect: 'anthropic', type: 'redacted_thinking', data: 'RD' }],
    'message_stop keeps only the complete blocks it finds open',
  );
});

// ---- Responses ------------------------------------------------------------------------------

const resp = requestHelpers(responsesAdapter, 'gpt');

test('responses: an effort asks for reasoning with summaries and its encrypted content', () => {
  const msgs: Message[] = [{ role: 'user', content: 'hi' }];
  const none = resp.build(msgs);
  assert.equal(none.reasoning, undefined);
  assert.equal(none.include, undefined);
  const b = resp.build(msgs, { reasoningEffort: 'medium' });
  assert.deepEqual(b.reasoning, { effort: 'medium', summary: 'auto' });
  assert.deepEqual(b.include, ['reasoning.encrypted_content']);
  assert.equal(b.store, false);
});

test('responses: reasoning goes right before the item that followed it, never last, only responses parts', () => {
  const b = resp.build(loop([item('0'), thinking('x'), item('1', 1), item('2', 2)], ['c1', 'c2']));
  assert.deepEqual(
    b.input.map((i: any) => i.type ?? i.role),
    ['user', 'reasoning', 'assistant', 'function_call', 'reasoning', 'function_call', 'function_call_output', 'function_call_output'],
  );
  assert.deepEqual(b.input[1], (item('0') as any).item, 'as it came');
  assert.deepEqual(b.include, ['reasoning.encrypted_content'], 'carried reasoning asks for more');
  const bare: Message[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, reasoning: [item('0')] },
    { role: 'user', content: 'again' },
  ];
  assert.ok(!resp.build(bare).input.some((i: any) => i.type === 'reasoning'), 'nothing follows it: not sent');
  assert.equal(resp.build(bare).include, undefined);
});

test('responses: only reasoning items with encrypted content are kept; the completed response stands in for a missing output_item.done', () => {
  const r = responsesAdapter.parseReply(
    JSON.stringify(
      (
        R.replyItems([
          { type: 'reasoning', id: 'rs_a', summary: ['plain'] },
          { type: 'reasoning', id: 'rs_b', summary: ['sealed'], encrypted: 'EB' },
          { type: 'function_call', call_id: 'c1', name: 'x', arguments: '{}' },
          { type: 'reasoning', id: 'rs_c', summary: [], encrypted: 'EC' },
          { type: 'function_call', call_id: 'c2', name: 'x', arguments: '{}' },
        ]) as any
      ).body,
    ),
  );
  assert.equal(r.reasoning, 'plain\n\nsealed');
  assert.deepEqual(
    r.reasoningParts!.map((p) => [(p as any).item.id, p.beforeCall]),
    [
      ['rs_b', undefined],
      ['rs_c', 1],
    ],
  );
  const reply = R.streamItems([
    { type: 'reasoning', id: 'rs_s', summary: ['s'], encrypted: 'ES' },
    { type: 'message', text: 'hi' },
  ]) as any;
  const noDone = reply.sse.filter((s: string) => !(s.includes('response.output_item.done') && s.includes('"reasoning"')));
  const parts = decode(new ResponsesStreamDecoder(), { sse: noDone }).flatMap((d) => d.reasoningParts ?? []);
  assert.deepEqual(
    parts.map((p: any) => p.item.encrypted_content),
    ['ES'],
  );
  const both = decode(new ResponsesStreamDecoder(), reply).flatMap((d) => d.reasoningParts ?? []);
  assert.equal(both.length, 1, 'taken once, from output_item.done, not again from completed');
});

// ---- OpenAI chat ----------------------------------------------------------------------------

test('openai chat: reasoning_effort only when asked for, in the string and the byte builder alike', () => {
  const chat = requestHelpers(openaiAdapter, 'gpt');
  const msgs: Message[] = [{ role: 'user', content: 'hi' }];
  for (const stream of [false, true]) {
    const o = chat.opts(msgs, { stream, reasoningEffort: 'high' });
    const s = openaiAdapter.buildRequest(o);
    assert.equal(JSON.parse(s).reasoning_effort, 'high');
    assert.equal(new TextDecoder().decode(openaiAdapter.buildRequestBytes!(o)), s);
    const plain = chat.opts(msgs, { stream });
    assert.equal(
      JSON.parse(new TextDecoder().decode(openaiAdapter.buildRequestBytes!(plain))).reasoning_effort,
      undefined,
      'the cached tail of one effort does not serve another',
    );
  }
  const withParts = JSON.parse(openaiAdapter.buildRequest(chat.opts(loop([thinking('1'), item('2')]))));
  assert.doesNotMatch(JSON.stringify(withParts), /"thinking"|"reasoning"|rs_2/, 'chat carries no reasoning parts');
});

test('openai chat: a reply keeps its whole reasoning text as one part, under the field it came in, with who sent it', () => {
  const parse = (reply: any, origin?: string) => openaiAdapter.parseReply(JSON.stringify(reply.body), origin);
  const r = parse(O.toolCall('read_file', { path: 'x' }, 'c1', { reasoning: 'look first' }), ORIGIN);
  assert.equal(r.reasoning, 'look first');
  assert.deepEqual(r.reasoningParts, [text('look first')]);
  assert.deepEqual(parse(O.text('hi', { reasoning: 'hm', reasoningKey: 'reasoning' }), ORIGIN).reasoningParts, [text('hm', 'reasoning')]);
  assert.equal(parse(O.text('hi', { reasoning: 'hm' })).reasoningParts, undefined, 'no origin: nowhere to carry it');
  assert.equal(parse(O.text('hi', { reasoning: '' }), ORIGIN).reasoningParts, undefined);
  const both = { choices: [{ message: { role: 'assistant', content: 'x', reasoning_content: 'same', reasoning: 'same' } }] };
  assert.deepEqual(openaiAdapter.parseReply(JSON.stringify(both), ORIGIN).reasoningParts, [text('same')], 'taken once');
  const emptyFirst = { choices: [{ message: { role: 'assistant', content: 'x', reasoning_content: '', reasoning: 'r' } }] };
  assert.deepEqual(openaiAdapter.parseReply(JSON.stringify(emptyFirst), ORIGIN).reasoningParts, [text('r', 'reasoning')]);
  assert.equal(openaiAdapter.parseReply(JSON.stringify(emptyFirst), ORIGIN).reasoning, 'r');

  // Streamed: shown delta by delta, kept once, whole, with the finish.
  const feed = (reply: any, origin?: string) => {
    const d = openaiAdapter.newStreamDecoder(origin);
    const out = (reply.sse as object[]).map((e) => d.feed('', JSON.stringify(e))).filter((x) => x !== null);
    if (reply.done) out.push(d.feed('', '[DONE]')!);
    return out as any[];
  };
  const deltas = feed(O.streamToolCall('read_file', '{"path":"x"}', 'c1', { reasoning: ['look ', 'first'] }), ORIGIN);
  assert.deepEqual(
    deltas.flatMap((d) => (d.reasoning ? [d.reasoning] : [])),
    ['look ', 'first'],
  );
  assert.deepEqual(
    deltas.flatMap((d) => d.reasoningParts ?? []),
    [text('look first')],
  );
  assert.ok(deltas.find((d) => d.reasoningParts)!.finishReason, 'with the finish');
  const noFinish = openaiAdapter.newStreamDecoder(ORIGIN);
  noFinish.feed('', JSON.stringify({ choices: [{ delta: { reasoning: 'r' } }] }));
  assert.deepEqual(
    noFinish.feed('', '[DONE]'),
    { done: true, reasoningParts: [text('r', 'reasoning')] },
    'or with [DONE] when no finish came',
  );
  assert.ok(
    feed(O.streamText(['hi'], { reasoning: ['r'] })).every((d) => !d.reasoningParts),
    'no origin: none kept',
  );
});

test('openai chat: reasoning text goes back only to its server and model, under its field, from the string and the byte builder alike', () => {
  const chat = requestHelpers(openaiAdapter, 'deepseek-v4-pro');
  const h = loop([text('look first')]);
  const dec = new TextDecoder();
  const both = (origin?: string) => {
    const o = chat.opts(h, origin === undefined ? {} : { origin });
    const s = openaiAdapter.buildRequest(o);
    assert.equal(dec.decode(openaiAdapter.buildRequestBytes!(o)), s);
    return s;
  };
  const plain = both();
  assert.doesNotMatch(plain, /reasoning/, 'no origin: none goes back');
  const carried = both(ORIGIN);
  assert.ok(carried.includes('{"role":"assistant","content":"Reading.","reasoning_content":"look first","tool_calls":['));
  assert.equal(carried.replace(',"reasoning_content":"look first"', ''), plain, 'nothing else changes');
  assert.equal(both('deepseek-v4-flash@https://api.deepseek.com/chat/completions'), plain, 'another model: not carried');
  assert.equal(both(ORIGIN), carried, 'the cached forms of one origin do not serve another');
  assert.equal(ollamaAdapter.buildRequest(chat.opts(h, { origin: ORIGIN })), carried, 'Ollama speaks the same');
  const two = JSON.parse(
    openaiAdapter.buildRequest(
      chat.opts(loop([text('a'), thinking('1'), text('b'), text('r', 'reasoning'), text('x', 'reasoning', 'other@http://x')]), {
        origin: ORIGIN,
      }),
    ),
  );
  assert.equal(two.messages[1].reasoning_content, 'ab', 'parts of one field join');
  assert.equal(two.messages[1].reasoning, 'r', 'another field goes under its own name');
  assert.doesNotMatch(JSON.stringify(two), /"thinking"|"x"/);
});

test('openai chat: an error that names a reasoning field as unsupported is a refusal of it; DeepSeek asking for it back is not', () => {
  const refused = [
    "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'reasoning_content' is unsupported)]",
    'reasoning is not supported with this model',
    "Additional properties are not allowed ('reasoning_content' was unexpected) - 'messages.1'",
    'Unrecognized request argument supplied: reasoning',
  ];
  for (const m of refused) assert.ok(refusesReasoningField(m), m);
  const not = [
    'The reasoning_content in the thinking mode must be passed back to the API.',
    '`reasoning_effort` is not supported with this model',
    'unsupported model',
  ];
  for (const m of not) assert.ok(!refusesReasoningField(m), m);
  const body = JSON.stringify({ error: { message: refused[0], type: 'invalid_request_error' } });
  const history = (): Message[] => [
    {
      role: 'assistant',
      content: 'a',
      reasoning: [{ dialect: 'openai', type: 'reasoning_text', field: 'reasoning_content', text: 't', origin: ORIGIN }],
    },
  ];
  const state = () => ({ reasoningRefused: false, foreignRoundsAsText: false });
  const target = { kind: 'openai' as const, origin: ORIGIN };
  const h = history(),
    st = state();
  assert.match(
    openaiAdapter.resend!(400, body, 'HTTP 400: x', h, target, st) ?? '',
    /^the server refused the reasoning sent back \(HTTP 400: x\); .*\(1 dropped\)$/,
  );
  assert.deepEqual([h[0]!.role === 'assistant' && h[0]!.reasoning, st.reasoningRefused], [undefined, true]);
  assert.equal(openaiAdapter.resend!(400, body, 'HTTP 400: x', history(), target, st), null, 'once per connection');
  assert.equal(openaiAdapter.resend!(500, body, 'HTTP 500: x', history(), target, state()), null, 'only a 400');
});

test('which requests take a part: its dialect; chat reasoning text only its own server and model', () => {
  const to = (kind: 'openai' | 'ollama' | 'anthropic', origin = ORIGIN) => ({ kind, origin });
  assert.equal(foreignness(to('openai'), text('t')), null);
  assert.equal(foreignness(to('ollama'), text('t')), null);
  assert.equal(foreignness(to('openai', 'deepseek-v4-flash@https://api.deepseek.com/chat/completions'), text('t')), 'origin');
  assert.equal(foreignness(to('anthropic'), text('t')), 'dialect');
  assert.equal(foreignness(to('openai'), thinking('1')), 'dialect');
  const h: Message[] = [
    loop([text('a'), thinking('1')])[1]!,
    { role: 'assistant', content: 'b', reasoning: [text('b', 'reasoning', 'm@http://other')] },
  ];
  assert.deepEqual(dropForeignReasoning(h, to('openai')), { dialect: 1, origin: 1 });
  assert.deepEqual((h[0] as AssistantMessage).reasoning, [text('a')]);
  assert.equal((h[1] as AssistantMessage).reasoning, undefined);
  assert.equal(reasoningOrigin('https://api.deepseek.com/chat/completions', 'deepseek-v4-pro'), ORIGIN);
  assert.equal(
    reasoningOrigin('https://user:sk-secret@proxy.example/v1/chat/completions?key=sk-secret#x', 'm'),
    'm@https://proxy.example/v1/chat/completions',
    'no credentials or query in it',
  );
  assert.equal(reasoningText(text('shown')), 'shown');
  assert.deepEqual(
    mapReasoningText(text('key sk-1'), (t) => t.replace('sk-1', '[REDACTED]')),
    text('key [REDACTED]'),
    'unsigned: masked, kept',
  );
  assert.ok(
    withoutReasoning(h).every((m) => m.role !== 'assistant' || m.reasoning === undefined),
    'a summary request carries none',
  );
});

// ---- the message model ----------------------------------------------------------------------

test('message JSON round-trips reasoning parts losslessly, in order, with before_call', () => {
  const parts = [thinking('1'), redacted('R'), item('2', 1), thinking('3', 2), text('look'), { ...text('r', 'reasoning'), beforeCall: 2 }];
  const m: AssistantMessage = { role: 'assistant', content: null, toolCalls: [call('a'), call('b')], reasoning: parts };
  const j = messageToJson(m);
  assert.deepEqual(Object.keys(j), ['role', 'content', 'tool_calls', 'reasoning']);
  assert.deepEqual(j.reasoning![2], { dialect: 'openai-responses', type: 'reasoning', item: (item('2') as any).item, before_call: 1 });
  assert.deepEqual(j.reasoning![4], {
    dialect: 'openai',
    type: 'reasoning_text',
    field: 'reasoning_content',
    text: 'look',
    origin: ORIGIN,
  });
  assert.deepEqual(Object.keys(j.reasoning![5]!), ['dialect', 'type', 'field', 'text', 'origin', 'before_call']);
  assert.deepEqual(parseMessageJson(JSON.parse(JSON.stringify(j))), m);
  assert.deepEqual(validNonSystemCopies([m]), [m]);
  const line = encodeMessageLine(m);
  assert.deepEqual(parseSessionLine(line), { kind: 'msg', message: m });
  assert.match(line, /"reasoning":\[.*\],"type":"msg"\}\n$/);
  assert.deepEqual(messageToJson({ role: 'assistant', content: 'x', reasoning: [] }), { role: 'assistant', content: 'x' });
});

test('message JSON: a malformed part is EINVAL naming it; an unknown dialect is left out; only assistants keep parts', () => {
  const einval = (reasoning: unknown, msg: RegExp) =>
    assert.throws(
      () => parseMessageJson({ role: 'assistant', content: 'x', reasoning }),
      (e: unknown) => e instanceof ClmError && e.code === 'EINVAL' && msg.test(e.message),
    );
  einval({}, /reasoning is not an array/);
  einval([7], /reasoning part is not an object/);
  einval([{ type: 'thinking' }], /no dialect or type/);
  einval([{ dialect: 'anthropic', type: 'thinking', thinking: 'x' }], /thinking signature is not a non-empty string/);
  einval([{ dialect: 'anthropic', type: 'thinking', thinking: 1, signature: 's' }], /thinking thinking is not a string/);
  einval([{ dialect: 'anthropic', type: 'redacted_thinking', data: '' }], /redacted_thinking data/);
  einval([{ dialect: 'openai-responses', type: 'reasoning', item: [] }], /reasoning item is not an object/);
  einval([{ dialect: 'anthropic', type: 'redacted_thinking', data: 'd', before_call: -1 }], /before_call/);
  einval([{ dialect: 'anthropic', type: 'redacted_thinking', data: 'd', before_call: 1.5 }], /before_call/);
  const rt = { dialect: 'openai', type: 'reasoning_text', field: 'reasoning', text: 't', origin: ORIGIN };
  einval([{ ...rt, field: 'thoughts' }], /^reasoning reasoning_text field is not "reasoning_content" or "reasoning"$/);
  einval([{ ...rt, field: undefined }], /reasoning_text field/);
  einval([{ ...rt, text: 3 }], /^reasoning reasoning_text text is not a string$/);
  einval([{ ...rt, origin: '' }], /^reasoning reasoning_text origin is not a non-empty string$/);
  einval([{ ...rt, origin: undefined }], /reasoning_text origin/);
  assert.deepEqual(
    parseMessageJson({ role: 'assistant', content: 'x', reasoning: [{ dialect: 'openai', type: 'reasoning_summary', text: 't' }] }),
    { role: 'assistant', content: 'x' },
    'a type of the chat dialect this version does not know is left out',
  );
  assert.deepEqual(
    parseMessageJson({ role: 'assistant', content: 'x', reasoning: [{ dialect: 'gemini', type: 'thought', signature: 's' }] }),
    { role: 'assistant', content: 'x' },
  );
  assert.deepEqual(
    parseMessageJson({ role: 'user', content: 'x', reasoning: [{ dialect: 'anthropic', type: 'redacted_thinking', data: 'd' }] }),
    { role: 'user', content: 'x' },
  );
  // A session line with a broken part is skipped like any malformed line, not half-read.
  assert.equal(parseSessionLine('{"role":"assistant","content":"x","reasoning":[1],"type":"msg"}').kind, 'skip');
});

test('dropping foreign parts replaces only the messages that had them; summaries carry none; readable text', () => {
  const toAnthropic = { kind: 'anthropic', origin: 'claude@http://x/v1/messages' } as const;
  const keep: Message = { role: 'assistant', content: 'a', reasoning: [thinking('1')] };
  const mixed: Message = { role: 'assistant', content: 'b', reasoning: [item('2'), thinking('3')] };
  const foreign: Message = { role: 'assistant', content: 'c', reasoning: [item('4')] };
  const h: Message[] = [{ role: 'user', content: 'u' }, keep, mixed, foreign];
  assert.deepEqual(dropForeignReasoning(h, toAnthropic), { dialect: 2, origin: 0 });
  assert.equal(h[1], keep, 'unchanged messages stay the same objects');
  assert.deepEqual(h[2], { role: 'assistant', content: 'b', reasoning: [thinking('3')] });
  assert.deepEqual(h[3], { role: 'assistant', content: 'c' });
  assert.deepEqual(mixed.reasoning!.length, 2, 'messages are values: the old one is untouched');
  assert.deepEqual(dropForeignReasoning(h, toAnthropic), { dialect: 0, origin: 0 });
  const stripped = withoutReasoning(h);
  assert.ok(stripped.every((m) => m.role !== 'assistant' || m.reasoning === undefined));
  assert.equal(stripped[0], h[0]);
  assert.equal(reasoningText(item('9')), 'sum 9');
  assert.equal(reasoningText(redacted('x')), '');
  assert.equal(
    reasoningText({
      dialect: 'openai-responses',
      type: 'reasoning',
      item: { summary: [], content: [{ type: 'reasoning_text', text: 'raw' }] },
    }),
    'raw',
  );
});

// ---- settings -------------------------------------------------------------------------------

test('AgentConfig.reasoningEffort must be low, medium or high', () => {
  validateConfig({ baseUrl: 'http://x/v1', reasoningEffort: 'high' });
  assert.throws(
    () => validateConfig({ baseUrl: 'http://x/v1', reasoningEffort: 'max' as never }),
    /reasoningEffort must be one of 'low', 'medium', 'high', got "max"/,
  );
});

test('config.lua: reasoning_effort at the top, in a profile and per model, checked with file and line', async (t) => {
  const ctx = { label: 'config.lua', prefix: '' };
  assert.throws(() => validateValues({ reasoning_effort: 'max' }, ctx), {
    message: 'config.lua: reasoning_effort must be one of "low", "medium", "high", "off" (got "max")',
  });
  assert.throws(() => validateValues({ providers: { p: { models: { m: { reasoning_effort: 3 } } } } }, ctx), {
    message: 'config.lua: providers.p.models.m.reasoning_effort must be one of "low", "medium", "high", "off" (got 3)',
  });
  const c = tempFor(t, {
    'config.lua':
      'return {\n  model = "p/m",\n  providers = { p = { url = "http://127.0.0.1:1/v1",\n    models = { m = { reasoning_effort = "maximum" } } } },\n}\n',
  });
  await assert.rejects(
    loadConfig({ dir: c.dir }),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message === 'config.lua:4: providers.p.models.m.reasoning_effort must be one of "low", "medium", "high", "off" (got "maximum")',
  );
  const good = tempFor(t, {
    'config.lua': `return {
      model = "p/m",
      providers = { p = { kind = "anthropic", url = "http://127.0.0.1:1/v1", models = { m = { reasoning_effort = "high" }, n = { reasoning_effort = "off" } } } },
      agents = { quick = { reasoning_effort = "low" }, plain = { reasoning_effort = "off" } },
    }`,
  });
  const top = (await loadConfig({ dir: good.dir }))!;
  assert.equal(resolveConnection(top).reasoningEffort, 'high', "the model's own");
  assert.equal(resolveConnection(top, { model: 'p/n' }).reasoningEffort, undefined, '"off" sends none');
  assert.equal(resolveConnection(top, { reasoningEffort: 'medium' }).reasoningEffort, 'medium', 'the flag wins');
  assert.equal(resolveConnection(top, { reasoningEffort: 'off' }).reasoningEffort, undefined);
  assert.equal(
    resolveConnection((await loadConfig({ dir: good.dir, agent: 'quick' }))!).reasoningEffort,
    'low',
    'the profile wins over the model',
  );
  assert.equal(resolveConnection((await loadConfig({ dir: good.dir, agent: 'plain' }))!).reasoningEffort, undefined);
  assert.equal(resolveConnection(null).reasoningEffort, undefined);
});

test('--reasoning-effort takes low, medium, high or off', () => {
  assert.equal(parseCommandLine(['--reasoning-effort', 'high']).reasoningEffort, 'high');
  assert.equal(parseCommandLine(['--reasoning-effort=off']).reasoningEffort, 'off');
  assert.equal(parseCommandLine([]).reasoningEffort, undefined);
  assert.throws(
    () => parseCommandLine(['--reasoning-effort', 'max']),
    (e: unknown) => e instanceof UsageError && e.message === "--reasoning-effort: unknown level 'max' (low, medium, high, off)",
  );
  assert.throws(() => parseCommandLine(['--reasoning-effort']), UsageError);
});
