// Fuzzing binary detection of tool output (src/core/tool-output.ts): for any bytes, the offset it
// reports is the one a byte-by-byte UTF-8 validator finds (the first NUL, or the start of the first
// ill-formed sequence: a stray continuation, a truncated, overlong or surrogate sequence, a code
// point past U+10FFFF), and clean bytes come back as their text. Strings likewise: the first NUL
// or lone surrogate, counted in UTF-8 bytes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstBinaryOffset, outputText } from '../../src/core/tool-output.js';
import { check, fc } from '../fixtures/fuzz.js';

/** The oracle: RFC 3629 well-formedness checked byte by byte. */
function validatorOffset(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c === 0) return i;
    if (c < 0x80) {
      i++;
      continue;
    }
    const len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > b.length) return i;
    let cp = c & (0xff >> (len + 1));
    for (let k = 1; k < len; k++) {
      if ((b[i + k]! & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (b[i + k]! & 0x3f);
    }
    if (cp < [0, 0, 0x80, 0x800, 0x10000][len]! || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return -1;
}

const enc = new TextEncoder();
/** Bytes that are mostly text, with the troublemakers mixed in: NUL, U+FFFD itself, a BOM, bad sequences. */
const piece = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 6 }).map((s) => enc.encode(s)),
  fc
    .constantFrom(
      [0x00],
      [0xef, 0xbf, 0xbd],
      [0xef, 0xbb, 0xbf],
      [0x80],
      [0xc0, 0x80],
      [0xe0, 0x80, 0x80],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xe2, 0x82],
      [0xf0, 0x9f],
      [0xff],
    )
    .map((a) => new Uint8Array(a)),
  fc.uint8Array({ maxLength: 4 }),
);
const bytes = fc.array(piece, { maxLength: 8 }).map((ps) => {
  const out = new Uint8Array(ps.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of ps) {
    out.set(p, at);
    at += p.length;
  }
  return out;
});

test('tool output: any bytes — the binary offset is the first NUL or ill-formed sequence, clean bytes are their text', () => {
  check(2000, bytes, (b) => {
    const want = validatorOffset(b);
    assert.equal(firstBinaryOffset(b), want);
    assert.equal(
      outputText(b),
      want < 0 ? new TextDecoder().decode(b) : `[tool output contained binary data at byte offset ${want} of ${b.length}; not displayed]`,
    );
  });
});

test('tool output: any string — the first NUL or lone surrogate, in UTF-8 bytes; clean strings unchanged', () => {
  const unit = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 4 }), fc.constantFrom('\0', '\ud800', '\udc00', '\ud83d\udc4d', '\ufffd'));
  check(
    1000,
    fc.array(unit, { maxLength: 8 }).map((us) => us.join('')),
    (s) => {
      const bad = [...s].findIndex((ch) => ch === '\0' || (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff'));
      const want = bad < 0 ? -1 : enc.encode([...s].slice(0, bad).join('')).length;
      assert.equal(
        outputText(s),
        want < 0 ? s : `[tool output contained binary data at byte offset ${want} of ${enc.encode(s).length}; not displayed]`,
      );
    },
  );
});
