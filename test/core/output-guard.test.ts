// The pure parts of the output guard: forTerminal (controls shown, not obeyed) and
// SecretStream (secrets masked in text that arrives in pieces).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forTerminal, showInvisible } from '../../src/core/terminal-text.js';
import { SecretStream } from '../../src/host/redact.js';

test('forTerminal: C0, DEL, C1 and bidi controls are shown; text, newlines and tabs are kept', () => {
  assert.equal(forTerminal('plain text, ünïcode ✓\n\tindented'), 'plain text, ünïcode ✓\n\tindented');
  assert.equal(forTerminal('\x1b]52;c;aGk=\x07'), '^[]52;c;aGk=^G');
  assert.equal(forTerminal('\x1b[31mred\x1b[0m'), '^[[31mred^[[0m');
  assert.equal(forTerminal('a\r\nb\rc\x08\x7f\x00'), 'a\nb^Mc^H^?^@');
  assert.equal(forTerminal('\x9b2J \u202eevil\u202c \u2066x\u2069'), '<U+009B>2J <U+202E>evil<U+202C> <U+2066>x<U+2069>');
  // Pieces need no state: each ESC is neutralised where it stands.
  assert.equal(forTerminal('\x1b') + forTerminal(']0;t\x07'), '^[]0;t^G');
});

test('forTerminal and showInvisible: invisible characters are shown; joiners and emoji selectors are kept', () => {
  assert.equal(forTerminal('pay\u200bpal \u2060x\u00ad \u{e0041}'), 'pay<U+200B>pal <U+2060>x<U+00AD> <U+E0041>');
  const family = '\u{1f468}\u200d\u{1f469}\u200d\u{1f467} \u2764\ufe0f \u0645\u200c\u06cc';
  assert.equal(forTerminal(family), family);
  assert.equal(showInvisible('a\u200bb\x1b[1m'), 'a<U+200B>b\x1b[1m', 'controls are left to the painter');
  assert.equal(showInvisible(family), family);
});

test('SecretStream: a secret split over pieces is masked; what cannot be a secret passes at once', () => {
  const secret = 'sk-abcdefghij';
  const pieces = ['key: s', 'k-abc', 'defghij and more', ' sk', '-'];
  const s = new SecretStream(() => [secret]);
  const out = pieces.map((p) => s.push(p));
  assert.deepEqual(out, ['key: ', '', '[REDACTED] and more', ' ', '']);
  assert.equal(s.flush(), 'sk-', 'a start that never completed is released at the end');
  const none = new SecretStream(() => []);
  assert.equal(none.push('anything at all'), 'anything at all');
  const t = new SecretStream(() => [secret]);
  assert.equal(t.push(`${secret}${secret}`) + t.flush(), '[REDACTED][REDACTED]');
});
