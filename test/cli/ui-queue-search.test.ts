// The interactive UI on a pty against the scripted mock LLM: the prompt queue taken back into the
// input with Up (to edit and queue again, or to drop); search in the full-screen transcript.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KEYS, type PtyScreen } from '../fixtures/pty-screen.js';
import * as oa from '../fixtures/openai-replies.js';
import { fruitReply, uiSuite } from '../fixtures/ui-suite.js';

const ui = await uiSuite();
const { mock } = ui;

/** Alt+Up as xterm sends it. */
const ALT_UP = '\x1b[1;3A';

const inputRow = (s: PtyScreen) => (s.screen()[s.cursor().row] ?? '').trimEnd();

test('Alt+Up on an empty input while a turn runs takes the last queued prompt back, Up stays the history: edited it queues again, cleared it is gone', async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  mock.push(fruitReply(600));
  s.type('first\r');
  await s.waitFor('clm>', 'the first reply to start');
  s.type('second\r');
  s.type('third\r');
  await s.waitFor(() => s.text().includes('you> third  (queued)') && s.text().includes('you> second  (queued)'), 'both queued');
  // Up is the history even with prompts queued (the original's suite expects that).
  s.type(KEYS.up);
  await s.waitFor(() => /(first|second|third)$/.test(inputRow(s)), 'a prompt from the history');
  assert.ok(s.text().includes('you> third  (queued)') && s.text().includes('you> second  (queued)'), 'both still queued');
  s.type(KEYS.ctrl('u'));
  await s.waitFor(() => !/(first|second|third)$/.test(inputRow(s)), 'the input cleared');
  s.type(ALT_UP);
  await s.waitFor(() => inputRow(s).endsWith('third') && !s.text().includes('you> third  (queued)'), 'the last queued prompt in the input');
  assert.ok(s.text().includes('you> second  (queued)'));
  s.type(' edited\r');
  await s.waitFor(() => s.text().includes('you> third edited  (queued)'), 'queued again as edited');
  // Taken back once more and cleared: it is not sent.
  s.type(ALT_UP);
  await s.waitFor(() => inputRow(s).endsWith('third edited'), 'back in the input');
  s.type(KEYS.ctrl('u'));
  await s.waitFor(() => !s.text().includes('third edited'), 'dropped');
  await s.waitFor(() => mock.posts.length === 2, 'the second turn');
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, 'second');
  await s.waitFor(() => s.lines().filter((l) => l.includes('Yellow')).length === 2, 'its reply');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(mock.posts.length, 2, 'the dropped prompt is not sent');
  // Idle with an empty queue, Up is the history again (the last line entered).
  s.type(KEYS.up);
  await s.waitFor(() => inputRow(s).endsWith('third edited'), 'the history');
});

/** A reply of 80 paragraphs, `filler N`, with `NEEDLE one` as the 5th and `needle two` as the 40th. */
function haystack() {
  const paras = Array.from({ length: 80 }, (_, i) => (i === 4 ? 'NEEDLE one' : i === 39 ? 'needle two' : `filler ${i + 1}`));
  return oa.streamText([paras.join('\n\n')]);
}

/** Whether the text at `what` on the screen is drawn in reverse video. */
function reversed(s: PtyScreen, what: string): boolean {
  const at = s.find(what);
  assert.ok(at, `${what} on the screen`);
  return s.cell(at.row, at.col).inverse;
}

test('Ctrl-S searches the full-screen transcript: matches in reverse video, n up and N down, Esc closes; Home goes to the top', async (t) => {
  const s = await ui.open(t, [], { cols: 80, rows: 20 });
  await s.waitFor('[online]');
  mock.push(haystack());
  s.type('go\r');
  await s.waitFor('filler 80', 'the reply');
  assert.ok(!s.text().includes('needle two'), 'scrolled past');
  s.type(KEYS.ctrl('s'));
  await s.waitFor('search: ', 'the search line');
  s.type('needle');
  await s.waitFor('search: needle', 'the text typed into the search line');
  assert.ok(!inputRow(s).includes('needle'), 'not into the input');
  s.type(KEYS.enter);
  await s.waitFor('2/2 (n up, N down', 'the nearest match from the end');
  await s.waitFor('needle two', 'brought into view');
  assert.equal(reversed(s, 'needle two'), true);
  assert.equal(reversed(s, 'two'), false, 'only the match');
  s.type('n');
  await s.waitFor('1/2 (n up', 'the next one up');
  await s.waitFor('NEEDLE one', 'in view, whatever its case');
  assert.equal(reversed(s, 'NEEDLE one'), true);
  s.type('N');
  await s.waitFor('2/2 (n up', 'back down');
  s.type(KEYS.esc);
  await s.waitFor(() => !s.text().includes('search: '), 'closed');
  assert.equal(reversed(s, 'needle two'), false, 'no highlight once closed');
  assert.equal(mock.posts.length, 1, 'nothing was sent');
  s.type(KEYS.ctrl('s'));
  await s.waitFor('search: ', 'open again');
  s.type('nothing like it\r');
  await s.waitFor('no match (Esc close)');
  s.type(KEYS.esc);
  await s.waitFor(() => !s.text().includes('search: '), 'closed');
  s.type(KEYS.home);
  await s.waitFor(() => s.text().includes('type a prompt') && s.text().includes('you> go'), 'the top of the transcript');
  s.type(KEYS.end);
  await s.waitFor('filler 80', 'the end again');
});
