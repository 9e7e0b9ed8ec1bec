import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseProps, parseModelsList } from '../../src/core/server-info.js';
import { fnmatch } from '../../src/core/fnmatch.js';
import { clampOutput, outputText, firstBinaryOffset } from '../../src/core/tool-output.js';
import { SseReader } from '../../src/core/sse.js';
import { retryAfterMs, backoffMs } from '../../src/core/llm-call.js';
import { modelsUrl, propsUrl, buildUrl, providerFromStr } from '../../src/core/providers/index.js';
import { TokenBucket } from '../../src/core/ratelimit.js';

test('parse /props (test_parse_props)', () => {
  const p = (n: unknown, slots?: number, build = true) =>
    JSON.stringify({
      ...(build ? { build_info: 'b1' } : {}),
      default_generation_settings: { n_ctx: n },
      ...(slots ? { total_slots: slots } : {}),
    });
  assert.equal(parseProps(p(262144, 1)), 262144);
  assert.equal(parseProps(p(262144, 4)), 65536);
  assert.equal(parseProps(p(262144, 1, false)), null);
  assert.equal(parseProps(JSON.stringify({ build_info: 'x' })), null);
  assert.equal(parseProps('garbage'), null);
  assert.equal(parseProps(null), null);
  assert.equal(parseProps(p(0)), null);
});

test('parse models list (test_parse_models_list)', () => {
  assert.deepEqual(parseModelsList('{"data":[{"id":"a"},{"x":1},{"id":5},{"id":"b"}]}'), ['a', 'b']);
  assert.equal(parseModelsList('{"data":[]}'), null);
  assert.equal(parseModelsList('{}'), null);
  assert.equal(parseModelsList('{"data":{}}'), null);
  assert.equal(parseModelsList('garbage'), null);
  assert.equal(parseModelsList(null), null);
});

test('fnmatch: * crosses / and leading dots, classes, ?', () => {
  assert.ok(fnmatch('mcp__*', 'mcp__github__create_issue'));
  assert.ok(fnmatch('web/*', 'web/fetch/x'));
  assert.ok(fnmatch('*', '.hidden'));
  assert.ok(fnmatch('local_ma?', 'local_map'));
  assert.ok(fnmatch('[lm]ap', 'map'));
  assert.ok(!fnmatch('[!lm]ap', 'map'));
  assert.ok(!fnmatch('local_map', 'local_map2'));
  assert.ok(fnmatch('a.b', 'a.b') && !fnmatch('a.b', 'axb'));
});

test('binary detection reports the first bad byte offset (test_binary_tool_output)', () => {
  const b = new Uint8Array([0x68, 0x69, 0x00, 0x89, 0x50, 0x4e, 0x47]);
  assert.equal(firstBinaryOffset(b), 2);
  assert.equal(outputText(b), '[tool output contained binary data at byte offset 2 of 7; not displayed]');
  assert.equal(outputText(new Uint8Array([0x61, 0xe2, 0x82])), '[tool output contained binary data at byte offset 1 of 3; not displayed]');
  assert.equal(outputText(new TextEncoder().encode('héllo ✓ 🦴')), 'héllo ✓ 🦴');
  assert.equal(outputText('a\0b'), '[tool output contained binary data at byte offset 1 of 3; not displayed]');
  assert.equal(outputText('plain'), 'plain');
});

test('clamp keeps the head, marks the cut and never splits a character', () => {
  assert.equal(clampOutput('short', 100), 'short');
  const s = clampOutput('x'.repeat(1000), 100);
  assert.equal(new TextEncoder().encode(s).length, 100);
  assert.ok(s.endsWith('\n[output truncated]'));
  const e = clampOutput('é'.repeat(100), 50);
  assert.ok(e.endsWith('\n[output truncated]'));
  assert.ok(!e.includes('\ufffd'));
  assert.ok(new TextEncoder().encode(e).length <= 50);
});

test('SSE: CRLF, multi-line data, comments, event names, a last event without newline', () => {
  const got: [string, string][] = [];
  const r = new SseReader((e, d) => got.push([e, d]));
  const enc = new TextEncoder();
  r.push(enc.encode(': comment\r\ndata: a\r\ndata: b\r\n\r\nevent: x\ndata: {"k":1}\n\nda'));
  r.push(enc.encode('ta: last'));
  r.end();
  assert.deepEqual(got, [
    ['', 'a\nb'],
    ['x', '{"k":1}'],
    ['', 'last'],
  ]);
});

test('SSE: a multi-byte character split across chunks survives', () => {
  const got: string[] = [];
  const r = new SseReader((_e, d) => got.push(d));
  const b = new TextEncoder().encode('data: 🦴\n\n');
  r.push(b.subarray(0, 8));
  r.push(b.subarray(8));
  r.end();
  assert.deepEqual(got, ['🦴']);
});

test('SSE: a stream that ends inside a character keeps what came, marked as undecodable', () => {
  const got: string[] = [];
  const r = new SseReader((_e, d) => got.push(d));
  const b = new TextEncoder().encode('data: ok🦴');
  r.push(b.subarray(0, b.length - 2));
  r.end();
  assert.deepEqual(got, ['ok\uFFFD']);
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

test('URLs by dialect', () => {
  assert.equal(buildUrl('http://h:1/v1/', 'openai'), 'http://h:1/v1/chat/completions');
  assert.equal(buildUrl('http://h/v1', 'anthropic'), 'http://h/v1/messages');
  assert.equal(buildUrl('http://h/v1', 'openai-responses'), 'http://h/v1/responses');
  assert.equal(modelsUrl('http://h/v1/chat/completions'), 'http://h/v1/models');
  assert.equal(modelsUrl('http://h/v1/messages'), 'http://h/v1/models');
  assert.equal(propsUrl('http://h:8080/v1/chat/completions'), 'http://h:8080/props');
  assert.equal(providerFromStr('anthropic'), 'anthropic');
  assert.equal(providerFromStr('ollama'), 'ollama');
  assert.equal(providerFromStr('openai-responses'), 'openai-responses');
  assert.equal(providerFromStr('bogus'), 'openai');
  assert.equal(providerFromStr(undefined), 'openai');
});

test('token bucket: starts full, waits, refills fractionally', () => {
  let t = 0;
  const b = new TokenBucket(10, 20, () => t);
  assert.equal(b.delay(20), 0);
  b.consume(20);
  assert.equal(b.delay(1), 100);
  t += 50;
  assert.equal(b.delay(1), 50);
  t += 50;
  assert.equal(b.delay(1), 0);
});
