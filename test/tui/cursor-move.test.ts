// The cursor moves the renderer writes: the shortest way on the wire, and only ways that land.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cursorMove, wireLength } from '../../src/tui/cursor-move.js';

const abs = { lineFeedReturns: true, lineFeedsSafe: true, rowsSafe: true, absolute: true };
const rel = { lineFeedReturns: true, lineFeedsSafe: true, rowsSafe: true, absolute: false };

test('cursor moves: the fewest bytes on the wire, a line feed counting two where it returns', () => {
  assert.equal(cursorMove(3, 7, 3, 7, abs), '');
  assert.equal(cursorMove(3, 7, 3, 0, abs), '\r');
  assert.equal(cursorMove(3, 7, 3, 9, abs), '\x1b[2C');
  // A row down to column 0: a line feed (CR LF on the wire) ties with VT CR, and is taken.
  assert.equal(cursorMove(3, 7, 4, 0, abs), '\n');
  // Down and to column 0: vertical tabs (one byte each, the tty adds nothing) and a CR beat CUP
  // (5 bytes here) and line feeds (two each).
  assert.equal(cursorMove(13, 7, 15, 0, abs), '\v\v\r');
  assert.equal(cursorMove(3, 7, 5, 0, abs), '\v\v\r');
  assert.equal(cursorMove(3, 7, 9, 0, abs), '\x1b[10H');
  // Down keeping the column: vertical tabs alone.
  assert.equal(cursorMove(3, 7, 4, 7, rel), '\v');
  assert.equal(cursorMove(3, 7, 6, 7, rel), '\v\v\v');
  assert.equal(cursorMove(3, 7, 9, 7, rel), '\x1b[6B');
  assert.equal(cursorMove(20, 40, 21, 2, rel), '\v\x1b[3G');
  assert.equal(cursorMove(21, 2, 20, 5, rel), '\x1b[A\x1b[6G');
  // Without ONLCR a line feed keeps the column too; the vertical tab is taken either way.
  assert.equal(cursorMove(3, 7, 4, 7, { ...rel, lineFeedReturns: false }), '\v');
  assert.equal(cursorMove(3, 7, 4, 0, { ...rel, lineFeedReturns: false }), '\v\r');
  assert.equal(wireLength('a\nb\n', true), 6);
  assert.equal(wireLength('a\nb\n', false), 4);
});

test('cursor moves: never a line feed that would scroll, nor an up/down move a margin stops, nor a relative move from nowhere', () => {
  assert.equal(cursorMove(3, 7, 4, 0, { ...abs, lineFeedsSafe: false }), '\x1b[5H');
  assert.equal(cursorMove(3, 7, 4, 7, { ...rel, lineFeedsSafe: false }), '\x1b[B');
  assert.equal(cursorMove(29, 7, 30, 29, { ...abs, lineFeedsSafe: false, rowsSafe: false }), '\x1b[31;30H');
  assert.equal(cursorMove(-1, -1, 2, 0, abs), '\x1b[3H');
  // The column is not known (a write reached the last column): nothing relative to it.
  assert.equal(cursorMove(4, -1, 4, 3, rel), '\x1b[4G');
});
