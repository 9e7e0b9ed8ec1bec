// Fault battery, the library against loopback LLM servers: every turn ends, once, with a clear
// lastError, and agent.messages stays a history the next request accepts. Silent servers,
// comment-only and stalled streams, endless and huge replies, a callback that throws, a key
// echoed in an error body, close() during a tool call, a batch of 1,000 calls.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { ECANCELED, EIO } from '../../src/core/errors.js';
import type { Message, ToolDef } from '../../src/core/types.js';
import { echoTool, harness } from '../fixtures/agent-harness.js';
import type { Reply } from '../fixtures/mock-llm.js';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import * as oa from '../fixtures/openai-replies.js';
import { tally } from '../fixtures/tally.js';

const mock = await mockLlmPerFile();

const open = new Set<ServerResponse>();
after(() => {
  for (const r of open) r.destroy();
});

/** An SSE response the test writes to by hand (kept until the client goes away). */
function handSse(feed: (res: ServerResponse) => void): Reply {
  return {
    handle: (_req, res) => {
      open.add(res);
      res.on('close', () => open.delete(res));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      feed(res);
    },
  };
}

/** Write `chunk` every `ms` until the client closes the connection. */
function every(res: ServerResponse, ms: number, chunk: () => string): void {
  const t = setInterval(() => {
    if (res.destroyed || res.writableEnded) clearInterval(t);
    else res.write(chunk());
  }, ms);
  res.on('close', () => clearInterval(t));
}

const delta = (text: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`;

/** Every assistant tool call has a tool result after it. */
function paired(messages: readonly Message[]): boolean {
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
  return messages.every((m) => !m.toolCalls || m.toolCalls.every((c) => answered.has(c.id)));
}

test('probe: a server that accepts and never answers is offline after probeTimeoutMs', async () => {
  mock.onGet('/models', { hang: true });
  const h = harness(mock, { cfg: { probeTimeoutMs: 300 } });
  const r = await h.agent.checkConnection();
  assert.equal(r.status, 'offline');
  assert.equal(r.detail, 'no answer within 300 ms (probe_timeout_ms)');
  assert.ok(h.events.includes('conn:offline:no answer within 300 ms (probe_timeout_ms)'));
  h.agent.close();
  tally('faults', 1);
});

test('a silent server: the turn ends after firstByteTimeoutMs, not retried, history intact', async () => {
  mock.push({ hang: true });
  const h = harness(mock, { cfg: { firstByteTimeoutMs: 300 } });
  const done = h.turnDone();
  h.agent.submit('hello?');
  assert.equal(await done, EIO);
  assert.equal(h.agent.lastError, 'no reply within 300 ms (first_byte_timeout_ms)');
  assert.equal(mock.posts.length, 1, 'a silent server is not asked again');
  assert.deepEqual(
    h.agent.messages.slice(1).map((m) => m.role),
    ['user'],
  );
  h.agent.close();
  tally('faults', 1);
});

test('a deadline belongs to its attempt: a retry wait longer than it does not end the turn', async () => {
  mock.push({ destroy: true }, oa.text('second try'));
  const h = harness(mock, { cfg: { firstByteTimeoutMs: 300 }, retryBaseMs: 600 });
  const done = h.turnDone();
  h.agent.submit('hello?');
  assert.equal(await done, 0, h.agent.lastError);
  assert.equal(h.text, 'second try');
  assert.equal(mock.posts.length, 2);
  h.agent.close();
  tally('faults', 1);
});

test('a comment-only stream ends the turn: comments do not count as events', async () => {
  mock.push(handSse((res) => every(res, 40, () => ': keep-alive\n\n')));
  const h = harness(mock, { cfg: { stream: true, firstByteTimeoutMs: 400 } });
  const done = h.turnDone();
  h.agent.submit('hello?');
  assert.equal(await done, EIO);
  assert.equal(h.agent.lastError, 'no reply within 400 ms (first_byte_timeout_ms); the server accepted the request but sent no event');
  h.agent.close();
  tally('faults', 1);
});

test('a stream that stalls after some text (comments only from then on) ends after streamIdleTimeoutMs', async () => {
  mock.push(
    handSse((res) => {
      res.write(delta('partial '));
      every(res, 40, () => ': ping\n\n');
    }),
  );
  const h = harness(mock, { cfg: { stream: true, streamIdleTimeoutMs: 300 } });
  const done = h.turnDone();
  h.agent.submit('hello?');
  assert.equal(await done, EIO);
  assert.equal(h.agent.lastError, 'the stream stalled: no event for 300 ms (stream_idle_timeout_ms)');
  assert.equal(h.text, 'partial ', 'what arrived was shown');
  assert.deepEqual(
    h.agent.messages.slice(1).map((m) => m.role),
    ['user'],
  );
  h.agent.close();
  tally('faults', 1);
});

test('a steady stream is not cut by the idle timeout', async () => {
  let n = 0;
  mock.push(
    handSse((res) => {
      const t = setInterval(() => {
        if (++n <= 12) {
          res.write(delta(`${n} `));
          return;
        }
        clearInterval(t);
        res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
      }, 50);
    }),
  );
  const h = harness(mock, { cfg: { stream: true, streamIdleTimeoutMs: 3000 } });
  const done = h.turnDone();
  h.agent.submit('count');
  assert.equal(await done, 0, h.agent.lastError);
  assert.equal(h.text, '1 2 3 4 5 6 7 8 9 10 11 12 ');
  h.agent.close();
});

test('an endless streamed reply stops at maxReplyBytes with a clear error (no RangeError, no crash)', async () => {
  mock.push(handSse((res) => every(res, 1, () => delta('x'.repeat(16 * 1024)))));
  const h = harness(mock, { cfg: { stream: true, maxReplyBytes: 1 << 20 } });
  const done = h.turnDone();
  h.agent.submit('talk forever');
  assert.equal(await done, EIO);
  assert.equal(h.agent.lastError, 'the reply was larger than 1 MiB (max_reply_bytes); reading it was stopped');
  assert.ok(h.text.length > 0 && h.text.length <= 1 << 20);
  assert.deepEqual(
    h.agent.messages.slice(1).map((m) => m.role),
    ['user'],
  );
  h.agent.close();
  tally('faults', 1);
});

test('a huge whole reply, and a huge error page, stop at maxReplyBytes too', async () => {
  const big = 'y'.repeat(3 << 20);
  for (const reply of [oa.text(big), { status: 500, body: `<html><body>${big}</body></html>` } as Reply]) {
    mock.push(reply);
    const h = harness(mock, { cfg: { maxReplyBytes: 1 << 20, maxTries: 1 } });
    const done = h.turnDone();
    h.agent.submit('big');
    assert.equal(await done, EIO);
    assert.equal(h.agent.lastError, 'the reply was larger than 1 MiB (max_reply_bytes); reading it was stopped');
    h.agent.close();
  }
  tally('faults', 2);
});

test('a callback that throws while a reply streams does not escape the host: the turn fails', async () => {
  mock.push(oa.streamText(['a', 'b']));
  const h = harness(mock, {
    cfg: { stream: true },
    callbacks: {
      onAssistantText: () => {
        throw new Error('embedder bug');
      },
    },
  });
  const done = h.turnDone();
  h.agent.submit('hi');
  assert.equal(await done, EIO);
  assert.equal(h.agent.lastError, 'the reply could not be read: embedder bug');
  h.agent.close();
  tally('faults', 1);
});

test('an error body that echoes the API key does not reach lastError', async () => {
  const key = 'sk-echo-1234567890abcdef';
  mock.push({
    handle: (req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${String(req.headers.authorization).slice(7)}` } }));
    },
  });
  const h = harness(mock, { cfg: { apiKey: key, maxTries: 1 } });
  const done = h.turnDone();
  h.agent.submit('hi');
  assert.equal(await done, EIO);
  assert.equal(h.agent.lastError, 'HTTP 401: Incorrect API key provided: [REDACTED]');
  h.agent.close();
  tally('faults', 1);
});

test('stream cut mid-event, reset before the first byte, malformed SSE, malformed JSON: each a clear error', async () => {
  const cases: [Reply[], boolean, RegExp][] = [
    [
      [
        {
          handle: (_q, res) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(delta('half'));
            res.write('data: {"choices":[{"index":0,"del');
            setTimeout(() => res.destroy(), 20);
          },
        },
      ],
      true,
      /^http request failed: connection closed before the response was complete$/,
    ],
    [[{ destroy: true }, { destroy: true }], false, /^http request failed: socket hang up$/],
    [[{ sse: ['data: {not json}\n\n'] }], true, /^could not parse stream event: \{not json\}$/],
    [[{ body: '{"choices": [' }], false, /^could not parse llm response: \{"choices": \[$/],
  ];
  for (const [replies, stream, want] of cases) {
    mock.reset();
    mock.push(...replies);
    const h = harness(mock, { cfg: { stream, maxTries: 2 } });
    const done = h.turnDone();
    h.agent.submit('x');
    assert.equal(await done, EIO);
    assert.match(h.agent.lastError, want);
    assert.equal(h.doneCount, 1);
    h.agent.close();
  }
  tally('faults', 4);
});

test('close() while a tool runs leaves a paired history that a new agent accepts', async () => {
  let started!: () => void;
  const running = new Promise<void>((r) => {
    started = r;
  });
  const slow: ToolDef = {
    name: 'slow',
    parameters: { type: 'object' },
    noPrompt: true,
    invoke: () => {
      started();
    },
  };
  mock.push(
    oa.toolCalls([
      { name: 'slow', args: {} },
      { name: 'fast', args: {} },
    ]),
  );
  const h = harness(mock, { tools: [slow, echoTool('fast', 'quick', { noPrompt: true })] });
  // close() ends run() promises (the caller's callbacks are dropped first).
  const turn = h.agent.run('go');
  await running;
  h.agent.close();
  assert.equal((await turn).status, ECANCELED);
  const msgs = h.agent.messages;
  assert.ok(paired(msgs), JSON.stringify(msgs));
  assert.equal(msgs.find((m) => m.role === 'tool' && m.toolName === 'slow')?.content, '[tool failed: agent closed]');

  mock.push(oa.text('resumed'));
  const next = harness(mock);
  next.agent.restoreHistory(msgs);
  const d2 = next.turnDone();
  next.agent.submit('again');
  assert.equal(await d2, 0, next.agent.lastError);
  const sent = mock.posts.at(-1)!.json.messages as { role: string; tool_call_id?: string; content: string }[];
  assert.deepEqual(
    sent
      .filter((m) => m.role === 'tool')
      .map((m) => m.content)
      .sort(),
    ['[tool failed: agent closed]', 'quick'],
  );
  next.agent.close();
  tally('faults', 1);
});

test('1,000 calls in one reply run at most maxParallelTools at once (16 by default); all complete', async () => {
  for (const [limit, expect] of [
    [undefined, 16],
    [4, 4],
  ] as const) {
    let now = 0,
      peak = 0,
      done = 0;
    const tool: ToolDef = {
      name: 'work',
      parameters: { type: 'object' },
      noPrompt: true,
      invoke: (inv) => {
        now++;
        peak = Math.max(peak, now);
        setTimeout(() => {
          now--;
          done++;
          inv.complete('ok');
        }, 1);
      },
    };
    mock.push(oa.toolCalls(Array.from({ length: 1000 }, (_, i) => ({ id: `c${i}`, name: 'work', args: {} }))), oa.text('all done'));
    const h = harness(mock, { tools: [tool], cfg: limit === undefined ? {} : { maxParallelTools: limit } });
    const turn = h.turnDone();
    h.agent.submit('go');
    assert.equal(await turn, 0, h.agent.lastError);
    assert.equal(done, 1000);
    assert.equal(peak, expect);
    assert.ok(paired(h.agent.messages));
    h.agent.close();
  }
  tally('faults', 1);
});
