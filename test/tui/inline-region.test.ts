// The inline region's bookkeeping on its own: which rows are frozen, which transcript lines they
// show, and how both are found again after a resize — without a terminal.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countInk, dropInk, InlineRegion, tailAfterInk } from '../../src/tui/inline-region.js';
import { parseRow } from '../../src/tui/row.js';
import { stripEscapes } from '../../src/tui/escapes.js';
import { paint } from '../../src/tui/style.js';

const row = (s: string, w = 80) => parseRow(s, w);

test('ink: letters and digits of any script count; rules, borders, bullets and punctuation do not', () => {
  assert.equal(countInk(row('hello, world 42.')), 12);
  assert.equal(countInk(row('日本語 text')), 7);
  assert.equal(countInk(row('─'.repeat(60))), 0);
  assert.equal(countInk(row('│ key │ value │')), 8);
  assert.equal(countInk(row('+-----+ | • … ---')), 0);
  // The same table row drawn at two widths: the same ink.
  assert.equal(countInk(row(`│ alpha │${' '.repeat(40)}3 │`)), countInk(row('│ alpha │ 3 │')));
});

test('tail: what a row shows after its last ink character', () => {
  assert.equal(tailAfterInk(row('aa, bb. cc, dd. ee,')), ',');
  assert.equal(tailAfterInk(row('const x = f(1);')), ');');
  assert.equal(tailAfterInk(row('no tail')), '');
  assert.equal(tailAfterInk(row('─────')), null);
});

test('dropInk: the rest of a line whose head is in the scrollback, its punctuation and blanks dropped, styles kept', () => {
  assert.equal(dropInk('aa, bb. cc, dd. ee, ff. gg', 80, 10, ','), 'ff. gg');
  assert.equal(dropInk('aa, bb. cc, dd. ee, ff. gg', 80, 10, ''), ', ff. gg');
  // Hard-wrapped code: the head ended in the middle of a word.
  assert.equal(dropInk('const value = f(1);', 80, 7, ''), 'lue = f(1);');
  const styled = dropInk(`head ${paint('bold rest', { bold: true })}`, 80, 4, '');
  assert.equal(stripEscapes(styled), 'bold rest');
  assert.ok(styled.includes('\x1b[1m'), JSON.stringify(styled));
});

test('rows scrolled off the top freeze: their ink and tail are counted, their cells let go', () => {
  const r = new InlineRegion();
  r.height = 5;
  r.reset(-2);
  const rows = [row('one, two'), row(''), row('three'), row('four')];
  const lines = ['one, two', '', 'three', 'four'];
  r.freezeScrolledOff(rows, lines);
  assert.equal(r.frozen, 2);
  assert.equal(r.hiddenDoc, 2);
  assert.equal(r.frozenInk, 6);
  assert.equal(r.frozenBlank, 1, 'the blank row after the last one with ink');
  assert.equal(r.frozenTail, '');
  assert.deepEqual(lines, ['', '', 'three', 'four']);
  assert.equal(rows[0]!.cells.length, 0);
  assert.ok(!r.onScreen(1) && r.onScreen(2) && r.onScreen(6) && !r.onScreen(7));
  assert.equal(r.frameRow(2), 2);
});

test('commit: lines behind frozen rows leave their count; lines past them take the frozen rows out of the frame', () => {
  const r = new InlineRegion();
  r.height = 10;
  r.reset(-3);
  for (const s of ['a1', 'b2', 'c3']) r.freeze(row(s));
  r.hiddenDoc = 3;
  r.top = -3;
  assert.equal(
    r.commit(2, () => 4),
    0,
    'all behind frozen rows',
  );
  assert.equal(r.frozenInk, 2);
  assert.equal(r.hiddenDoc, 1);
  assert.equal(r.frozen, 3);
  const drop = r.commit(4, () => 0);
  assert.equal(drop, 3 + 3, 'the frozen rows and the three committed rows past them');
  assert.equal(r.frozen, 0);
  assert.equal(r.hiddenDoc, 0);
  assert.equal(r.top, 3);
});

test('after a resize the lines the frozen rows show are found by their ink at the new width', () => {
  const r = new InlineRegion();
  r.height = 6;
  r.reset(0);
  // Three rows at 20 columns; the first two scrolled off.
  const old = [row('aa bb cc dd ee ff', 20), row('gg hh ii jj kk ll', 20), row('mm nn', 20), row('> ', 20)];
  r.top = -2;
  r.freezeScrolledOff([...old], ['', '', '', '']);
  assert.equal(r.frozenInk, 24);
  // Wider: the screen keeps its rows; the frozen ink is found again in the new lines.
  const layout = r.resize(old, { row: 3, col: 2, docEnd: 3, oldWidth: 20 }, 40, 6, 1);
  assert.deepEqual(layout, { frozen: 2, liveTop: 0 });
  assert.equal(r.pendingSkipInk, 24);
  const doc = ['aa bb cc dd ee ff gg hh ii jj kk ll', 'mm nn'];
  r.locateHidden(doc.length, (k) => countInk(row(doc[k]!, 40)));
  assert.equal(r.hiddenDoc, 1);
  assert.equal(r.hiddenInk, 0);
  assert.equal(r.pendingSkipInk, -1);
  // Narrower: a line half in the scrollback goes on from where its head ended.
  r.reset(0);
  r.freeze(row('aa bb cc', 40));
  r.pendingSkipInk = r.frozenInk;
  const narrow = ['aa bb cc dd ee', 'ff'];
  r.locateHidden(narrow.length, (k) => countInk(row(narrow[k]!, 20)));
  assert.equal(r.hiddenDoc, 0);
  assert.equal(r.hiddenInk, 6, 'six ink characters of the first line are in the scrollback');
});

/** Where the lines frozen rows `frozen` show end in `doc` (after a resize, at width 80). */
function hiddenIn(frozen: string[], doc: string[]): number {
  const r = new InlineRegion();
  r.reset(0);
  for (const s of frozen) r.freeze(row(s));
  r.pendingSkipInk = r.frozenInk;
  r.locateHidden(doc.length, (k) => countInk(row(doc[k]!)));
  return r.hiddenDoc;
}

test('a blank line after the frozen ink stays live when the frozen rows did not show it, and at the end of the transcript', () => {
  const doc = ['text', '', 'more', ''];
  assert.equal(hiddenIn(['text'], doc), 1, 'the blank line was not frozen: it is drawn');
  assert.equal(hiddenIn(['text', ''], doc), 2, 'one frozen blank row shows it');
  assert.equal(hiddenIn(['text', ''], ['text', '']), 1, 'the line the stream goes on in stays live');
  assert.equal(hiddenIn(['text', '─────'], ['text', '──', 'more']), 2, 'a rule is a blank row: one frozen shows one');
});

test('resize: rows a narrower terminal rewraps are reckoned upwards from the cursor; footer rows off the top are not frozen', () => {
  const r = new InlineRegion();
  r.height = 10;
  r.reset(2);
  const rows = [row('x'.repeat(30), 30), row('short', 30), row(' status bar padded to the width  ', 40), row('> ', 30)];
  // At 15 columns the first row takes two rows; the cursor (frame row 3) is on screen row 3.
  const layout = r.resize(rows, { row: 3, col: 2, docEnd: 2, oldWidth: 30 }, 15, 4, 3);
  // tops: row 3 at 3, row 2 (33 ink columns → 3 rows) at 0, row 1 at -1, row 0 at -3.
  assert.deepEqual(layout, { frozen: 2, liveTop: 0 });
  assert.equal(r.frozenInk, 35);
  assert.equal(r.top, -2);
  assert.equal(r.height, 4);
  const r2 = new InlineRegion();
  r2.reset(0);
  const tall = [row('text'), row(' status bar, rewrapped into rows above the screen ', 60), row('> ')];
  const l2 = r2.resize(tall, { row: 2, col: 2, docEnd: 1, oldWidth: 60 }, 10, 3, 2);
  assert.equal(l2.frozen, 1, 'only the transcript row freezes, not the status bar');
  assert.equal(l2.liveTop, 0);
});
