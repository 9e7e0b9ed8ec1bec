// Reasoning carried through tool loops, end to end over the Node host against the mock LLM, for
// Anthropic (signed thinking, redacted_thinking) and Responses (reasoning items with
// encrypted_content), streamed and not: a three-round loop whose later requests carry the earlier
// rounds' reasoning in place and order, a switch to another dialect that drops it (and logs so),
// and a compaction whose summary request carries none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, type Agent } from '../../../src/core/agent.js';
import type { AgentConfig, AgentEvent, ProviderKind, ReasoningEffort } from '../../../src/index.js';
import * as A from '../../fixtures/anthropic-replies.js';
import * as O from '../../fixtures/openai-replies.js';
import { echoTool, nodeAgentSuite } from '../../fixtures/node-agent-suite.js';
import * as R from '../../fixtures/responses-replies.js';

const { mock, host, logLines } = await nodeAgentSuite();
const echo = echoTool;

const PATH: Record<string, string> = { openai: 'chat/completions', anthropic: 'messages', 'openai-responses': 'responses' };

function cfgFor(kind: ProviderKind, stream: boolean, effort?: ReasoningEffort): AgentConfig {
  const c: AgentConfig = {
    baseUrl: `${mock.base}/${PATH[kind]}`,
    provider: kind,
    apiKey: 'k',
    model: `model-${kind}`,
    stream,
    maxTries: 1,
    systemPrompt: 'Be brief.',
  };
  if (effort) c.reasoningEffort = effort;
  return c;
}

async function withAgent(cfg: AgentConfig, fn: (a: Agent, events: AgentEvent[]) => Promise<void>): Promise<void> {
  mock.reset();
  const a = createAgent(cfg, host);
  a.addTool(echo);
  const events: AgentEvent[] = [];
  a.subscribe((e) => events.push(e));
  try {
    await fn(a, events);
  } finally {
    a.close();
  }
}

const th = (n: string) => ({ type: 'thinking' as const, thinking: `thinking ${n}`, signature: `sig-${n}==` });
const use = (id: string, text: string) => ({ type: 'tool_use' as const, id, name: 'echo', input: { text } });
const result = (id: string, text: string) => ({ type: 'tool_result', tool_use_id: id, content: `echo:${text}` });

/** Round 1: thinking, text, a call; round 2: thinking, redacted thinking, a call; round 3: thinking before each of two calls; then the answer. */
const anthropicRounds: A.BlockIn[][] = [
  [th('1'), { type: 'text', text: 'Looking.' }, use('toolu_1', 'a')],
  [th('2'), { type: 'redacted_thinking', data: 'REDACTED-2' }, use('toolu_2', 'b')],
  [th('3'), use('toolu_3', 'c'), th('3b'), use('toolu_4', 'd')],
  [th('4'), { type: 'text', text: 'All done.' }],
];

const rs = (n: string, encrypted: string | null = `ENC-${n}`): R.ItemIn => ({
  type: 'reasoning',
  id: `rs_${n}`,
  summary: [`summary ${n}`],
  ...(encrypted === null ? {} : { encrypted }),
});
const fc = (id: string, text: string): R.ItemIn => ({
  type: 'function_call',
  call_id: id,
  name: 'echo',
  arguments: JSON.stringify({ text }),
});
const wireItem = (i: R.ItemIn) => R.outputItem(i, 0);

/** The same loop in Responses items; round 2 also has a reasoning item without encrypted content (not carried). */
const responsesRounds: R.ItemIn[][] = [
  [rs('1'), { type: 'message', text: 'Looking.' }, fc('call_1', 'a')],
  [rs('2x', null), rs('2'), fc('call_2', 'b')],
  [rs('3'), fc('call_3', 'c'), rs('3b'), fc('call_4', 'd')],
  [rs('4'), { type: 'message', text: 'All done.' }],
];

const reasoningText = (events: AgentEvent[]) =>
  events
    .filter((e) => e.type === 'reasoning')
    .map((e) => (e as { text: string }).text)
    .join('');

for (const stream of [false, true]) {
  const mode = stream ? 'streamed' : 'whole';

  test(`anthropic ${mode}: signed and redacted thinking go back before the blocks they preceded, round after round`, async () => {
    await withAgent(cfgFor('anthropic', stream), async (a, events) => {
      mock.push(...anthropicRounds.map((b) => (stream ? A.streamBlocks(b) : A.replyBlocks(b))));
      const r = await a.run('go');
      assert.equal(r.status, 0, r.error);
      assert.equal(r.text, 'Looking.All done.', 'thinking is never part of the reply text');
      assert.match(reasoningText(events), /^thinking 1thinking 2thinking 3(\n\n)?thinking 3bthinking 4$/, 'thinking is shown as reasoning');
      const posts = mock.posts.map((p) => p.json);
      assert.equal(posts.length, 4);
      assert.equal(posts[0].thinking, undefined, 'no reasoning setting: no thinking parameter');
      assert.deepEqual(posts[1].messages.slice(1), [
        { role: 'assistant', content: [th('1'), { type: 'text', text: 'Looking.' }, use('toolu_1', 'a')] },
        { role: 'user', content: [result('toolu_1', 'a')] },
      ]);
      assert.deepEqual(posts[2].messages.slice(3), [
        { role: 'assistant', content: [th('2'), { type: 'redacted_thinking', data: 'REDACTED-2' }, use('toolu_2', 'b')] },
        { role: 'user', content: [result('toolu_2', 'b')] },
      ]);
      assert.deepEqual(posts[3].messages.slice(1, 3), posts[1].messages.slice(1), 'earlier rounds go back unchanged');
      assert.deepEqual(posts[3].messages.slice(5), [
        { role: 'assistant', content: [th('3'), use('toolu_3', 'c'), th('3b'), use('toolu_4', 'd')] },
        { role: 'user', content: [result('toolu_3', 'c'), result('toolu_4', 'd')] },
      ]);
      const last = a.messages.at(-1)!;
      assert.deepEqual(last, { role: 'assistant', content: 'All done.', reasoning: [{ dialect: 'anthropic', ...th('4') }] });
    });
  });

  test(`responses ${mode}: encrypted reasoning items go back before the items that followed them, with include`, async () => {
    await withAgent(cfgFor('openai-responses', stream), async (a, events) => {
      mock.push(...responsesRounds.map((i) => (stream ? R.streamItems(i) : R.replyItems(i))));
      const r = await a.run('go');
      assert.equal(r.status, 0, r.error);
      assert.equal(r.text, 'Looking.All done.');
      assert.match(reasoningText(events), /summary 1.*summary 2x.*summary 2.*summary 3.*summary 3b.*summary 4/s);
      const posts = mock.posts.map((p) => p.json);
      assert.equal(posts.length, 4);
      assert.equal(posts[0].reasoning, undefined, 'no reasoning setting: no reasoning parameter');
      assert.equal(posts[0].include, undefined);
      for (const p of posts.slice(1)) assert.deepEqual(p.include, ['reasoning.encrypted_content'], 'carried reasoning asks for more of it');
      for (const p of posts.slice(1)) assert.equal(p.reasoning, undefined);
      const call = (id: string, text: string) => ({
        type: 'function_call',
        call_id: id,
        name: 'echo',
        arguments: JSON.stringify({ text }),
      });
      const output = (id: string, text: string) => ({ type: 'function_call_output', call_id: id, output: `echo:${text}` });
      assert.deepEqual(posts[1].input.slice(2), [
        wireItem(rs('1')),
        { role: 'assistant', content: 'Looking.' },
        call('call_1', 'a'),
        output('call_1', 'a'),
      ]);
      assert.deepEqual(
        posts[2].input.slice(6),
        [wireItem(rs('2')), call('call_2', 'b'), output('call_2', 'b')],
        'an item without encrypted content is not carried',
      );
      assert.deepEqual(posts[3].input.slice(2, 6), posts[1].input.slice(2));
      assert.deepEqual(posts[3].input.slice(9), [
        wireItem(rs('3')),
        call('call_3', 'c'),
        wireItem(rs('3b')),
        call('call_4', 'd'),
        output('call_3', 'c'),
        output('call_4', 'd'),
      ]);
      const last = a.messages.at(-1)!;
      assert.deepEqual(last, {
        role: 'assistant',
        content: 'All done.',
        reasoning: [{ dialect: 'openai-responses', type: 'reasoning', item: wireItem(rs('4')) }],
      });
    });
  });
}

const loopOf = (kind: ProviderKind, stream: boolean) =>
  kind === 'anthropic'
    ? [anthropicRounds[0]!, anthropicRounds[3]!].map((b) => (stream ? A.streamBlocks(b) : A.replyBlocks(b)))
    : [responsesRounds[0]!, responsesRounds[3]!].map((i) => (stream ? R.streamItems(i) : R.replyItems(i)));

for (const [from, to] of [
  ['anthropic', 'openai-responses'],
  ['openai-responses', 'anthropic'],
  ['anthropic', 'openai'],
] as const) {
  for (const stream of [false, true]) {
    test(`a switch from ${from} to ${to} (${stream ? 'streamed' : 'whole'}) drops the reasoning and says so in the debug log`, async () => {
      await withAgent(cfgFor(from, stream), async (a) => {
        mock.push(...loopOf(from, stream));
        assert.equal((await a.run('go')).status, 0);
        assert.equal(a.messages.filter((m) => m.role === 'assistant' && m.reasoning).length, 2);
        const mark = logLines.length;
        a.setProvider(cfgFor(to, stream));
        assert.ok(
          logLines.slice(mark).some((l) => /^dropped 2 reasoning parts of another dialect: .* requests cannot carry them$/.test(l)),
          logLines.slice(mark).join('\n'),
        );
        assert.ok(
          a.messages.every((m) => m.role !== 'assistant' || m.reasoning === undefined),
          'the history holds no foreign reasoning',
        );
        mock.push(to === 'anthropic' ? A.text('ok') : to === 'openai' ? O.text('ok') : R.text('ok'));
        assert.equal((await a.run('next')).status, 0);
        const body = mock.posts.at(-1)!.body;
        assert.doesNotMatch(body, /sig-1|ENC-1|"thinking"|"reasoning"|encrypted/, 'no foreign signature or encrypted reasoning is sent');
        assert.match(body, /Looking\./, 'the rest of the conversation goes on');
      });
    });
  }
}

test('a switch within the dialect keeps the reasoning; setProvider carries the new reasoning effort', async () => {
  await withAgent(cfgFor('anthropic', false), async (a) => {
    mock.push(...loopOf('anthropic', false));
    assert.equal((await a.run('go')).status, 0);
    a.setProvider({ ...cfgFor('anthropic', false), model: 'other-claude', reasoningEffort: 'low' });
    mock.push(A.text('ok'));
    assert.equal((await a.run('next')).status, 0);
    const req = mock.posts.at(-1)!.json;
    assert.deepEqual(req.messages[1].content[0], th('1'));
    assert.deepEqual(req.thinking, { type: 'enabled', budget_tokens: 4000 });
  });
});

for (const kind of ['anthropic', 'openai-responses'] as const) {
  test(`${kind}: the summary request of a compaction carries no reasoning and asks for none; the fold keeps the rest`, async () => {
    await withAgent(cfgFor(kind, false, 'high'), async (a) => {
      mock.push(...(kind === 'anthropic' ? anthropicRounds.map((b) => A.replyBlocks(b)) : responsesRounds.map((i) => R.replyItems(i))));
      assert.equal((await a.run('go')).status, 0);
      mock.push(kind === 'anthropic' ? A.text('the summary') : R.text('the summary'));
      const c = await a.compactAndWait();
      assert.equal(c.status, 0, c.error);
      const body = mock.posts.at(-1)!.body;
      assert.doesNotMatch(body, /sig-|ENC-|REDACTED|"thinking"|"reasoning"|"include"/);
      const kept = a.messages.filter((m) => m.role === 'assistant' && m.reasoning?.length);
      assert.ok(kept.length > 0 && kept.length < 4, 'folded messages took their reasoning with them; kept ones still have it');
      mock.push(kind === 'anthropic' ? A.text('ok') : R.text('ok'));
      assert.equal((await a.run('next')).status, 0);
      assert.match(mock.posts.at(-1)!.body, kind === 'anthropic' ? /sig-4==/ : /ENC-4/, 'the next request carries what the fold kept');
    });
  });
}
