// Fuzzing the SSE framing (src/core/sse.ts): any event list written with any line endings and
// comments, cut into any chunks (also inside a character or between CR and LF), reads back
// exactly; any bytes at all never make it throw.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseReader } from '../../src/core/sse.js';
import { check, cutAt, fc } from '../fixtures/fuzz.js';

const enc = new TextEncoder();

/** One line of an event's data or a name: any well-formed text without line ends. */
const lineText = fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, ''));
const eventArb = fc.record({
  event: fc.option(
    lineText.filter((s) => s.trim() !== '' && !s.startsWith(' ')),
    { nil: undefined },
  ),
  lines: fc.array(lineText, { minLength: 1, maxLength: 4 }),
});
const eol = fc.constantFrom('\n', '\r\n', '\r');

test('SSE: events written with any line ends and comments, cut anywhere, read back exactly', () => {
  check(
    400,
    fc.record({
      events: fc.array(eventArb, { maxLength: 6 }),
      ends: fc.array(eol, { minLength: 64, maxLength: 64 }),
      comments: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      lastOpen: fc.boolean(),
      cuts: fc.array(fc.nat(), { maxLength: 12 }),
    }),
    ({ events, ends, comments, lastOpen, cuts }) => {
      let k = 0;
      let last = '';
      // A CR then a separate LF would read as one CRLF: after a CR, an LF end is written as CRLF.
      const nl = () => {
        const e = ends[k++ % ends.length]!;
        last = last === '\r' && e === '\n' ? '\r\n' : e;
        return last;
      };
      let text = '';
      events.forEach((e, i) => {
        if (comments[i % comments.length]) text += `: keep-alive ${i}${nl()}`;
        if (e.event !== undefined) text += `event: ${e.event}${nl()}`;
        for (const l of e.lines) text += `data: ${l}${nl()}`;
        // The last event may be left without its blank line (a server that closed right away).
        if (!(lastOpen && i === events.length - 1)) text += nl();
      });
      const got: [string, string][] = [];
      const r = new SseReader((ev, data) => got.push([ev, data]));
      for (const c of cutAt(enc.encode(text), cuts)) r.push(c);
      r.end();
      assert.deepEqual(
        got,
        events.map((e) => [e.event ?? '', e.lines.join('\n')]),
      );
    },
  );
});

test('SSE: any bytes in any chunks never throw, and every event is text', () => {
  check(400, fc.record({ data: fc.uint8Array({ maxLength: 200 }), cuts: fc.array(fc.nat(), { maxLength: 8 }) }), ({ data, cuts }) => {
    const r = new SseReader((ev, d) => {
      assert.equal(typeof ev, 'string');
      assert.equal(typeof d, 'string');
    });
    for (const c of cutAt(data, cuts)) r.push(c);
    r.end();
  });
});

test('SSE: field lines mixed with noise (unknown fields, id, retry, BOM) keep the data intact', () => {
  const noise = fc.constantFrom('id: 7', 'retry: 100', 'foo: bar', 'datax: nope', ':', 'event', 'id');
  check(
    300,
    fc.record({ lines: fc.array(lineText, { minLength: 1, maxLength: 3 }), noise: fc.array(noise, { maxLength: 3 }), bom: fc.boolean() }),
    ({ lines, noise: extra, bom }) => {
      const text = `${bom ? '\uFEFF' : ''}${extra.join('\n')}${extra.length ? '\n' : ''}${lines.map((l) => `data: ${l}`).join('\n')}\n\n`;
      const got: string[] = [];
      const r = new SseReader((_e, d) => got.push(d));
      r.push(enc.encode(text));
      r.end();
      assert.deepEqual(got, [lines.join('\n')]);
    },
  );
});
