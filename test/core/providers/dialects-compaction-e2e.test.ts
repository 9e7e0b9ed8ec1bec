// Mid-chain auto-compaction and context accounting on the Anthropic and Responses dialects, end
// to end through the agent against the mock LLM: a tool-call reply whose usage crosses the
// threshold ⇒ a summary request built in the active dialect ⇒ the chain resumes on the folded
// history; Anthropic cache tokens count toward the context in use.

import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { SUMMARY_PROMPT } from '../../../src/core/history.js';
import type { AgentConfig } from '../../../src/core/agent-config.js';
import type { Message } from '../../../src/core/types.js';
import { echoTool, harness } from '../../fixtures/agent-harness.js';
import { startMockLlm, type MockLlm } from '../../fixtures/mock-llm.js';
import * as A from '../../fixtures/anthropic-replies.js';
import * as R from '../../fixtures/responses-replies.js';

let mock: MockLlm;
before(async () => {
  mock = await startMockLlm();
});
after(async () => {
  await mock.close();
});
beforeEach(() => {
  mock.requests.length = 0;
  mock.posts.length = 0;
});

const anthropic = (o: Partial<AgentConfig> = {}): Partial<AgentConfig> => ({
  provider: 'anthropic',
  baseUrl: `${mock.base}/messages`,
  apiKey: 'sk-ant',
  systemPrompt: 'Be brief.',
  ...o,
});
const responses = (o: Partial<AgentConfig> = {}): Partial<AgentConfig> => ({
  provider: 'openai-responses',
  baseUrl: `${mock.base}/responses`,
  systemPrompt: 'Be brief.',
  ...o,
});

/** Three earlier exchanges, so the fold has something to fold. */
const earlier: Message[] = [1, 2, 3].flatMap((i) => [
  { role: 'user' as const, content: `old ${i}` },
  { role: 'assistant' as const, content: `reply ${i}` },
]);

/** The text of a Messages-API message (string content, or its last text block). */
function lastText(msg: any): string {
  return typeof msg.content === 'string' ? msg.content : msg.content.at(-1).text;
}

for (const stream of [false, true]) {
  const mode = stream ? 'streamed' : 'whole';

  test(`anthropic ${mode}: mid-chain auto-compaction builds an Anthropic summary request, then resumes`, async () => {
    const usage = { input: 99000, output: 2000 }; // ≥ 100 000 with the context size unknown
    mock.push(
      stream ? A.streamToolCall('t', '{}', 'toolu_1', { usage }) : A.toolCall('t', {}, 'toolu_1', { usage }),
      A.text('SUMMARY OF WORK'),
      stream ? A.streamText(['final']) : A.text('final'),
    );
    const r = harness(mock, { cfg: anthropic({ stream }), tools: [echoTool('t', 'out', { noPrompt: true })] });
    r.agent.restoreHistory(earlier);
    const d = r.turnDone();
    r.agent.submit('first');
    assert.equal(await d, 0, r.agent.lastError);
    assert.equal(mock.posts.length, 3);
    assert.ok(mock.posts.every((p) => p.path === '/v1/messages' && p.headers['x-api-key'] === 'sk-ant'));

    const summary = mock.posts[1]!.json;
    assert.ok(!('tools' in summary) && !('tool_choice' in summary), 'no tools in the summary request');
    assert.equal(summary.stream, false);
    assert.match(summary.system, /^Be brief\./, 'system prompt top-level');
    assert.ok(summary.messages.every((m: any) => m.role !== 'system'));
    assert.equal(summary.messages.at(-1).role, 'user');
    assert.equal(lastText(summary.messages.at(-1)), SUMMARY_PROMPT, 'the summary prompt is the last user turn');
    assert.ok(!/"tool_(use|result)"/.test(JSON.stringify(summary.messages)), 'calls rendered as text without tools');
    assert.match(JSON.stringify(summary.messages), /\[tool call t \{\}\]/);

    const resumed = mock.posts[2]!.json;
    assert.equal(resumed.stream, stream);
    assert.equal(resumed.tools[0].name, 't');
    assert.equal(resumed.messages[0].content[0].text, 'SUMMARY OF WORK');
    assert.ok(!JSON.stringify(resumed.messages).includes('old 1'), 'folded turns are gone');
    assert.deepEqual(resumed.messages.at(-2).content, [{ type: 'tool_use', id: 'toolu_1', name: 't', input: {} }]);
    assert.deepEqual(resumed.messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'out' }] });

    assert.equal(r.text, 'final');
    assert.equal(r.doneCount, 1, 'mid-chain compaction never ends the turn');
    assert.equal(r.agent.takeMidChainCompactSucceeded(), true);
    assert.equal(r.agent.takeMidChainCompactError(), false);
    assert.ok(
      r.notices.some((n) => /^compacted 4 messages/.test(n)),
      r.notices.join(),
    );
    assert.equal(r.agent.overAutocompactThreshold(), false);
  });

  test(`responses ${mode}: mid-chain auto-compaction builds a Responses summary request, then resumes`, async () => {
    const usage = { input: 99000, output: 2000 };
    mock.push(
      stream ? R.streamToolCall('t', '{}', 'call_1', { usage }) : R.toolCall('t', {}, 'call_1', { usage }),
      R.text('SUMMARY OF WORK'),
      stream ? R.streamText(['final']) : R.text('final'),
    );
    const r = harness(mock, {
      cfg: responses({ stream, disableParallelToolCalls: true }),
      tools: [echoTool('t', 'out', { noPrompt: true })],
    });
    r.agent.restoreHistory(earlier);
    const d = r.turnDone();
    r.agent.submit('first');
    assert.equal(await d, 0, r.agent.lastError);
    assert.equal(mock.posts.length, 3);
    assert.ok(mock.posts.every((p) => p.path === '/v1/responses' && p.headers.authorization === 'Bearer test'));

    const summary = mock.posts[1]!.json;
    assert.deepEqual(Object.keys(summary), ['model', 'input', 'stream', 'store'], 'no tools, tool_choice or parallel_tool_calls');
    assert.equal(summary.stream, false);
    assert.match(summary.input[0].content, /^Be brief\./);
    assert.deepEqual(summary.input.at(-1), { role: 'user', content: SUMMARY_PROMPT });
    assert.deepEqual(
      summary.input.filter((i: any) => i.type).map((i: any) => [i.type, i.call_id]),
      [
        ['function_call', 'call_1'],
        ['function_call_output', 'call_1'],
      ],
    );

    const resumed = mock.posts[2]!.json;
    assert.equal(resumed.stream, stream);
    assert.equal(resumed.tools[0].name, 't');
    assert.equal(resumed.parallel_tool_calls, false);
    assert.deepEqual(resumed.input[1], { role: 'user', content: 'SUMMARY OF WORK' });
    assert.ok(!JSON.stringify(resumed.input).includes('old 1'));
    assert.deepEqual(resumed.input.slice(-2), [
      { type: 'function_call', call_id: 'call_1', name: 't', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'out' },
    ]);

    assert.equal(r.text, 'final');
    assert.equal(r.doneCount, 1);
    assert.equal(r.agent.takeMidChainCompactSucceeded(), true);
    assert.ok(
      r.notices.some((n) => /^compacted 4 messages/.test(n)),
      r.notices.join(),
    );
  });

  test(`anthropic ${mode}: cache read/creation tokens make overAutocompactThreshold() true`, async () => {
    const cached = { input: 12, output: 3, cacheRead: 90000, cacheCreation: 10000 };
    const r = harness(mock, { cfg: anthropic({ stream }) });
    mock.push(stream ? A.streamText(['hi'], { usage: cached }) : A.text('hi', { usage: cached }));
    assert.equal((await r.agent.run('one')).status, 0);
    assert.equal(r.agent.ctxUsed, 100015);
    assert.equal(r.agent.overAutocompactThreshold(), true, 'unknown context: 100 000-token cap reached through the cache');
    assert.deepEqual([r.usage.at(-1).cacheReadTokens, r.usage.at(-1).cacheCreationTokens], [90000, 10000]);

    // With a known context: 7 005 of 10 000 is over 70 %; the uncached input alone would not be.
    const k = harness(mock, { cfg: anthropic({ stream, contextSize: 10000 }) });
    mock.push(stream ? A.streamText(['a'], { usage: { input: 5, output: 0 } }) : A.text('a', { usage: { input: 5, output: 0 } }));
    assert.equal((await k.agent.run('one')).status, 0);
    assert.equal(k.agent.overAutocompactThreshold(), false);
    mock.push(
      stream
        ? A.streamText(['b'], { usage: { input: 5, output: 0, cacheRead: 7000 } })
        : A.text('b', { usage: { input: 5, output: 0, cacheRead: 7000 } }),
    );
    assert.equal((await k.agent.run('two')).status, 0);
    assert.equal(k.agent.overAutocompactThreshold(), true);
  });
}
