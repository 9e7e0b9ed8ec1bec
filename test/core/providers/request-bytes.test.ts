// Request bodies without reasoning stay byte for byte what they were before reasoning was carried
// through tool loops: with no reasoning setting and a server that returns none, every dialect,
// streamed and not, sends exactly the recorded bodies — three tool rounds, a second turn, and a
// compaction's summary request. On OpenAI chat, reasoning text the server returns changes only
// the messages it came with: the field goes in after their content, every other byte stays; so
// does a tool call's extra_content (Gemini's thought signature), after that call's function.
//
// test/fixtures/request-bodies.json was recorded from the code before reasoning support
// (commit e56e229) with `RECORD_REQUEST_BODIES=1 npm test -- test/core/providers/request-bytes`.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createAgent } from '../../../src/core/agent.js';
import type { AgentConfig } from '../../../src/core/agent-config.js';
import type { ProviderKind } from '../../../src/core/types.js';
import { createNodeHost, type NodeHost } from '../../../src/host/node.js';
import { startMockLlm, type MockLlm, type Reply } from '../../fixtures/mock-llm.js';
import { echoTool } from '../../fixtures/node-agent-suite.js';
import * as A from '../../fixtures/anthropic-replies.js';
import * as O from '../../fixtures/openai-replies.js';
import * as R from '../../fixtures/responses-replies.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/request-bodies.json', import.meta.url));
const RECORD = process.env.RECORD_REQUEST_BODIES === '1';

let mock: MockLlm;
let host: NodeHost;
const recorded: Record<string, string[]> = RECORD ? {} : JSON.parse(readFileSync(FIXTURE, 'utf8'));

before(async () => {
  mock = await startMockLlm();
  host = createNodeHost({ log: null });
});
after(async () => {
  host.close();
  await mock.close();
  if (RECORD) writeFileSync(FIXTURE, JSON.stringify(recorded, null, 1) + '\n');
});

const echo = echoTool;

const PATH: Record<string, string> = { openai: 'chat/completions', anthropic: 'messages', 'openai-responses': 'responses' };

/** A thought signature as Gemini puts it on a call. */
const SIGNED = { google: { thought_signature: 'CiQBsig==' } };

/**
 * Three tool rounds and a closing text, then a second turn's text, then the summary; on OpenAI
 * chat, with reasoning text on the closing text, or with `extra` the first call signed.
 */
function replies(kind: ProviderKind, stream: boolean, reasoning: boolean | 'extra' = false): Reply[] {
  const args = (n: number) => `{"text":"r${n}"}`;
  if (kind === 'anthropic') {
    return [
      stream
        ? A.streamToolCall('echo', args(1), 'toolu_1', { text: 'First.' })
        : A.toolCall('echo', args(1), 'toolu_1', { text: 'First.' }),
      stream ? A.streamToolCall('echo', args(2), 'toolu_2') : A.toolCall('echo', args(2), 'toolu_2'),
      stream
        ? A.streamToolCall('echo', args(3), 'toolu_3')
        : A.toolCalls([
            { name: 'echo', args: args(3), id: 'toolu_3' },
            { name: 'echo', args: args(4), id: 'toolu_4' },
          ]),
      stream ? A.streamText(['do', 'ne']) : A.text('done'),
      stream ? A.streamText(['again']) : A.text('again'),
      A.text('the summary'),
    ];
  }
  if (kind === 'openai-responses') {
    return [
      stream ? R.streamToolCall('echo', args(1), 'call_1', { text: 'First.' }) : R.toolCall('echo', args(1), 'call_1', { text: 'First.' }),
      stream ? R.streamToolCall('echo', args(2), 'call_2') : R.toolCall('echo', args(2), 'call_2'),
      stream
        ? R.streamToolCall('echo', args(3), 'call_3')
        : R.toolCalls([
            { name: 'echo', args: args(3), id: 'call_3' },
            { name: 'echo', args: args(4), id: 'call_4' },
          ]),
      stream ? R.streamText(['do', 'ne']) : R.text('done'),
      stream ? R.streamText(['again']) : R.text('again'),
      R.text('the summary'),
    ];
  }
  const extra = reasoning === 'extra' ? SIGNED : undefined;
  if (extra) reasoning = false;
  return [
    stream ? O.streamToolCall('echo', args(1), 'call_1', { extra }) : O.toolCalls([{ name: 'echo', args: args(1), id: 'call_1', extra }]),
    stream ? O.streamToolCall('echo', args(2), 'call_2') : O.toolCall('echo', args(2), 'call_2'),
    stream
      ? O.streamToolCall('echo', args(3), 'call_3')
      : O.toolCalls([
          { name: 'echo', args: args(3), id: 'call_3' },
          { name: 'echo', args: args(4), id: 'call_4' },
        ]),
    reasoning
      ? stream
        ? O.streamText(['do', 'ne'], { reasoning: ['mull', 'ing'] })
        : O.text('done', { reasoning: 'mulling' })
      : stream
        ? O.streamText(['do', 'ne'])
        : O.text('done'),
    stream ? O.streamText(['again']) : O.text('again'),
    O.text('the summary'),
  ];
}

/** The six request bodies of the script above. */
async function bodiesOf(kind: ProviderKind, stream: boolean, reasoning: boolean | 'extra' = false): Promise<string[]> {
  mock.reset();
  const cfg: AgentConfig = {
    baseUrl: `${mock.base}/${PATH[kind]}`,
    provider: kind,
    apiKey: 'k',
    model: `model-${kind}`,
    stream,
    maxTries: 1,
    systemPrompt: 'Be brief.',
    clock: () => new Date(Date.UTC(2025, 0, 2, 3, 4, 5)),
  };
  const a = createAgent(cfg, host);
  a.addTool(echo);
  try {
    mock.push(...replies(kind, stream, reasoning));
    const first = await a.run('use the tool three times');
    assert.equal(first.status, 0, first.error);
    const second = await a.run('and once more');
    assert.equal(second.status, 0, second.error);
    await a.compactAndWait();
  } finally {
    a.close();
  }
  const bodies = mock.posts.map((p) => p.body);
  assert.equal(bodies.length, 6);
  return bodies;
}

for (const stream of [false, true]) {
  const name = `openai-${stream ? 'streamed' : 'whole'}`;
  test(`${name}: reasoning text goes in after the content of the message it came with; every other byte is the recorded one`, async () => {
    if (RECORD) return;
    const want = recorded[name];
    assert.ok(want, `no recorded bodies for ${name}`);
    const bodies = await bodiesOf('openai', stream, true);
    const done = '{"role":"assistant","content":"done"}';
    assert.ok(want[4]!.includes(done));
    assert.deepEqual(bodies.slice(0, 4), want.slice(0, 4), 'no reasoning yet');
    assert.equal(bodies[4], want[4]!.replace(done, '{"role":"assistant","content":"done","reasoning_content":"mulling"}'));
    assert.equal(bodies[5], want[5], 'the summary request carries none');
  });
}

for (const stream of [false, true]) {
  const name = `openai-${stream ? 'streamed' : 'whole'}`;
  test(`${name}: a call's extra_content goes in after that call's function; every other byte is the recorded one`, async () => {
    if (RECORD) return;
    const want = recorded[name];
    assert.ok(want, `no recorded bodies for ${name}`);
    const bodies = await bodiesOf('openai', stream, 'extra');
    const call = '"function":{"name":"echo","arguments":"{\\"text\\":\\"r1\\"}"}}';
    const signed = call.replace(/\}$/, ',"extra_content":{"google":{"thought_signature":"CiQBsig=="}}}');
    assert.equal(bodies[0], want[0], 'nothing signed yet');
    for (let i = 1; i < 5; i++) {
      assert.ok(want[i]!.includes(call), `request ${i + 1} has the call`);
      assert.equal(bodies[i], want[i]!.replace(call, signed), `request ${i + 1}: only the signature added`);
    }
    assert.equal(bodies[5], want[5], 'the summary request carries none');
  });
}

for (const kind of ['openai', 'anthropic', 'openai-responses'] as const) {
  for (const stream of [false, true]) {
    const name = `${kind}-${stream ? 'streamed' : 'whole'}`;
    test(`${name}: request bodies without reasoning are the recorded bytes`, async () => {
      const bodies = await bodiesOf(kind, stream);
      if (RECORD) {
        recorded[name] = bodies;
        return;
      }
      const want = recorded[name];
      assert.ok(want, `no recorded bodies for ${name}`);
      for (let i = 0; i < want.length; i++) assert.equal(bodies[i], want[i], `request ${i + 1} of ${name}`);
    });
  }
}
