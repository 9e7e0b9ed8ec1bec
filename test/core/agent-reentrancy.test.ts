// Callbacks that cancel, close, submit or run() from inside the engine's own callbacks
// ("safe to call from inside a callback", clm_agent(3)): the interrupted work must stop, every
// turn ends exactly once, and nothing of a cancelled turn leaks into the next one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import * as oa from '../fixtures/openai-replies.js';
import { harness } from '../fixtures/agent-harness.js';
import { ClmError, ECANCELED, EIO } from '../../src/core/errors.js';
import type { ToolDef } from '../../src/core/types.js';

const mock = await mockLlmPerFile();

const countingTool = (): { def: ToolDef; calls: () => number } => {
  let n = 0;
  return {
    def: {
      name: 't',
      noPrompt: true,
      invoke: (inv) => {
        n++;
        inv.complete('did it');
      },
    },
    calls: () => n,
  };
};
const settle = () => new Promise((r) => setTimeout(r, 30));
/** A promise with its resolve function, so a callback can signal the test. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

test('cancel inside onState(calling_tool): one onTurnDone, the tool never runs', async () => {
  mock.push(oa.toolCall('t', {}));
  const tool = countingTool();
  let r!: ReturnType<typeof harness>;
  r = harness(mock, {
    tools: [tool.def],
    callbacks: {
      onState: (s) => {
        r.states.push(s);
        if (s === 'calling_tool') r.agent.cancel();
      },
    },
  });
  const done = r.turnDone();
  r.agent.submit('go');
  assert.equal(await done, ECANCELED);
  await settle();
  assert.equal(r.doneCount, 1);
  assert.equal(tool.calls(), 0);
  assert.ok(!r.agent.messages.some((m) => m.toolCalls), 'no unanswered call left in history');
});

test('cancel inside onAssistantText, then a new submit from onTurnDone: the old tool call stays cancelled, its text kept as cancelled', async () => {
  mock.push(oa.toolCalls([{ name: 't', args: {} }], { content: 'let me run it' }), oa.text('plain answer'));
  const tool = countingTool();
  let r!: ReturnType<typeof harness>;
  const statuses: number[] = [];
  const second = deferred();
  r = harness(mock, {
    tools: [tool.def],
    callbacks: {
      onAssistantText: () => {
        if (statuses.length === 0) r.agent.cancel();
      },
      onTurnDone: (s) => {
        statuses.push(s);
        if (statuses.length === 1) r.agent.submit('second prompt');
        else second.resolve();
      },
    },
  });
  r.agent.submit('first prompt');
  await second.promise;
  assert.deepEqual(statuses, [ECANCELED, 0]);
  assert.equal(tool.calls(), 0);
  assert.equal(mock.posts.length, 2);
  assert.deepEqual(
    r.agent.messages.slice(1).map((m) => [m.role, m.content]),
    [
      ['user', 'first prompt'],
      ['assistant', 'let me run it\n\n[reply cancelled by the user]'],
      ['user', 'second prompt'],
      ['assistant', 'plain answer'],
    ],
  );
});

test('close inside a callback: tools do not run afterwards', async () => {
  mock.push(oa.toolCall('t', {}));
  const tool = countingTool();
  let r!: ReturnType<typeof harness>;
  r = harness(mock, {
    tools: [tool.def],
    callbacks: {
      onState: (s) => {
        if (s === 'calling_tool') r.agent.close();
      },
    },
  });
  r.agent.submit('go');
  await settle();
  await settle();
  assert.equal(tool.calls(), 0);
});

test('cancel inside onToolBatch(0, n): nothing half-done reaches the next request', async () => {
  mock.push(
    oa.toolCalls([
      { name: 't', args: {}, id: 'A' },
      { name: 't', args: {}, id: 'B' },
    ]),
    oa.text('next answer'),
  );
  const tool = countingTool();
  let r!: ReturnType<typeof harness>;
  r = harness(mock, {
    tools: [tool.def],
    callbacks: {
      onToolBatch: (k) => {
        if (k === 0 && !r.agent.messages.some((m) => m.content === 'next')) r.agent.cancel();
      },
    },
  });
  let d = r.turnDone();
  r.agent.submit('go');
  assert.equal(await d, ECANCELED);
  assert.equal(tool.calls(), 0);
  d = r.turnDone();
  r.agent.submit('next');
  assert.equal(await d, 0);
  const sent = mock.posts[1]!.json.messages;
  assert.ok(!sent.some((m: any) => m.role === 'tool' || m.tool_calls), JSON.stringify(sent));
});

test('cancel when the next round starts (onState thinking after tools) sends no further request', async () => {
  mock.push(oa.toolCall('t', {}), oa.text('unused'), oa.text('answer #1'));
  const tool = countingTool();
  let r!: ReturnType<typeof harness>;
  let armed = false;
  r = harness(mock, {
    tools: [tool.def],
    callbacks: {
      onToolResult: () => {
        armed = true;
      },
      onState: (s) => {
        if (s === 'thinking' && armed) {
          armed = false;
          r.agent.cancel();
        }
      },
    },
  });
  let d = r.turnDone();
  r.agent.submit('first');
  assert.equal(await d, ECANCELED);
  await settle();
  assert.equal(mock.posts.length, 1);
  mock.reset();
  mock.push(oa.text('answer #1'));
  d = r.turnDone();
  r.agent.submit('second');
  assert.equal(await d, 0);
  assert.equal(r.agent.messages.at(-1)!.content, 'answer #1');
});

test('a notify from onState(complete) starts after onTurnDone, not before', async () => {
  mock.push(oa.text('answer 0'), oa.text('answer 1'));
  let r!: ReturnType<typeof harness>;
  const seen: string[] = [];
  let notified = false;
  const first = deferred();
  const second = deferred();
  r = harness(mock, {
    callbacks: {
      onState: (s) => {
        seen.push(`state:${s}`);
        if (s === 'complete' && !notified) {
          notified = true;
          r.agent.notify('steer');
        }
      },
      onTurnDone: (s) => {
        seen.push(`done:${s}:${r.agent.state}`);
        (seen.filter((e) => e.startsWith('done:')).length === 1 ? first : second).resolve();
      },
    },
  });
  r.agent.submit('go');
  await first.promise;
  // The notification was queued, not lost: the agent is busy with it as soon as onTurnDone returned.
  await Promise.resolve();
  assert.equal(r.agent.busy, true, seen.join(' '));
  await second.promise;
  const firstDone = seen.indexOf('done:0:complete');
  assert.ok(firstDone >= 0, seen.join(' '));
  assert.ok(seen.indexOf('state:thinking', 1) > firstDone, seen.join(' '));
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, 'steer');
});

test('run() called from onTurnDone resolves with its own turn', async () => {
  mock.push(oa.httpError(400, 'first fails'), oa.text('answer 1'));
  let r!: ReturnType<typeof harness>;
  const statuses: number[] = [];
  const started = deferred<{ run: Promise<{ status: number; text: string }> }>();
  r = harness(mock, {
    callbacks: {
      onTurnDone: (s) => {
        statuses.push(s);
        if (statuses.length === 1) started.resolve({ run: r.agent.run('second prompt') });
      },
    },
  });
  r.agent.submit('first');
  const second = (await started.promise).run;
  assert.deepEqual(await second, { status: 0, text: 'answer 1' });
  assert.deepEqual(statuses, [EIO, 0]);
});

test('cancel while polling the mid-chain compaction flag: no compaction request leaks into the next turn', async () => {
  mock.push(oa.toolCall('t', {}, 'c1', { usage: { prompt: 900, completion: 10 } }), oa.text('REAL ANSWER'));
  const tool = countingTool();
  let r!: ReturnType<typeof harness>;
  r = harness(mock, {
    cfg: { contextSize: 1000 },
    tools: [tool.def],
    callbacks: {
      onState: () => {
        if (r.agent.takeMidChainCompactStarted()) r.agent.cancel();
      },
    },
  });
  r.agent.restoreHistory(
    [1, 2, 3].flatMap((i) => [
      { role: 'user' as const, content: `q${i}` },
      { role: 'assistant' as const, content: `a${i}` },
    ]),
  );
  let d = r.turnDone();
  r.agent.submit('first prompt');
  assert.equal(await d, ECANCELED);
  d = r.turnDone();
  r.agent.submit('second prompt');
  assert.equal(await d, 0);
  assert.equal(r.agent.messages.at(-1)!.content, 'REAL ANSWER');
  assert.ok(!mock.posts.some((p) => /Summarize the conversation/.test(p.body)));
});

test('restoreHistory refuses malformed entries with EINVAL and appends nothing', () => {
  const r = harness(mock);
  for (const bad of [
    [null],
    [{ role: 'assistant', content: null, toolCalls: 'x' }],
    [{ role: 'assistant', content: null, toolCalls: [null] }],
  ]) {
    assert.throws(
      () => r.agent.restoreHistory(bad as never),
      (e: unknown) => e instanceof ClmError && e.code === 'EINVAL',
    );
  }
  assert.equal(r.agent.messages.length, 1);
});

test('the tool limiter spaces queued calls at its rate', async () => {
  mock.push(oa.toolCalls([1, 2, 3].map((i) => ({ name: 'stamp', args: {}, id: `s${i}` }))), oa.text('ok'));
  const starts: number[] = [];
  const r = harness(mock, {
    cfg: { toolRatePerSec: 20, toolRateBurst: 1 },
    tools: [
      {
        name: 'stamp',
        noPrompt: true,
        invoke: (inv) => {
          starts.push(Date.now());
          inv.complete('x');
        },
      },
    ],
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.equal(starts.length, 3);
  assert.ok(starts[2]! - starts[0]! >= 80, `calls started ${starts.map((t) => t - starts[0]!).join(', ')} ms apart`);
});

test('a stream cut in the trailing usage chunk keeps the finished reply', async () => {
  mock.push({
    sse: [
      'data: {"choices":[{"delta":{"content":"The complete answer."}}]}\n\n',
      'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n',
      'data: {"choices":[],"usage":{"prompt_tok',
    ],
  });
  const r = harness(mock, { cfg: { stream: true } });
  const res = await r.agent.run('q');
  assert.equal(res.status, 0);
  assert.equal(r.agent.messages.at(-1)!.content, 'The complete answer.');
});

test('cancel from a subscriber at any event of a turn: nothing of that turn is reported after its turn_done', async () => {
  // Each run cancels at the k-th event of a turn with a tool round; the turn must end there.
  for (let k = 1; k <= 12; k++) {
    mock.reset();
    mock.push(oa.toolCall('t', {}), oa.text('answer'));
    const tool = countingTool();
    const r = harness(mock, { tools: [tool.def] });
    const seen: string[] = [];
    let n = 0;
    r.agent.subscribe((e) => {
      seen.push(e.type);
      if (++n === k && r.agent.busy) r.agent.cancel();
    });
    const done = r.turnDone();
    r.agent.submit('go');
    await done;
    await settle();
    const end = seen.indexOf('turn_done');
    assert.ok(end >= 0, seen.join(' '));
    assert.deepEqual(seen.slice(end + 1), [], `cancelled at event ${k}: ${seen.join(' ')}`);
    const calls = r.agent.messages.filter((m) => m.toolCalls).length;
    const results = r.agent.messages.filter((m) => m.role === 'tool').length;
    assert.equal(calls, results, `cancelled at event ${k}: every call in the history has its result`);
  }
});
