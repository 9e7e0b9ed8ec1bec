// Fault battery, what arrives from an LLM server (issue 21): one huge SSE event, a body that
// trickles, streams of events that carry nothing usable, compressed and binary bodies. Each turn
// ends once, with the reply whole or an error naming what arrived.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { EIO } from '../../src/core/errors.js';
import { SseReader } from '../../src/core/sse.js';
import type { AgentConfig } from '../../src/core/agent-config.js';
import type { ProviderKind } from '../../src/core/types.js';
import { harness } from '../fixtures/agent-harness.js';
import * as A from '../fixtures/anthropic-replies.js';
import type { Reply } from '../fixtures/mock-llm.js';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import { tally } from '../fixtures/tally.js';

const mock = await mockLlmPerFile();

const enc = new TextEncoder();
const mib = (n: number) => `${+(n / (1 << 20)).toFixed(1)} MiB`;

test('one SSE event of many MiB, in small pieces: each character is looked at once, the event arrives whole', () => {
  const size = 4 << 20;
  const line = `data: ${'x'.repeat(size)}`;
  const got: string[] = [];
  const r = new SseReader((_e, d) => got.push(d));
  const bytes = enc.encode(`${line}\r`);
  // 8 KiB pieces, the last one ending in the CR of a CRLF cut in two.
  for (let at = 0; at < bytes.length; at += 8192) r.push(bytes.subarray(at, at + 8192));
  r.push(enc.encode('\n\r\n'));
  assert.equal(got.length, 1);
  assert.equal(got[0]!.length, size);
  assert.ok(r.scanned <= bytes.length + 8, `${r.scanned} characters scanned for ${bytes.length} received`);
  tally('faults', 1);
});

/** One turn against `reply`: its status, lastError and text; the agent is closed after it. */
async function turnOn(reply: Reply, cfg: Partial<AgentConfig>): Promise<{ status: number; error: string; text: string }> {
  mock.push(reply);
  const h = harness(mock, { cfg: { maxTries: 1, ...cfg } });
  const r = await h.agent.run('go');
  const out = { status: r.status, error: h.agent.lastError, text: h.text || (r.text ?? '') };
  h.agent.close();
  return out;
}

const chat = (o: Partial<AgentConfig> = {}): Partial<AgentConfig> => ({ stream: true, ...o });
const dialect = (provider: ProviderKind, path: string, o: Partial<AgentConfig> = {}): Partial<AgentConfig> => ({
  provider,
  baseUrl: `${mock.base}/${path}`,
  stream: true,
  ...o,
});
const choice = (delta: object, finish: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason: finish }] });

test('openai chat: events with nothing in them, or that are not objects, end the turn naming what came', async () => {
  const empty = await turnOn({ sse: [{ choices: [] }, { choices: [] }], done: true }, chat());
  assert.equal(empty.status, EIO);
  assert.equal(empty.error, 'empty reply without a finish reason: {"choices":[]}');
  for (const data of ['null', '[]', '"str"', '123']) {
    const r = await turnOn({ sse: [choice({ content: 'a' }), `data: ${data}\n\n`, choice({}, 'stop')], done: true }, chat());
    assert.equal(r.status, EIO, data);
    assert.equal(r.error, `stream event is not a JSON object: ${data}`);
  }
  tally('faults', 5);
});

test('openai chat: delta.content as text parts is the text; a number, an object or another part ends the turn', async () => {
  const parts = await turnOn(
    {
      sse: [
        choice({ content: [{ type: 'text', text: 'Hel' }] }),
        choice(
          {
            content: [
              { type: 'text', text: 'lo' },
              { type: 'text', text: '!' },
            ],
          },
          'stop',
        ),
      ],
      done: true,
    },
    chat(),
  );
  assert.equal(parts.status, 0, parts.error);
  assert.equal(parts.text, 'Hello!');
  const whole = await turnOn(
    {
      body: { choices: [{ index: 0, message: { role: 'assistant', content: [{ type: 'text', text: 'whole' }] }, finish_reason: 'stop' }] },
    },
    chat({ stream: false }),
  );
  assert.equal(whole.status, 0, whole.error);
  assert.equal(whole.text, 'whole');
  for (const [content, shown] of [
    [123, '123'],
    [{ text: 'x' }, '{"text":"x"}'],
    [[{ type: 'image_url', image_url: { url: 'u' } }], '[{"type":"image_url","image_url":{"url":"u"}}]'],
  ] as const) {
    const r = await turnOn({ sse: [choice({ content }), choice({}, 'stop')], done: true }, chat());
    assert.equal(r.status, EIO);
    assert.equal(r.error, `delta.content is not text: ${shown}`);
    const w = await turnOn(
      { body: { choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] } },
      chat({ stream: false }),
    );
    assert.equal(w.status, EIO);
    assert.equal(w.error, `message.content is not text: ${shown}`);
  }
  tally('faults', 8);
});

test('anthropic and responses: text that is not text, events that are not objects, an empty reply: each an error', async () => {
  const anthropic = dialect('anthropic', 'messages');
  const responses = dialect('openai-responses', 'responses');
  const aDelta = (text: unknown) =>
    A.sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
  const rDelta = (delta: unknown) =>
    `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', output_index: 0, delta })}\n\n`;
  const cases: [Reply, Partial<AgentConfig>, string][] = [
    [{ sse: [aDelta('ok'), aDelta(5)] }, anthropic, 'text_delta is not text: 5'],
    [{ sse: [rDelta('ok'), rDelta({ t: 1 })] }, responses, 'response.output_text.delta is not text: {"t":1}'],
    [{ sse: [aDelta('ok'), 'data: [1]\n\n'] }, anthropic, 'stream event is not a JSON object: [1]'],
    [{ sse: [rDelta('ok'), 'data: "str"\n\n'] }, responses, 'stream event is not a JSON object: "str"'],
    [
      { sse: [A.sse('message_start', { type: 'message_start', message: { usage: {} } }), A.sse('message_stop', { type: 'message_stop' })] },
      anthropic,
      'empty reply without a finish reason: {"type":"message_start","message":{"usage":{}}}',
    ],
    [
      { body: { type: 'message', content: [{ type: 'text', text: 7 }], stop_reason: 'end_turn' } },
      { ...anthropic, stream: false },
      'text block is not text: 7',
    ],
    [
      { body: { type: 'message', content: [], stop_reason: null } },
      { ...anthropic, stream: false },
      'empty reply without a finish reason: {"type":"message","content":[],"stop_reason":null}',
    ],
    [
      { body: { status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: [1] }] }] } },
      { ...responses, stream: false },
      'output_text is not text: [1]',
    ],
  ];
  for (const [reply, cfg, want] of cases) {
    const r = await turnOn(reply, cfg);
    assert.equal(r.status, EIO, want);
    assert.equal(r.error, want);
  }
  tally('faults', cases.length);
});

const open = new Set<ServerResponse>();
after(() => {
  for (const r of open) r.destroy();
});

/** A response the test writes by hand (kept until the client goes away). */
function byHand(status: number, headers: Record<string, string>, feed: (res: ServerResponse) => void): Reply {
  return {
    handle: (_req, res) => {
      open.add(res);
      res.on('close', () => open.delete(res));
      res.writeHead(status, headers);
      feed(res);
    },
  };
}

test('a whole reply whose body trickles (a byte every 300 ms) ends after bodyTimeoutMs, counted from its first byte', async () => {
  const body = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'slow' }, finish_reason: 'stop' }] });
  let sent = 0;
  const r = await turnOn(
    byHand(200, { 'content-type': 'application/json' }, (res) => {
      const t = setInterval(() => {
        if (res.destroyed || sent >= body.length) {
          clearInterval(t);
          if (!res.destroyed) res.end();
          return;
        }
        res.write(body[sent++]!);
      }, 300);
      res.on('close', () => clearInterval(t));
    }),
    { stream: false, bodyTimeoutMs: 1500 },
  );
  assert.equal(r.status, EIO);
  assert.equal(r.error, 'the reply did not arrive whole within 1.5 s of its first byte (body_timeout_ms)');
  assert.ok(sent > 1 && sent < body.length, `${sent} of ${body.length} bytes sent`);
  tally('faults', 1);
});

test('compressed or binary bodies: identity is asked for; what cannot be read is described (type, size), not shown', async () => {
  const big = gzipSync(JSON.stringify({ error: { message: 'x'.repeat(1 << 20) + randomBytes(1 << 20).toString('base64') } }));
  const gz = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  const cases: [Reply, Partial<AgentConfig>, string][] = [
    [
      byHand(500, gz, (res) => res.end(big)),
      { stream: false },
      `HTTP 500: the body is not text (gzip, application/json, ${mib(big.length)})`,
    ],
    [
      byHand(200, gz, (res) => res.end(big)),
      { stream: false },
      `HTTP 200: the body is not text (gzip, application/json, ${mib(big.length)})`,
    ],
    [
      byHand(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, (res) =>
        res.end(gzipSync('data: {}\n\n'.repeat(500))),
      ),
      { stream: true },
      `HTTP 200: the body is not text (gzip, text/event-stream, ${gzipSync('data: {}\n\n'.repeat(500)).length} bytes)`,
    ],
    [
      byHand(502, { 'content-type': 'application/octet-stream' }, (res) => res.end(Buffer.from([0, 1, 2, 3, 255, 0, 7]))),
      { stream: false },
      'HTTP 502: the body is not text (application/octet-stream, 7 bytes)',
    ],
  ];
  for (const [reply, cfg, want] of cases) {
    const r = await turnOn(reply, cfg);
    assert.equal(r.status, EIO, want);
    assert.ok(r.error.startsWith(want), `${r.error.slice(0, 200)} should start with ${want}`);
    assert.doesNotMatch(r.error, /[\0\uFFFD]/);
    assert.equal(mock.posts.at(-1)!.headers['accept-encoding'], 'identity');
  }
  tally('faults', cases.length);
});
