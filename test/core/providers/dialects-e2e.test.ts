// The Anthropic and Responses dialects end to end: createAgent over the Node host against the mock
// LLM, streamed and not — text replies, tool round trips, stream errors, compaction, and one
// conversation carried across openai → anthropic → openai-responses with setProvider.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, type Agent } from '../../../src/core/agent.js';
import { EIO } from '../../../src/core/errors.js';
import type { AgentConfig } from '../../../src/core/agent-config.js';
import type { AgentCallbacks } from '../../../src/core/types.js';
import { createNodeHost, type NodeHost } from '../../../src/host/node.js';
import { startMockLlm, type MockLlm } from '../../fixtures/mock-llm.js';
import { echoTool } from '../../fixtures/node-agent-suite.js';
import * as A from '../../fixtures/anthropic-replies.js';
import * as O from '../../fixtures/openai-replies.js';
import * as R from '../../fixtures/responses-replies.js';

let mock: MockLlm;
let host: NodeHost;
const agents: Agent[] = [];

before(async () => {
  mock = await startMockLlm();
  host = createNodeHost({ log: null });
});
after(async () => {
  for (const a of agents) a.close();
  host.close();
  await mock.close();
});

const echo = echoTool;

function cfgFor(kind: 'openai' | 'anthropic' | 'openai-responses', stream: boolean): AgentConfig {
  const path = kind === 'anthropic' ? 'messages' : kind === 'openai-responses' ? 'responses' : 'chat/completions';
  return {
    baseUrl: `${mock.base}/${path}`,
    provider: kind,
    apiKey: `key-${kind}`,
    model: `model-${kind}`,
    stream,
    maxTries: 1,
    systemPrompt: 'Be brief.',
  };
}

function agentFor(kind: 'openai' | 'anthropic' | 'openai-responses', stream: boolean, cb: AgentCallbacks = {}): Agent {
  const a = createAgent(cfgFor(kind, stream), host, cb);
  a.addTool(echo);
  agents.push(a);
  return a;
}

/** The POSTs this test made (the mock is shared, so count from a mark). */
function postsSince(mark: number) {
  return mock.posts.slice(mark);
}

for (const stream of [false, true]) {
  const mode = stream ? 'streamed' : 'whole';

  test(`anthropic ${mode}: text reply, headers and body shape`, async () => {
    const mark = mock.posts.length;
    const a = agentFor('anthropic', stream);
    mock.push(
      stream
        ? A.streamText(['Hel', 'lo'], { usage: { input: 10, output: 2, cacheRead: 500, cacheCreation: 20 } })
        : A.text('Hello', { usage: { input: 10, output: 2, cacheRead: 500, cacheCreation: 20 } }),
    );
    const r = await a.run('hi');
    assert.equal(r.status, 0, r.error);
    assert.equal(r.text, 'Hello');
    assert.equal(a.ctxUsed, 532, 'cache tokens count toward the context in use');
    const [req] = postsSince(mark);
    assert.match(req!.path, /\/v1\/messages$/);
    assert.equal(req!.headers['x-api-key'], 'key-anthropic');
    assert.equal(req!.headers['anthropic-version'], '2023-06-01');
    assert.equal(req!.headers.authorization, undefined);
    assert.match(req!.json.system, /^Be brief\./);
    assert.ok(req!.json.messages.every((m: any) => m.role !== 'system'));
    assert.equal(req!.json.max_tokens, 64000);
    assert.equal(req!.json.stream, stream);
    assert.deepEqual(req!.json.cache_control, { type: 'ephemeral' });
    assert.deepEqual(a.messages.at(-1), { role: 'assistant', content: 'Hello' });
  });

  test(`anthropic ${mode}: tool round trip pairs tool_use and tool_result ids`, async () => {
    const mark = mock.posts.length;
    const a = agentFor('anthropic', stream);
    mock.push(stream ? A.streamToolCall('echo', '{"text":"ping"}', 'toolu_01') : A.toolCall('echo', { text: 'ping' }, 'toolu_01'));
    mock.push(stream ? A.streamText(['got it']) : A.text('got it'));
    const r = await a.run('use the tool');
    assert.equal(r.status, 0, r.error);
    const second = postsSince(mark)[1]!.json;
    const [user, asst, results] = second.messages.slice(-3);
    assert.equal(user.content, 'use the tool');
    assert.deepEqual(asst.content.at(-1), { type: 'tool_use', id: 'toolu_01', name: 'echo', input: { text: 'ping' } });
    assert.deepEqual(results, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'echo:ping' }] });
    assert.deepEqual(second.tools[0], { name: 'echo', description: 'Echo the text back', input_schema: echo.parameters });
    assert.deepEqual(a.messages.at(-1), { role: 'assistant', content: 'got it' });
  });

  test(`responses ${mode}: text reply, bearer auth and input items`, async () => {
    const mark = mock.posts.length;
    const a = agentFor('openai-responses', stream);
    mock.push(
      stream
        ? R.streamText(['Hi ', 'there'], { reasoning: ['thinking'], usage: { input: 40, output: 3 } })
        : R.text('Hi there', { reasoning: ['thinking'], usage: { input: 40, output: 3 } }),
    );
    const r = await a.run('hello');
    assert.equal(r.status, 0, r.error);
    assert.equal(r.text, 'Hi there');
    assert.equal(a.ctxUsed, 43);
    const [req] = postsSince(mark);
    assert.match(req!.path, /\/v1\/responses$/);
    assert.equal(req!.headers.authorization, 'Bearer key-openai-responses');
    assert.equal(req!.json.input[0].role, 'system');
    assert.deepEqual(req!.json.input.at(-1), { role: 'user', content: 'hello' });
    assert.equal(req!.json.store, false);
    assert.equal(req!.json.tools[0].strict, false);
  });

  test(`responses ${mode}: tool round trip sends function_call and function_call_output`, async () => {
    const mark = mock.posts.length;
    const a = agentFor('openai-responses', stream);
    mock.push(stream ? R.streamToolCall('echo', '{"text":"pong"}', 'call_77') : R.toolCall('echo', { text: 'pong' }, 'call_77'));
    mock.push(stream ? R.streamText(['done']) : R.text('done'));
    const r = await a.run('use the tool');
    assert.equal(r.status, 0, r.error);
    const input = postsSince(mark)[1]!.json.input;
    assert.deepEqual(input.slice(-2), [
      { type: 'function_call', call_id: 'call_77', name: 'echo', arguments: '{"text":"pong"}' },
      { type: 'function_call_output', call_id: 'call_77', output: 'echo:pong' },
    ]);
    assert.deepEqual(a.messages.at(-1), { role: 'assistant', content: 'done' });
  });
}

test('anthropic streamed: an error event ends the turn once with its message; the agent stays usable', async () => {
  const statuses: number[] = [];
  const a = agentFor('anthropic', true, { onTurnDone: (st) => statuses.push(st) });
  mock.push(A.errorEvent('Overloaded', { partial: 'Hal' }));
  const r = await a.run('hi');
  assert.equal(r.status, EIO);
  assert.match(a.lastError, /Overloaded/);
  assert.equal(a.state, 'error');
  await new Promise((res) => setTimeout(res, 50));
  assert.deepEqual(statuses, [EIO]);
  mock.push(A.streamText(['fine now']));
  const ok = await a.run('again');
  assert.equal(ok.status, 0, ok.error);
  assert.equal(ok.text, 'fine now');
  assert.deepEqual(statuses, [EIO, 0]);
});

test('responses: a failed response (whole or streamed) is an error, not an empty success', async () => {
  const whole = agentFor('openai-responses', false);
  mock.push(R.failed('The model had an internal error'));
  const r1 = await whole.run('hi');
  assert.equal(r1.status, EIO);
  assert.match(whole.lastError, /internal error/);
  const streamed = agentFor('openai-responses', true);
  mock.push(R.failedEvent('stream broke'));
  const r2 = await streamed.run('hi');
  assert.equal(r2.status, EIO);
  assert.match(streamed.lastError, /stream broke/);
  mock.push(R.errorEvent('rate limited mid-stream'));
  const r3 = await streamed.run('again');
  assert.equal(r3.status, EIO);
  assert.match(streamed.lastError, /rate limited mid-stream/);
});

test('a 200 with an HTML body is a clear error on both dialects', async () => {
  for (const kind of ['anthropic', 'openai-responses'] as const) {
    const a = agentFor(kind, false);
    mock.push({ status: 200, body: '<!DOCTYPE html><html><body>Gateway says hi</body></html>', headers: { 'content-type': 'text/html' } });
    const r = await a.run('hi');
    assert.equal(r.status, EIO, kind);
    assert.match(a.lastError, /not JSON.*Gateway says hi/, kind);
  }
});

test('explicit compaction goes through the active dialect on both', async () => {
  for (const kind of ['anthropic', 'openai-responses'] as const) {
    const mark = mock.posts.length;
    let resolveDone: (status: number) => void = () => {};
    const a = agentFor(kind, false, { onTurnDone: (st) => resolveDone(st) });
    const say = (t: string) => (kind === 'anthropic' ? A.text(t) : R.text(t));
    for (const [p, t] of [
      ['one', 'r1'],
      ['two', 'r2'],
      ['three', 'r3'],
    ]) {
      mock.push(say(t!));
      assert.equal((await a.run(p!)).status, 0);
    }
    mock.push(say('SUMMARY of one'));
    const done = new Promise<number>((resolve) => {
      resolveDone = resolve;
    });
    a.compact();
    assert.equal(await done, 0, a.lastError);
    const req = postsSince(mark).at(-1)!;
    assert.match(req.path, kind === 'anthropic' ? /\/messages$/ : /\/responses$/);
    assert.equal(req.json.stream, false);
    assert.ok(!('tools' in req.json));
    assert.ok(
      a.messages.some((m) => m.role === 'user' && m.content === 'SUMMARY of one'),
      kind,
    );
    assert.ok(!a.messages.some((m) => m.content === 'one'), kind);
  }
});

test('one conversation switched openai → anthropic → openai-responses keeps a valid history', async () => {
  const mark = mock.posts.length;
  const a = agentFor('openai', false);
  mock.push(O.toolCall('echo', { text: 'one' }, 'call_abc'), O.text('first done'));
  assert.equal((await a.run('start')).status, 0);

  a.setProvider(cfgFor('anthropic', true));
  mock.push(A.streamToolCall('echo', '{"text":"two"}', 'toolu_2'), A.streamText(['second done']));
  const r2 = await a.run('continue');
  assert.equal(r2.status, 0, r2.error);

  a.setProvider(cfgFor('openai-responses', false));
  mock.push(R.toolCall('echo', { text: 'three' }, 'call_3'), R.text('third done'));
  const r3 = await a.run('more');
  assert.equal(r3.status, 0, r3.error);

  const posts = postsSince(mark);
  assert.equal(posts.length, 6);
  // Anthropic's first request carries the OpenAI-era call and result as a paired tool_use/tool_result.
  const anth = posts[2]!;
  assert.match(anth.path, /\/messages$/);
  assert.equal(anth.headers['x-api-key'], 'key-anthropic');
  assert.equal(anth.headers.authorization, undefined);
  const msgs = anth.json.messages;
  assert.deepEqual(
    msgs.map((m: any) => m.role),
    ['user', 'assistant', 'user', 'assistant', 'user'],
  );
  assert.deepEqual(msgs[1].content, [{ type: 'tool_use', id: 'call_abc', name: 'echo', input: { text: 'one' } }]);
  assert.deepEqual(msgs[2].content, [{ type: 'tool_result', tool_use_id: 'call_abc', content: 'echo:one' }]);
  assert.equal(posts[3]!.json.messages.at(-1).content[0].tool_use_id, 'toolu_2');
  // Responses gets every call from both earlier dialects as function_call/function_call_output pairs.
  const resp = posts[4]!;
  assert.match(resp.path, /\/responses$/);
  assert.equal(resp.headers.authorization, 'Bearer key-openai-responses');
  const calls = resp.json.input.filter((i: any) => i.type === 'function_call').map((i: any) => i.call_id);
  const outs = resp.json.input.filter((i: any) => i.type === 'function_call_output').map((i: any) => [i.call_id, i.output]);
  assert.deepEqual(calls, ['call_abc', 'toolu_2']);
  assert.deepEqual(outs, [
    ['call_abc', 'echo:one'],
    ['toolu_2', 'echo:two'],
  ]);
  assert.deepEqual(
    posts[5]!.json.input.slice(-2).map((i: any) => i.call_id),
    ['call_3', 'call_3'],
  );
  assert.deepEqual(
    a.messages.filter((m) => m.role === 'assistant' && !m.toolCalls).map((m) => m.content),
    ['first done', 'second done', 'third done'],
  );
});
