// The one event vocabulary (AgentEvent through agent.subscribe) and the seams an interactive
// front end needs: turn_start origins, compaction phases, end-of-turn autocompaction, measured
// tokens per second, permission requests that say when they are moot, the status-bar getters and
// a model-list probe for any endpoint.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import * as oa from '../fixtures/openai-replies.js';
import * as A from '../fixtures/anthropic-replies.js';
import * as R from '../fixtures/responses-replies.js';
import { harness, echoTool } from '../fixtures/agent-harness.js';
import { createAgent } from '../../src/core/agent.js';
import { listModels } from '../../src/core/probes.js';
import { createNodeHost } from '../../src/host/node.js';
import { EAGAIN, ECANCELED, EIO } from '../../src/core/errors.js';
import { NOTHING_TO_AUTOCOMPACT, NOTHING_TO_COMPACT } from '../../src/core/compaction.js';
import { CANCELLED_REPLY_MARK, cancelledReplyText } from '../../src/core/cancelled-reply.js';
import type { AgentEvent } from '../../src/core/events.js';
import type { Message, PermissionRequest, ProviderKind } from '../../src/core/types.js';

const mock = await mockLlmPerFile();

const settle = () => new Promise((r) => setTimeout(r, 30));
const history = (n: number) =>
  Array.from({ length: n }, (_, i) => i + 1).flatMap((i) => [
    { role: 'user' as const, content: `old question ${i}` },
    { role: 'assistant' as const, content: `old answer ${i}` },
  ]);

/** Subscribe and record every event. */
function record(agent: { subscribe(fn: (e: AgentEvent) => void): () => void }) {
  const events: AgentEvent[] = [];
  const stop = agent.subscribe((e) => events.push(e));
  return { events, stop, types: () => events.map((e) => e.type) };
}

test('subscribe sees every event, the callbacks are derived from the same ones, unsubscribe stops it', async () => {
  mock.push(
    oa.toolCall('t', {}, 'c1', { usage: { prompt: 5, completion: 1 } }),
    oa.text('answer', { usage: { prompt: 9, completion: 2 } }),
  );
  const r = harness(mock, { tools: [echoTool('t', 'out', { noPrompt: true })] });
  const rec = record(r.agent);
  assert.equal((await r.agent.run('go')).status, 0);
  const t = rec.types();
  assert.equal(t[0], 'turn_start');
  assert.equal(t.at(-1), 'turn_done');
  for (const k of ['message', 'state', 'finish', 'usage', 'tool_batch', 'tool_begin', 'tool_result', 'text'])
    assert.ok(t.includes(k as never), `${k} missing: ${t.join(' ')}`);
  // The callbacks saw the same things in the same order.
  const asCallback = rec.events.flatMap((e): string[] => {
    switch (e.type) {
      case 'text':
        return [`text:${e.text}`];
      case 'tool_begin':
        return [`begin:${e.name}:${e.args}`];
      case 'tool_result':
        return [`result:${e.name}:${e.outcome}`];
      case 'tool_batch':
        return [`batch:${e.completed}/${e.total}`];
      case 'finish':
        return [`finish:${e.reason}`];
      case 'usage':
        return [`usage:${e.usage.promptTokens}/${e.usage.completionTokens}`];
      case 'state':
        return [`state:${e.state}`];
      case 'message':
        return [`message:${e.message.role}`];
      case 'turn_done':
        return [`done:${e.status}`];
      default:
        return [];
    }
  });
  const start = r.events.indexOf('message:user');
  assert.deepEqual(r.events.slice(start), asCallback);
  rec.stop();
  mock.push(oa.text('again'));
  await r.agent.run('more');
  assert.equal(rec.types().at(-1), 'turn_done');
  assert.equal(rec.events.filter((e) => e.type === 'turn_done').length, 1, 'nothing after unsubscribe');
});

test('turn_start carries its origin: submit, notify (queued and idle), compact, resume', async () => {
  mock.push({ ...oa.text('one'), delayMs: 30 }, oa.text('two'), oa.text('three'));
  const r = harness(mock);
  r.agent.restoreHistory(history(3));
  const rec = record(r.agent);
  const starts = () => rec.events.filter((e) => e.type === 'turn_start');
  r.agent.submit('first');
  r.agent.notify('queued note');
  while (starts().length < 2 || r.agent.busy) await settle();
  r.agent.notify('idle note');
  while (r.agent.busy) await settle();
  mock.push(oa.text('SUMMARY'), oa.text('SUMMARY 2'));
  assert.equal((await r.agent.compactAndWait()).status, 0);
  assert.equal((await r.agent.compactAndWait('resume')).status, 0);
  assert.deepEqual(starts(), [
    { type: 'turn_start', origin: 'submit', prompt: 'first' },
    { type: 'turn_start', origin: 'notify', prompt: 'queued note' },
    { type: 'turn_start', origin: 'notify', prompt: 'idle note' },
    { type: 'turn_start', origin: 'compact' },
    { type: 'turn_start', origin: 'resume' },
  ]);
  // Every turn_start is followed by exactly one turn_done before the next turn_start.
  const seq = rec.events.filter((e) => e.type === 'turn_start' || e.type === 'turn_done').map((e) => e.type);
  assert.deepEqual(seq, Array(5).fill(['turn_start', 'turn_done']).flat());
});

test('a tool that notifies (bg_exec) starts a notify turn after the current one', async () => {
  mock.push(oa.toolCall('bg', {}), oa.text('started it'), oa.text('noted the result'));
  const r = harness(mock, {
    tools: [
      {
        name: 'bg',
        noPrompt: true,
        invoke: (inv) => {
          inv.complete('job 1 started');
          setTimeout(() => inv.notify('job 1 finished'), 20);
        },
      },
    ],
  });
  const rec = record(r.agent);
  assert.equal((await r.agent.run('start a job')).status, 0);
  while (rec.events.filter((e) => e.type === 'turn_done').length < 2) await settle();
  assert.deepEqual(
    rec.events.filter((e) => e.type === 'turn_start').map((e) => (e as { origin: string }).origin),
    ['submit', 'notify'],
  );
  assert.equal(mock.posts[2]!.json.messages.at(-1).content, 'job 1 finished');
});

test('compaction events: manual success with what was folded; failure with the error', async () => {
  const r = harness(mock);
  r.agent.restoreHistory(history(3));
  const rec = record(r.agent);
  mock.push(oa.text('THE SUMMARY'));
  assert.equal((await r.agent.compactAndWait()).status, 0);
  const c = rec.events.filter((e) => e.type === 'compaction');
  assert.deepEqual(
    c.map((e) => `${e.kind}:${e.phase}`),
    ['manual:started', 'manual:succeeded'],
  );
  const ok = c[1]!;
  assert.ok(ok.phase === 'succeeded');
  assert.deepEqual(ok.record, { index: 0, count: 2, summary: 'THE SUMMARY' });
  assert.equal(ok.messagesBefore, 7);
  assert.equal(ok.messagesAfter, 6);
  assert.ok(ok.tokensAfter < ok.tokensBefore, `${ok.tokensBefore} → ${ok.tokensAfter}`);
  // The notice and onCompaction say the same.
  const notice = rec.events.find((e) => e.type === 'notice');
  assert.ok(
    notice?.type === 'notice' &&
      notice.text.includes(`compacted 2 messages into a summary: 7 → 6 messages, ~${ok.tokensBefore} → ~${ok.tokensAfter} tokens`),
  );
  const order = rec.types();
  assert.ok(order.indexOf('compaction') < order.indexOf('state'), 'started before the request');
  // Nothing to fold: no request, no compaction event, a notice; EAGAIN, but not an error.
  const posts = mock.posts.length;
  const short = harness(mock);
  short.agent.restoreHistory(history(1));
  const recShort = record(short.agent);
  const res = await short.agent.compactAndWait();
  assert.equal(res.status, EAGAIN);
  assert.equal(res.error, undefined);
  assert.equal(mock.posts.length, posts, 'no summary request');
  assert.deepEqual(
    recShort.events.filter((e) => e.type !== 'message'),
    [
      { type: 'turn_start', origin: 'compact' },
      { type: 'notice', text: NOTHING_TO_COMPACT },
      { type: 'state', state: 'complete' },
      { type: 'turn_done', status: EAGAIN },
    ],
  );
  assert.equal(short.agent.lastError, '');
  // A failed summary request.
  mock.push(oa.httpError(500, 'down'));
  const r2 = harness(mock, { cfg: { maxTries: 1 } });
  r2.agent.restoreHistory(history(3));
  const rec2 = record(r2.agent);
  assert.equal((await r2.agent.compactAndWait()).status, EIO);
  assert.deepEqual(rec2.events.filter((e) => e.type === 'compaction').at(-1), {
    type: 'compaction',
    kind: 'manual',
    phase: 'failed',
    error: 'compaction request failed: HTTP 500: down',
  });
});

test('mid-chain compaction events agree with the consuming take* flags', async () => {
  mock.push(oa.toolCall('t', {}, 'c1', { usage: { prompt: 99000, completion: 2000 } }), oa.text('SUMMARY OF WORK'), oa.text('final'));
  const seen: string[] = [];
  let r!: ReturnType<typeof harness>;
  r = harness(mock, { tools: [echoTool('t', 'out', { noPrompt: true })] });
  r.agent.restoreHistory(history(3));
  r.agent.subscribe((e) => {
    if (e.type !== 'compaction') return;
    // Each flag is already up when its event arrives.
    if (e.phase === 'started') seen.push(`started:${r.agent.takeMidChainCompactStarted()}:used=${r.agent.ctxUsed}`);
    if (e.phase === 'succeeded') seen.push(`succeeded:${r.agent.takeMidChainCompactSucceeded()}:${e.record.count}`);
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.deepEqual(seen, ['started:true:used=0', 'succeeded:true:4']);
  assert.equal(r.agent.takeMidChainCompactError(), false);

  // Nothing to fold: no compaction starts (no request), so no flag goes up; a notice says why.
  mock.push(oa.toolCall('t', {}, 'c1', { usage: { prompt: 99000, completion: 2000 } }), oa.text('final'));
  const r2 = harness(mock, { tools: [echoTool('t', 'out', { noPrompt: true })] });
  const rec = record(r2.agent);
  const posts = mock.posts.length;
  assert.equal((await r2.agent.run('only turn')).status, 0);
  assert.equal(mock.posts.length, posts + 2);
  assert.deepEqual(
    rec.events.filter((e) => e.type === 'compaction'),
    [],
  );
  assert.deepEqual(
    rec.events.filter((e) => e.type === 'notice'),
    [{ type: 'notice', text: NOTHING_TO_AUTOCOMPACT }],
  );
  assert.equal(r2.agent.takeMidChainCompactError(), false);
  assert.equal(r2.agent.takeMidChainCompactStarted(), false);
  assert.equal(r2.agent.lastError, '');
});

test('autocompactAtTurnEnd: a turn over the threshold is followed by a compaction turn; off by default', async () => {
  const over = { usage: { prompt: 800, completion: 50 } };
  mock.push(oa.text('long answer', over), oa.text('THE SUMMARY'));
  const r = harness(mock, { cfg: { contextSize: 1000, autocompactAtTurnEnd: true } });
  r.agent.restoreHistory(history(3));
  const rec = record(r.agent);
  assert.equal((await r.agent.run('go')).status, 0);
  while (r.agent.busy) await settle();
  assert.deepEqual(
    rec.events.filter((e) => e.type === 'turn_start').map((e) => (e as { origin: string }).origin),
    ['submit', 'autocompact'],
  );
  assert.deepEqual(
    rec.events.filter((e) => e.type === 'compaction').map((e) => `${e.kind}:${e.phase}`),
    ['end_of_turn:started', 'end_of_turn:succeeded'],
  );
  assert.equal(r.agent.overAutocompactThreshold(), false);
  assert.equal(mock.posts.length, 2);
  assert.match(mock.posts[1]!.body, /Summarize the conversation/);
  assert.ok(r.agent.messages.some((m) => m.content === 'THE SUMMARY'));

  // A failed turn is not compacted; neither is any turn without the option.
  mock.reset();
  const failing = harness(mock, { cfg: { contextSize: 100, autocompactAtTurnEnd: true, maxTries: 1 } });
  failing.agent.restoreHistory(history(3));
  assert.equal(failing.agent.overAutocompactThreshold(), true);
  mock.push(oa.httpError(400, 'no'));
  assert.equal((await failing.agent.run('fails')).status, EIO);
  await settle();
  assert.equal(failing.agent.busy, false);
  assert.equal(mock.posts.length, 1, 'no summary request after a failed turn');
  mock.push(oa.text('x', over));
  const plain = harness(mock, { cfg: { contextSize: 1000 } });
  plain.agent.restoreHistory(history(3));
  assert.equal((await plain.agent.run('go')).status, 0);
  await settle();
  assert.equal(plain.agent.busy, false);
  assert.equal(mock.posts.length, 2, 'no summary request: the option is off');
  assert.equal(plain.agent.overAutocompactThreshold(), true);
});

test('autocompactAtTurnEnd with nothing to fold: no compaction turn, no request, said once; folds once it can', async () => {
  const over = { usage: { prompt: 800, completion: 50 } };
  const r = harness(mock, { cfg: { contextSize: 1000, autocompactAtTurnEnd: true } });
  const rec = record(r.agent);
  const turn = async (prompt: string) => {
    mock.push(oa.text(`answer to ${prompt}`, over));
    assert.equal((await r.agent.run(prompt)).status, 0);
    await settle();
    assert.equal(r.agent.busy, false);
  };
  await turn('one');
  await turn('two');
  assert.equal(mock.posts.length, 2, 'no summary request');
  assert.deepEqual(
    rec.events.filter((e) => e.type === 'turn_start').map((e) => (e as { origin: string }).origin),
    ['submit', 'submit'],
  );
  assert.deepEqual(
    rec.events.filter((e) => e.type === 'notice'),
    [{ type: 'notice', text: NOTHING_TO_AUTOCOMPACT }],
    'said once',
  );
  // The state stays as the turn left it.
  assert.equal(r.agent.state, 'complete');
  assert.equal(r.agent.lastError, '');
  assert.ok(!rec.events.some((e) => e.type === 'state' && e.state === 'error'));
  // A third turn leaves something to fold: the compaction runs.
  mock.push(oa.text('THE SUMMARY'));
  await turn('three');
  while (r.agent.busy) await settle();
  assert.equal(mock.posts.length, 4);
  assert.match(mock.posts[3]!.body, /Summarize the conversation/);
  assert.ok(r.agent.messages.some((m) => m.content === 'THE SUMMARY'));
});

test('autocompactAtTurnEnd after a cancelled turn; queued notifications wait for the compaction', async () => {
  mock.push(oa.toolCall('slow', {}, 'c1', { usage: { prompt: 900, completion: 10 } }), oa.text('THE SUMMARY'), oa.text('noted'));
  let r!: ReturnType<typeof harness>;
  r = harness(mock, {
    cfg: { contextSize: 1000, autocompactAtTurnEnd: true },
    tools: [
      {
        name: 'slow',
        noPrompt: true,
        invoke: () => {
          r.agent.notify('while busy');
          setTimeout(() => r.agent.cancel(), 10);
        },
      },
    ],
  });
  r.agent.restoreHistory(history(3));
  const rec = record(r.agent);
  r.agent.submit('go');
  while (rec.events.filter((e) => e.type === 'turn_done').length < 3) await settle();
  const turns = rec.events
    .filter((e) => e.type === 'turn_start' || e.type === 'turn_done')
    .map((e) => (e.type === 'turn_start' ? e.origin : `done:${e.status}`));
  assert.deepEqual(turns, ['submit', `done:${ECANCELED}`, 'autocompact', 'done:0', 'notify', 'done:0']);
  assert.equal(mock.posts[2]!.json.messages.at(-1).content, 'while busy');
});

for (const kind of ['openai', 'anthropic', 'openai-responses'] as const) {
  test(`tokens per second measured from the stream when the server reports none (${kind})`, async () => {
    const path = kind === 'anthropic' ? 'messages' : kind === 'openai-responses' ? 'responses' : 'chat/completions';
    const parts = ['one ', 'two ', 'three ', 'four'];
    const reply =
      kind === 'anthropic'
        ? A.streamText(parts, { usage: { input: 10, output: 21 }, chunkDelayMs: 15 })
        : kind === 'openai-responses'
          ? R.streamText(parts, { usage: { input: 10, output: 21 }, chunkDelayMs: 15 })
          : oa.streamText(parts, { usage: { prompt: 10, completion: 21 }, chunkDelayMs: 15 });
    mock.push(reply);
    // The agent reads its host's clock as each delta arrives and emits the text at once; the
    // reading last taken when a text event is seen is the one the measurement used (a subscriber's
    // own clock would add the machine's scheduling noise to the expectation).
    const base = createNodeHost({ log: null });
    let lastReading = 0;
    const host = { ...base, now: () => (lastReading = performance.now()) };
    const r = harness(mock, { host, cfg: { baseUrl: `${mock.base}/${path}`, provider: kind as ProviderKind, stream: true } });
    const rec = record(r.agent);
    const at: number[] = [];
    r.agent.subscribe((e) => {
      if (e.type === 'text') at.push(lastReading);
    });
    assert.equal((await r.agent.run('q')).status, 0);
    const u = rec.events.find((e) => e.type === 'usage');
    assert.ok(u?.type === 'usage');
    assert.equal(u.usage.tokensPerSec, 0, 'the usage itself keeps what the server said');
    const span = at.at(-1)! - at[0]!;
    if (span > 0) {
      assert.equal(u.measured, true);
      // 21 tokens are 20 intervals after the first one.
      const expected = (20 * 1000) / span;
      assert.ok(Math.abs(u.tokensPerSec - expected) / expected < 1e-9, `${u.tokensPerSec} tok/s, expected ${expected}`);
    } else {
      // Every delta came in one read (a stalled machine): nothing to measure.
      assert.deepEqual([u.tokensPerSec, u.measured], [0, false]);
    }
    assert.deepEqual(r.usage[0], u.usage, 'onUsage gets the same usage');
    r.agent.close();
    base.close();
  });
}

test("the server's tokens per second win over the measurement; a whole reply measures nothing", async () => {
  mock.push(
    oa.streamText(['a', 'b', 'c'], { usage: { prompt: 1, completion: 9, tps: 42.5 }, chunkDelayMs: 10 }),
    oa.text('whole', { usage: { prompt: 1, completion: 9 } }),
  );
  const r = harness(mock, { cfg: { stream: true } });
  const rec = record(r.agent);
  await r.agent.run('q');
  await r.agent.run('q2');
  const us = rec.events.filter((e) => e.type === 'usage');
  assert.deepEqual(
    us.map((e) => e.type === 'usage' && [e.tokensPerSec, e.measured]),
    [
      [42.5, false],
      [0, false],
    ],
  );
});

test('a permission request carries the call id and is aborted when the turn is cancelled', async () => {
  mock.push(
    oa.toolCalls([
      { name: 'g', args: { n: 1 }, id: 'call_A' },
      { name: 'g', args: { n: 2 }, id: 'call_B' },
    ]),
  );
  const asked: PermissionRequest[] = [];
  const r = harness(mock, { tools: [echoTool('g')], callbacks: { onPermission: (req) => asked.push(req) } });
  const done = r.turnDone();
  r.agent.submit('go');
  while (asked.length < 2) await settle();
  assert.deepEqual(
    asked.map((q) => [q.id, q.name, q.args]),
    [
      ['call_A', 'g', '{"n":1}'],
      ['call_B', 'g', '{"n":2}'],
    ],
  );
  asked[0]!.respond('deny_once');
  assert.equal(asked[0]!.signal.aborted, false, 'answered, not withdrawn');
  const why: string[] = [];
  asked[1]!.signal.addEventListener('abort', () => why.push(String((asked[1]!.signal.reason as Error).message)));
  r.agent.cancel();
  assert.equal(await done, ECANCELED);
  assert.deepEqual(why, ['cancelled by user']);
  asked[1]!.respond('allow_once');
  await settle();
  assert.deepEqual(
    r.results.map((x) => x.content),
    ['[tool failed: denied by user]', '[tool failed: cancelled by user]'],
    'a late answer changes nothing',
  );
});

test('a permission request is aborted when the agent closes', async () => {
  mock.push(oa.toolCall('g', {}, 'call_X'));
  let req: PermissionRequest | undefined;
  const r = harness(mock, {
    tools: [echoTool('g')],
    callbacks: {
      onPermission: (q) => {
        req = q;
      },
    },
  });
  r.agent.submit('go');
  while (!req) await settle();
  r.agent.close();
  assert.equal(req.signal.aborted, true);
  assert.equal((req.signal.reason as Error).message, 'agent closed');
});

test('getters for a status bar: providerName and API key presence, which no event carries', async () => {
  mock.push(oa.text('hi'));
  const r = harness(mock, { cfg: { apiKey: 'sk-secret-value-123', providerName: 'work' } });
  assert.equal(r.agent.providerName, 'work');
  assert.equal(r.agent.hasApiKey, true);
  const rec = record(r.agent);
  await r.agent.run('q');
  await r.agent.checkConnection();
  assert.doesNotMatch(JSON.stringify(rec.events), /sk-secret-value-123/);
  r.agent.setProvider({ baseUrl: `${mock.base}/chat/completions`, providerName: 'local' });
  assert.equal(r.agent.providerName, 'local');
  assert.equal(r.agent.hasApiKey, false);
  r.agent.setProvider({ baseUrl: `${mock.base}/chat/completions` });
  assert.equal(r.agent.providerName, undefined, 'unknown when the new connection names none');
});

test('ctxInUse for a gauge: an estimate of the messages and tool schemas until a usage report, again after restore, clear and compaction', async () => {
  const r = harness(mock, { tools: [echoTool('lookup', 'x'.repeat(40), { noPrompt: true })] });
  const agent = r.agent;
  const fresh = agent.ctxInUse;
  assert.ok(fresh > 0, 'the system prompt and the tool schema');
  assert.equal(agent.ctxUsed, 0, 'ctxUsed keeps to usage reports');
  agent.addTool(echoTool('describe', 'y', { noPrompt: true, description: 'd'.repeat(4000) }));
  assert.ok(agent.ctxInUse >= fresh + 1000, 'a tool schema counts');
  agent.restoreHistory(history(20));
  const restored = agent.ctxInUse;
  assert.ok(restored > agent.ctxUsed, `the schemas on top of the history estimate: ${restored} vs ${agent.ctxUsed}`);
  mock.push(oa.text('ok', { usage: { prompt: 3000, completion: 7 } }));
  await agent.run('q');
  assert.equal(agent.ctxInUse, 3007, 'a usage report is the figure');
  mock.push(oa.text('SUMMARY', { usage: { prompt: 2000, completion: 3 } }));
  assert.equal((await agent.compactAndWait()).status, 0);
  assert.equal(agent.ctxUsed, 0);
  assert.ok(agent.ctxInUse > 1000 && agent.ctxInUse < restored, `after the fold: ${agent.ctxInUse}`);
  agent.clearHistory();
  assert.ok(agent.ctxInUse > 1000 && agent.ctxInUse < restored, `the system prompt and the schemas: ${agent.ctxInUse}`);
});

test('listModels for another endpoint and dialect, from the agent and without one', async () => {
  mock.onGet('/v1/models', {
    body: {
      data: [
        { id: 'claude-a', type: 'model' },
        { id: 'claude-b', type: 'model' },
      ],
      has_more: false,
    },
  });
  const r = harness(mock);
  const other = { baseUrl: `${mock.base}/messages`, provider: 'anthropic' as const, apiKey: 'ak-1' };
  assert.deepEqual(await r.agent.listModels(other), ['claude-a', 'claude-b']);
  const get = mock.requests.at(-1)!;
  assert.equal(get.headers['x-api-key'], 'ak-1');
  assert.equal(get.headers.authorization, undefined);
  assert.ok(get.headers['anthropic-version']);
  const host = createNodeHost({ log: null });
  try {
    assert.deepEqual(await listModels(host, { baseUrl: `${mock.base}/responses`, provider: 'openai-responses', apiKey: 'k2' }), [
      'claude-a',
      'claude-b',
    ]);
    assert.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer k2');
    await assert.rejects(listModels(host, { baseUrl: 'http://127.0.0.1:1/v1/chat/completions' }), /ECONNREFUSED/);
  } finally {
    host.close();
  }
});

test('a callback that throws ends the turn with EIO instead of leaving it hanging', async () => {
  mock.push(oa.text('answer'));
  const r = harness(mock, {
    callbacks: {
      onFinishReason: () => {
        throw new Error('bug in a callback');
      },
    },
  });
  const res = await r.agent.run('q');
  assert.equal(res.status, EIO);
  assert.equal(res.error, 'internal error: bug in a callback');
  assert.equal(r.agent.busy, false);
});

test('close ends a turn in flight for subscribers: turn_done ECANCELED, agent closed', async () => {
  mock.push({ hang: true });
  const host = createNodeHost({ log: null });
  const agent = createAgent({ baseUrl: `${mock.base}/chat/completions` }, host);
  const rec = record(agent);
  agent.submit('q');
  while (mock.posts.length < 1) await settle();
  agent.close();
  assert.deepEqual(rec.events.at(-1), { type: 'turn_done', status: ECANCELED, error: 'agent closed' });
  host.close();
});

test('the promise hook decides every call, no-prompt ones too; its reason reaches the model; a rejection denies', async () => {
  mock.push(
    oa.toolCalls([
      { name: 'g', args: { n: 1 }, id: 'call_1' },
      { name: 'np', args: {}, id: 'call_2' },
      { name: 'g', args: { n: 3 }, id: 'call_3' },
      { name: 'g', args: { n: 4 }, id: 'call_4' },
    ]),
    oa.text('done'),
  );
  const seen: [string, boolean][] = [];
  const r = harness(mock, {
    tools: [echoTool('g'), echoTool('np', 'free', { noPrompt: true })],
    callbacks: {
      onPermission: () => assert.fail('the callback is not asked when the hook is set'),
      permission: async (call) => {
        seen.push([call.id, call.gated]);
        if (call.id === 'call_1') return { allow: true };
        if (call.id === 'call_2') return { allow: false, reason: 'denied by rule read_file(secret) (config.lua:3)' };
        if (call.id === 'call_3') throw new Error('rules file vanished');
        return { allow: false };
      },
    },
  });
  const done = r.turnDone();
  r.agent.submit('go');
  assert.equal(await done, 0);
  assert.deepEqual(seen, [
    ['call_1', true],
    ['call_2', false],
    ['call_3', true],
    ['call_4', true],
  ]);
  assert.deepEqual(
    r.results.map((x) => x.content),
    [
      'hello',
      '[tool failed: denied by rule read_file(secret) (config.lua:3)]',
      '[tool failed: denied: permission check failed: rules file vanished]',
      '[tool failed: denied by user]',
    ],
  );
});

test('the promise hook is told by its signal when the answer is no longer needed; a late answer changes nothing', async () => {
  mock.push(oa.toolCall('g', {}, 'call_X'));
  let signal: AbortSignal | undefined;
  let answer!: (a: { allow: boolean }) => void;
  const r = harness(mock, {
    tools: [echoTool('g')],
    callbacks: {
      permission: (_call, s) => {
        signal = s;
        return new Promise((res) => (answer = res));
      },
    },
  });
  const done = r.turnDone();
  r.agent.submit('go');
  while (!signal) await settle();
  r.agent.cancel();
  assert.equal(await done, ECANCELED);
  assert.equal(signal.aborted, true);
  answer({ allow: true });
  await settle();
  assert.deepEqual(
    r.results.map((x) => x.content),
    ['[tool failed: cancelled by user]'],
  );
});

test('a reply cancelled while it streams stays in the history as what was shown, marked; the next request is well formed', async () => {
  mock.push(oa.streamText(['The answer ', 'is coming', ' slowly', ' and more'], { chunkDelayMs: 300 }));
  const r = harness(mock, { cfg: { stream: true } });
  const rec = record(r.agent);
  const d = r.turnDone();
  r.agent.submit('tell me');
  while (!r.text.includes('is coming')) await settle();
  r.agent.cancel();
  assert.equal(await d, ECANCELED);
  const kept = { role: 'assistant', content: `${r.text}\n\n${CANCELLED_REPLY_MARK}` };
  assert.ok(r.text.startsWith('The answer is coming'), r.text);
  assert.deepEqual(r.agent.messages.slice(-2), [{ role: 'user', content: 'tell me' }, kept]);
  // Logged like any message, before the turn ends (a session log saves it).
  const order = rec.events.filter((e) => e.type === 'message' || e.type === 'turn_done');
  assert.deepEqual(order.slice(-2), [
    { type: 'message', message: kept },
    { type: 'turn_done', status: ECANCELED },
  ]);
  assert.equal(cancelledReplyText(kept as Message), r.text);

  // Cancelled before any text: the mark alone. The model then sees user, assistant, user.
  mock.push({ hang: true });
  const d2 = r.turnDone();
  r.agent.submit('second');
  while (mock.posts.length < 2) await settle();
  r.agent.cancel();
  assert.equal(await d2, ECANCELED);
  assert.deepEqual(r.agent.messages.at(-1), { role: 'assistant', content: CANCELLED_REPLY_MARK });
  mock.push(oa.streamText(['ok']));
  assert.equal((await r.agent.run('third')).status, 0);
  const roles = mock.posts[2]!.json.messages.map((m: { role: string }) => m.role);
  assert.deepEqual(roles, ['system', 'user', 'assistant', 'user', 'assistant', 'user']);
  assert.equal(mock.posts[2]!.json.messages[2].content, kept.content);
});

test('a turn cancelled during its tool calls or after them keeps no cancelled reply: every call has its result', async () => {
  mock.push(oa.toolCall('slow', {}));
  const r = harness(mock, { tools: [{ name: 'slow', noPrompt: true, invoke: () => {} }] });
  const d = r.turnDone();
  r.agent.submit('go');
  while (!r.events.some((e) => e.startsWith('begin:slow'))) await settle();
  r.agent.cancel();
  assert.equal(await d, ECANCELED);
  assert.deepEqual(
    r.agent.messages.slice(1).map((m) => m.role),
    ['user', 'assistant', 'tool'],
  );
  assert.equal(cancelledReplyText(r.agent.messages.at(-2)!), null);
});
