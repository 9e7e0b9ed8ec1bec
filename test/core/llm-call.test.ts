// One model request (LlmCall) over a scripted in-memory host: which failures are retried, how
// long each wait is, and how streamed tool-call fragments are assembled — without a network.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs, LlmCall, retryAfterMs, type LlmFailure } from '../../src/core/llm-call.js';
import { openaiAdapter } from '../../src/core/providers/openai.js';
import type { ParsedReply } from '../../src/core/providers/adapter.js';
import { scriptedHost, type Attempt } from '../fixtures/scripted-host.js';

function run(
  attempts: Attempt[],
  stream = true,
): Promise<{ reply?: ParsedReply; fail?: LlmFailure; host: ReturnType<typeof scriptedHost>; text: string }> {
  const host = scriptedHost(attempts);
  let text = '';
  return new Promise((resolve) => {
    new LlmCall({
      host,
      adapter: openaiAdapter,
      url: 'http://x/v1/chat/completions',
      headers: {},
      body: '{}',
      stream,
      maxTries: 4,
      retryBaseMs: 100,
      onText: (t) => {
        text += t;
      },
      onDone: (reply) => resolve({ reply, host, text }),
      onFail: (fail) => resolve({ fail, host, text }),
    }).start();
  });
}

const ev = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
const finish = ev({ choices: [{ delta: {}, finish_reason: 'stop' }] });

test('a transport failure before any byte is retried with backoff; the reply then stands', async () => {
  const r = await run([
    { error: 'ECONNRESET' },
    { error: 'ECONNREFUSED' },
    { chunks: [ev({ choices: [{ delta: { content: 'ok' } }] }), finish] },
  ]);
  assert.equal(r.reply?.content, 'ok');
  assert.deepEqual(r.host.waits, [100, 200]);
});

test('a stream cut after data arrived is not retried (the text would come twice)', async () => {
  const r = await run([{ error: 'ECONNRESET', after: [ev({ choices: [{ delta: { content: 'half' } }] })] }, { chunks: [finish] }]);
  assert.equal(r.host.sent, 1);
  assert.match(r.fail!.message, /^http request failed: ECONNRESET/);
  assert.equal(r.text, 'half');
});

test('a server silent for the whole idle timeout is not retried', async () => {
  const r = await run([{ error: 'ETIMEDOUT' }, { chunks: [finish] }]);
  assert.equal(r.host.sent, 1);
  assert.match(r.fail!.message, /ETIMEDOUT/);
});

test('Retry-After: seconds, a date, a date in the past, junk; capped at the ceiling', async () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:27:00 GMT', now), 0, 'a date already past means now');
  assert.equal(retryAfterMs(' 3 '), 3000);
  assert.equal(retryAfterMs('soon'), null);
  assert.equal(retryAfterMs(''), null);
  const r = await run([
    { status: 503, headers: { 'retry-after': '1.5' } },
    { status: 429, headers: { 'retry-after': '86400' } },
    { status: 500 },
    { chunks: [finish] },
  ]);
  assert.equal(r.fail, undefined);
  assert.deepEqual(r.host.waits, [1500, 60000, 400]);
});

test('4xx other than 429 is final at once', async () => {
  for (const status of [400, 401, 404, 422]) {
    const r = await run([{ status, body: '{"error":{"message":"no"}}' }, { chunks: [finish] }]);
    assert.equal(r.host.sent, 1, `HTTP ${status}`);
    assert.equal(r.fail!.message, `HTTP ${status}: no`);
  }
});

test('streamed tool-call fragments: the first id and name stay, arguments are joined, calls ordered by index', async () => {
  const r = await run([
    {
      chunks: [
        ev({ choices: [{ delta: { tool_calls: [{ index: 1, id: 'call_b', function: { name: 'second', arguments: '{"n":' } }] } }] }),
        ev({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_a', function: { name: 'first', arguments: '{}' } }] } }] }),
        // Some servers repeat an id (or send a different one) on later fragments: the first stays.
        ev({ choices: [{ delta: { tool_calls: [{ index: 1, id: 'call_other', function: { name: 'renamed', arguments: '2}' } }] } }] }),
        ev({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] }),
      ],
    },
  ]);
  assert.deepEqual(r.reply!.toolCalls, [
    { id: 'call_a', name: 'first', args: '{}' },
    { id: 'call_b', name: 'second', args: '{"n":2}' },
  ]);
  assert.equal(r.reply!.content, null);
  assert.equal(r.reply!.finishReason, 'tool_calls');
});

test('a stream whose last event is cut after the finish keeps the reply; before it, fails', async () => {
  const text = ev({ choices: [{ delta: { content: 'done' } }] });
  const kept = await run([{ chunks: [text, finish, 'data: {"choices":[],"usa'] }]);
  assert.equal(kept.reply?.content, 'done');
  const cut = await run([{ chunks: [text, 'data: {"choices":[{"delta":{"content":"mo'] }]);
  assert.match(cut.fail!.message, /stream ended before the reply was complete/);
});

test('Retry-After and backoff', () => {
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs('0.5'), 500);
  assert.equal(retryAfterMs(undefined), null);
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:58 GMT')), 2000);
  assert.equal(backoffMs(1, 1000), 1000);
  assert.equal(backoffMs(3, 1000), 4000);
  assert.equal(backoffMs(20, 1000), 60000);
});
