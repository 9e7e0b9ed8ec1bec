// NO_COLOR (no-color.org) on the interactive UI: no colour reaches the terminal, in either mode;
// the status bar stays apart from the transcript in inverse video, and bold, dim and the like stay.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PtyScreen } from '../fixtures/pty-screen.js';
import { uiSuite } from '../fixtures/ui-suite.js';

const ui = await uiSuite();

/** Colour parameters in the SGR sequences written: 30–49, 90–107 (38;… and 48;… included). */
function colours(raw: string): string[] {
  const found: string[] = [];
  for (const m of raw.matchAll(/\x1b\[([0-9;:]*)m/g))
    for (const p of m[1]!.split(';')) {
      const n = Number(p.split(':')[0]);
      if ((n >= 30 && n <= 49) || (n >= 90 && n <= 107)) found.push(m[0]);
    }
  return found;
}

const row = (s: PtyScreen, text: string) => s.find(text)?.row ?? -1;

for (const mode of ['fullscreen', 'inline'] as const) {
  test(`${mode}: NO_COLOR: no colour is written; the status bar is in inverse video`, async (t) => {
    const s = await ui.open(t, mode === 'inline' ? ['--no-alt-screen'] : [], { env: { NO_COLOR: '1' } });
    s.type('shelltest\r');
    await s.waitFor('(y) once', 'the question');
    await new Promise((r) => setTimeout(r, 600));
    s.type('y');
    await s.waitFor('Yellow', 'the reply');
    assert.deepEqual(colours(s.raw()), [], 'colours written');
    const bar = row(s, ' clm [mock/mock-model:test]');
    assert.ok(bar >= 0, s.text());
    const c = s.cell(bar, 2);
    assert.equal(c.inverse, true, 'the status bar in inverse video');
    assert.equal(c.fg, -1);
    assert.equal(c.bg, -1);
    // Bold is no colour: the markdown keeps it.
    const b = s.find('bold')!;
    assert.equal(s.cell(b.row, b.col).bold, true);
  });
}

test('without NO_COLOR the status bar is black on blue', async (t) => {
  const s = await ui.open(t);
  await s.waitFor(' clm [mock/mock-model:test]');
  const c = s.cell(row(s, ' clm [mock/mock-model:test]'), 2);
  assert.equal(c.inverse, false);
  assert.notEqual(c.bg, -1);
});
