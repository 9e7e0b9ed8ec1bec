// The one masker: a secret is found however clm writes it (as it is, JSON-escaped, URL-encoded),
// with invisible characters inside it, and across the pieces of a stream, holding back only what
// could still turn out to be a secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Secrets } from '../../src/host/redact.js';
import { tally } from '../fixtures/tally.js';

test('Secrets: short values are not secrets; a value that contains another is masked whole', () => {
  const s = new Secrets(['sk-SECRET-1234', 'ab', 'tok-9999', 'tok-9999-long']);
  assert.deepEqual(s.values, ['sk-SECRET-1234', 'tok-9999', 'tok-9999-long']);
  assert.equal(s.mask('key sk-SECRET-1234 and ab'), 'key [REDACTED] and ab');
  assert.equal(s.mask('tok-9999-long tok-9999'), '[REDACTED] [REDACTED]');
  assert.ok(new Secrets(['ab']).empty);
  const text = 'nothing to hide';
  assert.equal(s.mask(text), text);
});

test('Secrets: the JSON-escaped and URL-encoded spellings are masked too', () => {
  const odd = 'a"b\tc\\d e/f&g';
  const s = new Secrets([odd]);
  assert.equal(s.mask(`raw ${odd}.`), 'raw [REDACTED].');
  assert.equal(s.mask(`{"system":${JSON.stringify(`say ${odd}`)}}`), '{"system":"say [REDACTED]"}');
  assert.equal(s.mask(`https://h/x?key=${encodeURIComponent(odd)}&z=1`), 'https://h/x?key=[REDACTED]&z=1');
  assert.equal(s.mask(`k=${new URLSearchParams({ k: odd }).toString().slice(2)}`), 'k=[REDACTED]');
  tally('bad_inputs', 4);
});

test('Secrets: invisible characters inside a secret do not hide it; those outside it stay', () => {
  const key = 'tvly-SECRET-93ab27cd';
  const s = new Secrets([key]);
  const hidden = `${key.slice(0, 4)}\u200b${key.slice(4, 9)}\u2060\u00ad${key.slice(9)}`;
  assert.equal(s.mask(`a\u200bb ${hidden} c\u200d`), 'a\u200bb [REDACTED] c\u200d');
  assert.equal(s.mask(`${hidden}${hidden}`), '[REDACTED][REDACTED]');
  // A tag character (outside the Basic Multilingual Plane) inside it.
  assert.equal(s.mask(`x${key.slice(0, 6)}\u{e0041}${key.slice(6)}y`), 'x[REDACTED]y');
  assert.equal(Buffer.from(s.maskBytes(Buffer.from(`out: ${hidden}\n`))).toString(), 'out: [REDACTED]\n');
  tally('bad_inputs', 4);
});

test('SecretStream: a secret split over pieces is masked; only what could start one is held back', () => {
  const s = new Secrets(['sk-SECRET-1234', 'tok-9999']);
  const m = s.stream();
  const parts = ['here sk-SEC', 'RET-12', '34 there tok', '-9999', ' end sk-'];
  assert.deepEqual(
    parts.map((p) => m.push(p)),
    ['here ', '', '[REDACTED] there ', '[REDACTED]', ' end '],
  );
  assert.equal(m.flush(), 'sk-', 'a start that never completed is let out at the end');
  assert.equal(m.push('x'), 'x');
  // A zero-width space in the middle of a split secret.
  const z = s.stream();
  assert.equal(z.push('key: sk-SE\u200b') + z.push('CRET-1234!') + z.flush(), 'key: [REDACTED]!');
  // Nothing is held back when no secret can start at the end.
  assert.equal(s.stream().push('plain text, no key here.'), 'plain text, no key here.');
  assert.equal(new Secrets().stream().push('sk-'), 'sk-');
  tally('bad_inputs', 3);
});
