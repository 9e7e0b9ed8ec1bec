// Search in the transcript: which lines hold the text (as shown, whatever its case and styles),
// and the line with each occurrence in reverse video, the line's own styles kept.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { highlightMatches, matchingLines } from '../../src/tui/search.js';
import { parseRow } from '../../src/tui/row.js';
import { INVERSE } from '../../src/tui/style.js';
import { Transcript } from '../../src/tui/transcript.js';

/** Which cells of the line are in reverse video, as a string of `^` and ` `. */
function marks(line: string): string {
  const r = parseRow(line, 200);
  return r.cells.map((_, i) => (r.styles[i]!.flags & INVERSE ? '^' : ' ')).join('');
}

test('highlightMatches: every occurrence, any case, across style changes; a reset inside a match keeps it', () => {
  assert.equal(marks(highlightMatches('a Needle and a needle', 'needle')), '  ^^^^^^       ^^^^^^');
  assert.equal(marks(highlightMatches('x \x1b[1mnee\x1b[0mdle y', 'needle')), '  ^^^^^^  ');
  assert.equal(marks(highlightMatches('aaaa', 'aa')), '^^^^');
  assert.equal(highlightMatches('no match here', 'needle'), 'no match here');
  assert.equal(highlightMatches('anything', ''), 'anything');
  assert.equal(parseRow(highlightMatches('\x1b[31mred needle\x1b[0m', 'needle'), 80).cells.join(''), 'red needle', 'the text unchanged');
});

test('matchingLines: the transcript lines that hold the text, in order', () => {
  const t = new Transcript();
  t.add({ render: () => ['first', 'a \x1b[1mNeedle\x1b[0m here'] });
  t.add({ render: () => ['none', 'needle again', 'nee', 'dle'] });
  assert.deepEqual(matchingLines(t, 80, 'needle'), [1, 3]);
  assert.deepEqual(matchingLines(t, 80, ''), []);
});
