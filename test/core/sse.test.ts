// The server-sent events reader: line ends, multi-line data, comments, characters split across chunks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseReader } from '../../src/core/sse.js';

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
