// A host that sends a body in pieces (Host.bodyPieces) gets the requests of every dialect as
// cached pieces (per message; Anthropic's per block), not serialised and joined into one buffer
// each round; a host without the flag gets the same bytes whole. The pieces are the same bytes in
// the same order, for every kind of block and item the Anthropic and Responses dialects write.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent } from '../../src/core/agent.js';
import type { Host, HttpRequest } from '../../src/core/host.js';
import type { Message, ProviderKind } from '../../src/core/types.js';
import { DIALECTS } from '../../src/core/providers/index.js';
import { anthropicAdapter } from '../../src/core/providers/anthropic.js';
import { responsesAdapter } from '../../src/core/providers/responses.js';
import type { BuildRequestOptions, ToolSchema } from '../../src/core/providers/adapter.js';
import { scriptedHost } from '../fixtures/scripted-host.js';

const REPLY: Record<string, string> = {
  openai: JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }] }),
  anthropic: JSON.stringify({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'fine' }], stop_reason: 'end_turn' }),
  'openai-responses': JSON.stringify({
    status: 'completed',
    output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'fine' }] }],
  }),
};

async function twoTurns(provider: ProviderKind, pieces: boolean): Promise<HttpRequest[]> {
  const base = scriptedHost([{ body: REPLY[provider]! }, { body: REPLY[provider]! }]);
  const seen: HttpRequest[] = [];
  const host: Host = {
    ...base,
    ...(pieces && { bodyPieces: true }),
    http(req, handlers) {
      seen.push(req);
      return base.http(req, handlers);
    },
  };
  const agent = createAgent({ baseUrl: 'http://127.0.0.1:9/v1', provider, stream: false, systemPrompt: 'be brief' }, host);
  for (const prompt of ['first question', 'second question, é']) {
    const r = await agent.run(prompt);
    assert.equal(r.text, 'fine', r.error);
  }
  agent.close();
  return seen;
}

const joined = (req: HttpRequest): Buffer =>
  req.bodyPieces ? Buffer.concat(req.bodyPieces.map((p) => Buffer.from(p))) : Buffer.from(req.body as Uint8Array);
/** The request's text with the system prompt's time stamp (the two agents may start in different seconds) left out. */
const timeless = (req: HttpRequest): string =>
  joined(req)
    .toString()
    .replace(/\w{3}, \d{1,2} \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}/g, 'TIME');

for (const provider of ['openai', 'anthropic', 'openai-responses'] as const) {
  test(`${provider}: a host that takes body pieces gets the request unjoined; the bytes are those of a whole body`, {
    timeout: 10_000,
  }, async () => {
    const split = await twoTurns(provider, true);
    const whole = await twoTurns(provider, false);
    assert.equal(split.length, 2);
    for (const [i, req] of split.entries()) {
      assert.equal(req.body, undefined, 'both a body and pieces');
      assert.ok(req.bodyPieces && req.bodyPieces.length > 3, `request ${i}: ${req.bodyPieces?.length} pieces`);
      assert.ok(whole[i]!.bodyPieces === undefined && whole[i]!.body !== undefined);
      assert.equal(timeless(req), timeless(whole[i]!));
      assert.match(timeless(req), /TIME/);
      assert.match(joined(req).toString(), /"first question"/);
    }
    // The second request reuses the first's cached pieces of the history (the same objects).
    const [a, b] = split.map((r) => r.bodyPieces!);
    assert.ok(
      a!.slice(1, -1).some((p) => p.length > 10 && b!.includes(p)),
      'no piece of the history was reused',
    );
  });
}

const TOOLS: ToolSchema[] = [
  { name: 'read_file', description: 'Read a file', parameters: { type: 'object' }, parametersJson: '{"type":"object"}' },
  { name: 'odd', description: '', parameters: { type: 'string' }, parametersJson: '{"type":"string"}' },
];

/** A history with every kind of block: thinking (signed and redacted), text with calls, results (empty, unanswered, after text), a leading assistant turn, non-ASCII text. */
function everyBlock(): Message[] {
  return [
    { role: 'system', content: 'be brief' },
    { role: 'assistant', content: 'I start, with "quotes" and \\ and é 🙂' },
    { role: 'user', content: 'first question\n\twith a tab' },
    {
      role: 'assistant',
      content: 'looking',
      reasoning: [
        { type: 'thinking', dialect: 'anthropic', thinking: 'hmm <think>', signature: 'sig1' },
        { type: 'redacted_thinking', dialect: 'anthropic', data: 'opaque', beforeCall: 1 },
      ],
      toolCalls: [
        { id: 'call_1', name: 'read_file', args: '{"path":"/a"}' },
        { id: 'call 2', name: 'odd', args: 'not json' },
        { id: 'call_3', name: 'read_file', args: '' },
      ],
    },
    { role: 'tool', toolCallId: 'call_1', toolName: 'read_file', content: 'line one\nline two' },
    { role: 'tool', toolCallId: 'call 2', toolName: 'odd', content: '' },
    { role: 'user', content: 'and a remark among the results' },
    { role: 'assistant', content: '' },
    { role: 'user', content: '   ' },
    { role: 'assistant', content: 'done' },
  ];
}

const text = (pieces: Uint8Array[]): string => Buffer.concat(pieces.map((p) => Buffer.from(p))).toString();

test('anthropic: the request pieces are byte for byte the request text, for every kind of block', { timeout: 10_000 }, () => {
  const withPieces = DIALECTS.find((d) => d.kind === 'anthropic')!;
  assert.ok(withPieces.buildRequestPieces, "clm's Anthropic dialect builds pieces");
  const variants: Partial<BuildRequestOptions>[] = [
    { tools: TOOLS, stream: true },
    { tools: null, stream: false },
    { tools: TOOLS, stream: true, reasoningEffort: 'high', maxTokens: 1000, disableParallelToolCalls: true },
  ];
  for (const v of variants) {
    const o = { model: 'claude-x', messages: everyBlock(), maxTokens: 4096, stream: false, tools: null, ...v } as BuildRequestOptions;
    const expected = anthropicAdapter.buildRequest(o);
    assert.equal(text(withPieces.buildRequestPieces!(o)), expected, JSON.stringify(v));
    // Twice: pieces made before (cached) give the same bytes.
    assert.equal(text(withPieces.buildRequestPieces!(o)), expected, `${JSON.stringify(v)}, again`);
    JSON.parse(expected);
  }
});

test('anthropic: a longer conversation reuses the bytes made for the turns before it', { timeout: 10_000 }, () => {
  const adapter = DIALECTS.find((d) => d.kind === 'anthropic')!;
  const messages = everyBlock();
  const o = (m: Message[]): BuildRequestOptions => ({
    model: 'claude-x',
    messages: m,
    maxTokens: 4096,
    stream: true,
    tools: TOOLS,
    disableParallelToolCalls: false,
  });
  const before = adapter.buildRequestPieces!(o(messages));
  const after = adapter.buildRequestPieces!(o([...messages, { role: 'user', content: 'one more' }]));
  const big = before.filter((p) => p.length > 30).slice(1, -1);
  assert.ok(big.length >= 4, `${big.length} pieces of blocks`);
  // The same memory (a lone text's piece is a view into its block's bytes).
  const same = (p: Uint8Array, q: Uint8Array) => p.buffer === q.buffer && p.byteOffset === q.byteOffset && p.length === q.length;
  for (const p of big)
    assert.ok(
      after.some((q) => same(p, q)),
      `not reused: ${Buffer.from(p).toString().slice(0, 60)}`,
    );
});

/** A Responses history: reasoning items carried back, calls with malformed arguments, an unanswered call, non-ASCII text. */
function responsesHistory(): Message[] {
  const item = (id: string) => ({ type: 'reasoning', id, summary: [], encrypted_content: `enc-${id}` });
  return [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'first question, é 🙂 "quoted"' },
    {
      role: 'assistant',
      content: 'looking',
      reasoning: [
        { dialect: 'openai-responses', type: 'reasoning', item: item('rs_1') },
        { dialect: 'openai-responses', type: 'reasoning', item: item('rs_2'), beforeCall: 1 },
      ],
      toolCalls: [
        { id: 'call_1', name: 'read_file', args: '{"path":"/a"}' },
        { id: 'call_2', name: 'read_file', args: 'not json' },
      ],
    },
    { role: 'tool', toolCallId: 'call_1', toolName: 'read_file', content: 'line one\nline two' },
    { role: 'assistant', content: '' },
    { role: 'user', content: 'and then?' },
  ];
}

test('openai-responses: the request pieces are byte for byte the request text; later requests reuse them', { timeout: 10_000 }, () => {
  const withPieces = DIALECTS.find((d) => d.kind === 'openai-responses')!;
  assert.ok(withPieces.buildRequestPieces, "clm's Responses dialect builds pieces");
  const base = { model: 'gpt-x', maxTokens: 4096, disableParallelToolCalls: false };
  for (const v of [
    { tools: TOOLS, stream: true },
    { tools: null, stream: false },
    { tools: TOOLS, stream: true, reasoningEffort: 'low' as const, disableParallelToolCalls: true },
  ]) {
    const o: BuildRequestOptions = { ...base, messages: responsesHistory(), ...v };
    const expected = responsesAdapter.buildRequest(o);
    assert.equal(text(withPieces.buildRequestPieces!(o)), expected, JSON.stringify(v));
    assert.match(expected, /"include":\["reasoning.encrypted_content"\]/);
    JSON.parse(expected);
  }
  // Without reasoning items or effort, no include.
  const plain: BuildRequestOptions = { ...base, messages: [{ role: 'user', content: 'hi' }], tools: null, stream: false };
  assert.equal(text(withPieces.buildRequestPieces!(plain)), responsesAdapter.buildRequest(plain));
  assert.doesNotMatch(responsesAdapter.buildRequest(plain), /include/);

  const messages = responsesHistory();
  const o = (m: Message[]): BuildRequestOptions => ({ ...base, messages: m, tools: TOOLS, stream: true });
  const before = withPieces.buildRequestPieces!(o(messages)).slice(1, -1);
  const after = withPieces.buildRequestPieces!(o([...messages, { role: 'user', content: 'one more' }]));
  const big = before.filter((p) => p.length > 10);
  assert.ok(big.length >= 4, `${big.length} pieces of messages`);
  for (const p of big) assert.ok(after.includes(p), `not reused: ${Buffer.from(p).toString().slice(0, 60)}`);
});
