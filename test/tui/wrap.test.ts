import { test } from 'node:test';
import assert from 'node:assert/strict';
import { padEnd, sliceColumns, truncate, wrapSpans, wrapSpansKept, wrapText } from '../../src/tui/wrap.js';
import { stripEscapes } from '../../src/tui/escapes.js';
import { parseAnsi } from '../../src/tui/spans.js';
import { BOLD, DEFAULT_STYLE, ITALIC, style } from '../../src/tui/style.js';
import type { Span } from '../../src/tui/spans.js';
import { check, fc } from '../fixtures/fuzz.js';
import { visibleWidth } from '../../src/tui/width.js';

const plain = (ls: string[]) => ls.map(stripEscapes);

test('word wrap breaks between words and drops the spaces at the break', () => {
  assert.deepEqual(wrapText('the quick brown fox jumps', 10), ['the quick', 'brown fox', 'jumps']);
  assert.deepEqual(wrapText('a  b', 10), ['a  b']);
  assert.deepEqual(wrapText('  indented line', 20), ['  indented line']);
  assert.deepEqual(wrapText('one\ntwo\n\nfour', 10), ['one', 'two', '', 'four']);
});

test('a word longer than the width is broken by grapheme', () => {
  assert.deepEqual(wrapText('abcdefghij', 4), ['abcd', 'efgh', 'ij']);
  assert.deepEqual(wrapText('日本語テキスト', 5), ['日本', '語テ', 'キス', 'ト']);
  for (const l of wrapText('日本語テキスト', 5)) assert.ok(visibleWidth(l) <= 5);
});

test('styles survive a wrap: each line opens what is in force and closes it', () => {
  const lines = wrapText('\x1b[1mbold words that wrap\x1b[0m after', 10);
  assert.deepEqual(plain(lines), ['bold words', 'that wrap', 'after']);
  for (const l of lines.slice(0, 2)) {
    const spans = parseAnsi(l);
    assert.ok(
      spans.every((s) => s.style.flags & BOLD),
      `every run of ${JSON.stringify(l)} is bold`,
    );
    assert.ok(l.endsWith('\x1b[0m'), 'closed at the end');
  }
  assert.ok(!(parseAnsi(lines[2]!)[0]!.style.flags & BOLD));
});

test('a styled word that runs into plain text is one word', () => {
  const lines = wrapText('xx \x1b[3mital\x1b[0mic yy', 8);
  assert.deepEqual(plain(lines), ['xx', 'italic', 'yy']);
  assert.ok(parseAnsi(lines[1]!)[0]!.style.flags & ITALIC);
});

test('hard wrap keeps every space (code)', () => {
  assert.deepEqual(wrapText('  a   b  ', 4, { hard: true }), ['  a ', '  b ', ' ']);
});

test('prefixes: first line and the rest', () => {
  assert.deepEqual(wrapText('aaa bbb ccc', 9, { prefix: '  - ', restPrefix: '    ' }), ['  - aaa', '    bbb', '    ccc']);
});

test('tabs expand to the next stop of 4', () => {
  assert.deepEqual(wrapText('a\tb', 20, { hard: true }), ['a   b']);
});

test('truncate cuts by columns and ends in an ellipsis', () => {
  assert.equal(truncate('hello world', 8), 'hello w…');
  assert.equal(truncate('short', 8), 'short');
  assert.equal(stripEscapes(truncate('\x1b[31m日本語テキスト\x1b[0m', 7)), '日本語…');
  assert.equal(visibleWidth(truncate('日本語テキスト', 6)), 5);
});

test('sliceColumns keeps styles and blanks half of a wide character', () => {
  assert.equal(stripEscapes(sliceColumns('abcdef', 2, 4)), 'cd');
  assert.equal(stripEscapes(sliceColumns('日本語', 1, 5)), ' 本 ');
  const s = sliceColumns('\x1b[1mbold\x1b[0m', 1, 3);
  assert.ok(parseAnsi(s)[0]!.style.flags & BOLD);
});

test('padEnd pads by display width', () => {
  assert.equal(padEnd('日本', 6), '日本  ');
});

test('wrapSpansKept (fast-check): the lines of a long paragraph, kept, wrap as wrapSpans wraps the whole', { timeout: 60_000 }, () => {
  const styles = [DEFAULT_STYLE, style({ bold: true }), style({ fg: 'cyan' }), style({ italic: true, fg: 'red' })];
  const words = ['a', 'word', 'longerwordthanthat', '日本語', '👍🏽', '\t', ' ', '  ', '\n', '\n\n', 'x'.repeat(30), 'é'];
  const span = fc.record({
    text: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 8 }).map((ws) => ws.join('')),
    style: fc.constantFrom(...styles),
  });
  // Repeated, as a streamed paragraph's lines are drawn again frame after frame.
  const spans = fc.array(span, { minLength: 1, maxLength: 30 }).map((ss): Span[] => [...ss, { text: '\n', style: DEFAULT_STYLE }, ...ss]);
  check(300, fc.tuple(spans, fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 80 })), ([ss, width, extra]) => {
    // Enough line breaks, or not, for the kept path.
    const all: Span[] = [...ss, { text: '\nline\n'.repeat(extra), style: DEFAULT_STYLE }];
    assert.deepEqual(wrapSpansKept(all, width), wrapSpans(all, width));
    assert.deepEqual(wrapSpansKept(all, width), wrapSpans(all, width), 'again, from what was kept');
    return true;
  });
});
