// The permission question of the interactive UI. One that shows up while the person is typing (a
// prompt for later, while the turn runs) is not answered by the keys of that typing: "hello
// again" would otherwise answer (a) always at its seventh key. What is typed goes on into the
// input box; the question takes keys once the typing has paused. And what it asks about is shown
// whole: characters that reorder or hide text are shown by their code.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oa from '../fixtures/openai-replies.js';
import { uiSuite } from '../fixtures/ui-suite.js';
import { TYPING_GAP_MS } from '../../src/cli/ui/permission-queue.js';

const ui = await uiSuite();
const { mock } = ui;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const mode of ['fullscreen', 'inline'] as const) {
  test(`${mode}: keys typed as the question appears do not answer it; they stay in the input`, async (t) => {
    const s = await ui.open(t, mode === 'inline' ? ['--no-alt-screen'] : []);
    mock.push({ ...oa.toolCall('shell_exec', { command: 'echo typed' }), delayMs: 400 }, oa.text('the tool was denied'));
    s.type('go\r');
    await s.waitFor('you> go');
    // Typing starts before the question and goes on after it came, with y, n, a and d in it.
    let typed = '';
    const key = async (c: string) => {
      s.type(c);
      typed += c;
      await sleep(30);
    };
    for (let i = 0; !s.text().includes('allow tool shell_exec'); i++) {
      assert.ok(i < 500, `no question:\n${s.text()}`);
      await key('hello '[i % 6]!);
    }
    for (const c of 'again yes no dance') await key(c);
    await sleep(200);
    const text = s.text();
    assert.ok(!/-> (always )?(allowed|denied)/.test(text), `the typing answered the question:\n${text}`);
    assert.ok(text.includes('(y) once'), text);
    const rows = s.screen();
    const input = rows.slice(rows.findLastIndex((r) => r.startsWith('> '))).map((r) => r.slice(2));
    assert.equal(input.join('').trimEnd(), typed.trimEnd(), `what was typed is in the input box:\n${text}`);
    // A key after a pause answers.
    await sleep(TYPING_GAP_MS + 300);
    s.type('n');
    await s.waitFor('the tool was denied', 'the reply after the denial');
    assert.ok(s.text().includes('-> denied'));
    const tool = mock.posts[1]!.json.messages.find((m: any) => m.role === 'tool');
    assert.match(tool.content, /denied by user/);
  });
}

test('the question shows bidi controls in the arguments by their code: what is allowed is what is seen', async (t) => {
  const s = await ui.open(t);
  // U+202E turns the rest of the line around where bidi is drawn, and is invisible where it is not.
  mock.push(oa.toolCall('shell_exec', { command: 'cat notes\u202etxt.sh\u2066 x' }), oa.text('denied then'));
  s.type('go\r');
  await s.waitFor('allow tool shell_exec', 'the question');
  assert.ok(s.text().includes('allow tool shell_exec: cat notes<U+202E>txt.sh<U+2066> x'), s.text());
  await sleep(TYPING_GAP_MS + 100);
  s.type('n');
  await s.waitFor('denied then');
});
