import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeLinkUrl, sanitize } from '../../src/tui/sanitize.js';
import { CURSOR_MARKER } from '../../src/tui/escapes.js';
import { tally } from '../fixtures/tally.js';

const hostile = [
  '\x1b[2J\x1b[Hwiped',
  '\x1b]0;title\x07x',
  '\x1b]52;c;Y2xpcA==\x07copy',
  '\x1bPdcs\x1b\\d',
  '\x1b[?1049h',
  '\x1b[6n',
  '\x1b[31mred\x1b[0m',
  '\x9b2J',
  '\x1bc',
  '\x1b',
  'a\x1b[',
  '\x07\x08\x0b\x0c\x7f',
  CURSOR_MARKER + 'x',
  '\x1b_clm:cursor',
  '\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\',
];

test('no escape sequence or control character survives', () => {
  for (const h of hostile) {
    const s = sanitize(h);
    assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(s), `${JSON.stringify(h)} → ${JSON.stringify(s)}`);
  }
  tally('bad_inputs', hostile.length);
  assert.equal(sanitize('\x1b[2J\x1b[Hwiped'), 'wiped');
  assert.equal(sanitize('\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\'), 'link');
});

test('keepStyles keeps SGR and nothing else', () => {
  assert.equal(sanitize('\x1b[31mred\x1b[0m\x1b[2J', { keepStyles: true }), '\x1b[31mred\x1b[0m');
});

test('newlines and tabs stay; CRLF is LF; a lone CR overwrites like a terminal', () => {
  assert.equal(sanitize('a\tb\nc'), 'a\tb\nc');
  assert.equal(sanitize('a\r\nb'), 'a\nb');
  assert.equal(sanitize('10%\r20%\r30%\ndone'), '30%\ndone');
  assert.equal(sanitize('hello\rJ'), 'Jello');
});

test('lone surrogates become U+FFFD; pairs are kept', () => {
  assert.equal(sanitize('a\ud800b'), 'a\ufffdb');
  assert.equal(sanitize('😀'), '😀');
});

test('plain text is returned as it is', () => {
  const s = 'nothing to see here';
  assert.equal(sanitize(s), s);
});

test('safeLinkUrl admits web, mail and file URLs only', () => {
  assert.ok(safeLinkUrl('https://example.com/a?b=c'));
  assert.ok(safeLinkUrl('mailto:a@b.c'));
  assert.ok(!safeLinkUrl('javascript:alert(1)'));
  assert.ok(!safeLinkUrl('https://x\x1b]8;;y'));
  assert.ok(!safeLinkUrl('https://a b'));
});
