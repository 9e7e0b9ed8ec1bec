// Tool rounds another model made, sent to a server that wants its own reasoning back with every
// tool call (DeepSeek's thinking mode; Gemini 3's thought signatures), end to end over the Node
// host against the mock LLM: after a switch into such a server, or a session restored onto it,
// its 400 gets the request once more with those rounds written as text — its own rounds stay
// tool rounds carrying their reasoning — the history is unchanged, and the connection goes on
// that way without a second 400.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent.js';
import type { Message } from '../../../src/index.js';
import { foreignRoundsAsText } from '../../../src/core/providers/foreign-rounds.js';
import { openaiAdapter } from '../../../src/core/providers/openai.js';
import { wantsPartsBack } from '../../../src/core/providers/chat-parts-answers.js';
import type { RecordedRequest, Reply } from '../../fixtures/mock-llm.js';
import * as O from '../../fixtures/openai-replies.js';
import { nodeAgentSuite } from '../../fixtures/node-agent-suite.js';

const { mock, logLines, chatConfig: cfg, withAgent } = await nodeAgentSuite();

const DEEPSEEK_400 = O.httpError(400, 'The reasoning_content in the thinking mode must be passed back to the API.');
const GEMINI_400 = O.httpError(
  400,
  'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:echo` , position 2.',
);

/** The assistant messages of a request that made tool calls. */
const callers = (req: RecordedRequest): any[] => req.json.messages.filter((m: any) => m.role === 'assistant' && m.tool_calls);

/** A server wanting reasoning_content back with every tool call: `replies` in order, its 400 for a request where one lacks it. */
function thinkingServer(replies: Reply[], refusal: Reply = DEEPSEEK_400): (req: RecordedRequest) => Reply {
  let next = 0;
  return (req) => {
    if (callers(req).some((m) => !m.reasoning_content)) return refusal;
    return replies[next++] ?? O.text('ok');
  };
}

/** Another model's tool loop (no reasoning): echo a, then the answer. */
async function otherModelsLoop(a: Agent): Promise<void> {
  mock.push(O.toolCall('echo', { text: 'a' }, 'call_other'), O.text('echoed a'));
  const r = await a.run('echo a');
  assert.equal(r.status, 0, r.error);
}

for (const [server, refusal] of [
  ['DeepSeek', DEEPSEEK_400],
  ['Gemini', GEMINI_400],
] as const) {
  test(`switched into a ${server}-like server after another model's tool calls: its 400, then those rounds as text, its own rounds as tool rounds; no second 400 on the connection`, async () => {
    await withAgent(cfg('other-model'), async (a) => {
      await otherModelsLoop(a);
      a.setProvider(cfg('deepseek-v4-pro'));
      const before = a.messages.map((m) => ({ ...m }));
      mock.reset();
      mock.script(
        thinkingServer(
          [O.toolCall('echo', { text: 'b' }, 'call_own', { reasoning: 'Now b.' }), O.text('echoed b', { reasoning: 'Done.' })],
          refusal,
        ),
      );
      const mark = logLines.length;
      const r = await a.run('now echo b');
      assert.equal(r.status, 0, r.error);
      assert.equal(r.text, 'echoed b');
      assert.equal(mock.posts.length, 3, 'refused once, then the request again, then the round after the own call');
      assert.equal(callers(mock.posts[0]!).length, 1, 'the first request sent the other model’s round as a tool round');
      const retry = mock.posts[1]!.json.messages;
      assert.deepEqual(
        retry.slice(1, 5),
        [
          { role: 'user', content: retry[1].content },
          { role: 'assistant', content: '[tool call echo {"text":"a"}]' },
          { role: 'user', content: '[tool result from echo]\necho:a' },
          { role: 'assistant', content: 'echoed a' },
        ],
        'the other model’s round as text, in its place',
      );
      assert.match(retry[1].content, /echo a$/);
      assert.deepEqual(
        callers(mock.posts[2]!).map((m) => [m.tool_calls[0].id, m.reasoning_content]),
        [['call_own', 'Now b.']],
        'its own round stays a tool round, with its reasoning',
      );
      assert.ok(!mock.posts[2]!.json.messages.some((m: any) => m.role === 'tool' && m.tool_call_id === 'call_other'));
      assert.deepEqual(a.messages.slice(0, before.length), before, 'the history is unchanged');
      assert.equal(
        logLines.slice(mark).filter((l) => l.startsWith('the server wants reasoning back with tool calls another model made (HTTP 400: '))
          .length,
        1,
      );
      // The next turn goes that way at once.
      mock.push(O.text('bye', { reasoning: 'ok' }));
      assert.equal((await a.run('thanks')).status, 0);
      assert.equal(mock.posts.length, 4, 'no second 400');
      assert.equal(callers(mock.posts[3]!).length, 1, 'only its own round as a tool round');
    });
  });
}

test('a session of another model restored onto a DeepSeek-like server goes on the same way; a 400 with nothing foreign to write still fails the turn', async () => {
  let saved: Message[] = [];
  await withAgent(cfg('other-model'), async (a) => {
    await otherModelsLoop(a);
    saved = a.messages.slice(1);
  });
  await withAgent(cfg('deepseek-v4-flash'), async (b) => {
    b.restoreHistory(saved);
    mock.script(thinkingServer([O.text('continued')]));
    const r = await b.run('go on');
    assert.equal(r.status, 0, r.error);
    assert.equal(r.text, 'continued');
    assert.equal(mock.posts.length, 2);
  });
  await withAgent(cfg('deepseek-v4-flash'), async (c) => {
    mock.script(() => DEEPSEEK_400);
    const r = await c.run('hi');
    assert.match(r.error ?? '', /^HTTP 400: The reasoning_content in the thinking mode must be passed back to the API\.$/);
    assert.equal(mock.posts.length, 1, 'nothing to write as text: not sent again');
  });
});

test('a server that keeps answering that 400 gets the request twice, not more, and the turn fails with its message', async () => {
  await withAgent(cfg('other-model'), async (a) => {
    await otherModelsLoop(a);
    a.setProvider(cfg('deepseek-v4-pro'));
    mock.reset();
    mock.script(() => DEEPSEEK_400);
    const r = await a.run('again');
    assert.match(r.error ?? '', /must be passed back/);
    assert.equal(mock.posts.length, 2);
  });
});

test('wantsPartsBack: the servers’ demands, not their refusals', () => {
  for (const m of [
    'The reasoning_content in the thinking mode must be passed back to the API.',
    'The `reasoning_content` in the thinking mode must be passed back to the API.',
    'Missing `reasoning_content` field in the assistant message at message index 2. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls',
    'Function call is missing a thought_signature in functionCall parts.',
  ])
    assert.ok(wantsPartsBack(m), m);
  for (const m of [
    "property 'reasoning_content' is unsupported",
    "Additional properties are not allowed ('reasoning_content' was unexpected)",
    'Unknown name "extra_content" at \'messages[2]\': Cannot find field.',
    'model not found',
  ])
    assert.ok(!wantsPartsBack(m), m);
  // Through the adapter: only a 400, only with a round another model made, once per connection.
  const body = JSON.stringify({ error: { message: 'The reasoning_content in the thinking mode must be passed back to the API.' } });
  const target = { kind: 'openai' as const, origin: 'deepseek-v4-pro@u' };
  const history: Message[] = [
    { role: 'assistant', content: null, toolCalls: [{ id: '1', name: 'echo', args: '{}' }] },
    { role: 'tool', content: 'x', toolCallId: '1', toolName: 'echo' },
  ];
  const state = { reasoningRefused: false, foreignRoundsAsText: false };
  assert.equal(openaiAdapter.resend!(500, body, 'HTTP 500', history, target, state), null);
  assert.equal(openaiAdapter.resend!(400, body, 'HTTP 400', history.slice(1), target, state), null, 'no call without parts');
  assert.match(openaiAdapter.resend!(400, body, 'HTTP 400', history, target, state) ?? '', /^the server wants reasoning back/);
  assert.deepEqual(state, { reasoningRefused: false, foreignRoundsAsText: true });
  assert.equal(openaiAdapter.resend!(400, body, 'HTTP 400', history, target, state), null, 'once');
});

test('foreignRoundsAsText: the same array when every round is kept; a written round is the same objects every time, so its bytes are reused', () => {
  const history: Message[] = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'u' },
    {
      role: 'assistant',
      content: 'looking',
      toolCalls: [
        { id: '1', name: 'echo', args: '{"text":"a"}' },
        { id: '2', name: 'echo', args: '{"text":"b"}' },
      ],
    },
    { role: 'tool', content: 'echo:a', toolCallId: '1', toolName: 'echo' },
    { role: 'tool', content: '', toolCallId: '2', toolName: 'echo' },
    { role: 'assistant', content: 'done' },
  ];
  assert.equal(
    foreignRoundsAsText(history, () => true),
    history,
  );
  const once = foreignRoundsAsText(history, () => false);
  assert.deepEqual(once, [
    history[0],
    history[1],
    { role: 'assistant', content: 'looking\n[tool call echo {"text":"a"}]\n[tool call echo {"text":"b"}]' },
    { role: 'user', content: '[tool result from echo]\necho:a\n\n[tool result from echo]\n(no output)' },
    history[5],
  ]);
  const twice = foreignRoundsAsText(history, () => false);
  assert.ok(once.every((m, i) => m === twice[i]));
  const body = {
    model: 'm',
    messages: history,
    tools: null,
    stream: false,
    disableParallelToolCalls: false,
    maxTokens: 1,
    foreignRoundsAsText: true,
  };
  assert.equal(new TextDecoder().decode(openaiAdapter.buildRequestBytes!(body)), openaiAdapter.buildRequest(body));
});
