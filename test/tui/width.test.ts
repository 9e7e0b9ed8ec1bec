// Display width against string-width (the widely used implementation) on a corpus of hard cases:
// every gemoji emoji, CJK, combining marks, Hangul jamo, ZWJ sequences, flags, keycaps, controls.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import stringWidth from 'string-width';
import { gemoji } from 'gemoji';
import { graphemes, graphemeWidth, textWidth, visibleWidth } from '../../src/tui/width.js';

const corpus: string[] = [
  '',
  'hello',
  'a b c',
  '~!@#$%^&*()_+{}|:"<>?',
  '日本語',
  '中文字符',
  '한국어',
  'ｈａｌｆ',
  'ﾊﾝｶｸ',
  'ｶﾞ',
  'e\u0301',
  'a\u0308\u0304',
  '\u0301',
  'Ä',
  'ñ',
  'ß',
  'ﬁ',
  'Ω',
  'Я',
  'ש',
  'عربى',
  'हिन्दी',
  'ไทย',
  'ก\u0e35',
  '\u1100\u1161',
  '\u1100\u1161\u11a8',
  '\u1100\u1100\u1161',
  '\u115f\u1160',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\u00ad',
  '\u2060',
  'a\u200bb',
  '\t',
  '\x07',
  'a\x00b',
  '\u007f',
  '\u0085',
  '👍',
  '👍🏽',
  '👨‍👩‍👧‍👦',
  '🏳️‍🌈',
  '🇯🇵',
  '🇺🇸🇬🇧',
  '1️⃣',
  '#️⃣',
  '*⃣',
  '☺',
  '☺️',
  '❤',
  '❤️',
  '©',
  '©️',
  '™',
  '⌚',
  '⌨',
  '⌨️',
  '🫠',
  '🧑🏿‍🦱',
  '🏴󠁧󠁢󠁳󠁣󠁴󠁿',
  '🇦',
  '👁‍🗨',
  '⚡',
  '✅',
  '✔',
  '✔️',
  '↔',
  '↔️',
  '─│┌┐└┘├┤┬┴┼',
  '•·…',
  '€£¥',
  '½',
  '±',
  '°',
  'µ',
  '∑∫√',
  '✓✗',
  '→←↑↓',
  '█░▒▓',
  'mixed 日本 and 👍 text',
  'tab\there',
  'line\nbreak',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '𠀋',
  '〜',
  '〰️',
  '゙',
  'が',
  'か\u3099',
];
for (const g of gemoji) corpus.push(g.emoji);

test('textWidth agrees with string-width on the corpus (every gemoji emoji included)', () => {
  const wrong: string[] = [];
  for (const s of corpus) {
    const want = stringWidth(s);
    const got = textWidth(s);
    if (got !== want) wrong.push(`${JSON.stringify(s)}: ${got} ≠ ${want}`);
  }
  assert.deepEqual(wrong, []);
  assert.ok(corpus.length > 1800);
});

test('printable ASCII takes the fast path and equals its length', () => {
  assert.equal(textWidth('abc def'), 7);
  assert.deepEqual(graphemes('abc'), ['a', 'b', 'c']);
});

test('graphemes keep clusters whole', () => {
  assert.deepEqual(graphemes('e\u0301x'), ['e\u0301', 'x']);
  assert.deepEqual(graphemes('👨‍👩‍👧‍👦a'), ['👨‍👩‍👧‍👦', 'a']);
  assert.deepEqual(graphemes('🇯🇵🇺🇸'), ['🇯🇵', '🇺🇸']);
  assert.equal(graphemeWidth('日'), 2);
  assert.equal(graphemeWidth('\u200b'), 0);
});

test('visibleWidth ignores SGR, OSC 8 links and the cursor marker', () => {
  assert.equal(visibleWidth('\x1b[1;31mred\x1b[0m'), 3);
  assert.equal(visibleWidth('\x1b]8;;https://x.y\x1b\\link\x1b]8;;\x1b\\'), 4);
  assert.equal(visibleWidth('ab\x1b_clm:cursor\x1b\\cd'), 4);
  assert.equal(visibleWidth('\x1b[38;5;208m日本\x1b[0m'), 4);
});
