// The permission question of the interactive UI. One that shows up while the person is typing (a
// prompt for later, while the turn runs) is not answered by the keys of that typing: "hello
// again" would otherwise answer (a) always at its seventh key. What is typed goes on into the
// input box; the question takes keys once the typing has paused. Enter ends a run of typing, so
// a key right after the question shows answers it. Text typed while it shows is kept in the
// input. And what it asks about is shown whole: characters that reorder or hide text are shown
// by their code.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oa from '../fixtures/openai-replies.js';
import { uiSuite } from '../fixtures/ui-suite.js';
import { KEYS } from '../fixtures/pty-screen.js';
import { TYPING_GAP_MS } from '../../src/cli/permission-desk.js';

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
  mock.push(oa.toolCall('shell_exec', { command: 'chmod +x notes\u202etxt.sh\u2066 x' }), oa.text('denied then'));
  s.type('go\r');
  await s.waitFor('allow tool shell_exec', 'the question');
  assert.ok(s.text().includes('allow tool shell_exec: chmod +x notes<U+202E>txt.sh<U+2066> x'), s.text());
  await sleep(TYPING_GAP_MS + 100);
  s.type('n');
  await s.waitFor('denied then');
});

const inputRow = (s: { screen(): string[]; cursor(): { row: number } }) => (s.screen()[s.cursor().row] ?? '').trimEnd();

for (const mode of ['fullscreen', 'inline'] as const) {
  test(`${mode}: y pressed as soon as the question shows answers it (Enter ended the run of typing)`, async (t) => {
    const s = await ui.open(t, mode === 'inline' ? ['--no-alt-screen'] : []);
    await s.waitFor('[online]');
    mock.push(oa.toolCall('shell_exec', { command: 'echo quick' }), oa.text('it ran'));
    s.type('go\r');
    await s.waitFor('allow tool shell_exec', 'the question');
    s.type('y');
    await s.waitFor('it ran', 'the reply after the tool');
    assert.ok(s.text().includes('-> allowed'), s.text());
    assert.equal(inputRow(s), '>', 'nothing went into the input');
  });
}

test('text typed while a question shows is kept in the input and answers nothing; a paste never answers; after a pause y does', async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  mock.push(oa.toolCall('shell_exec', { command: 'echo later' }), oa.text('allowed at last'));
  s.type('go\r');
  await s.waitFor('allow tool shell_exec', 'the question');
  await sleep(TYPING_GAP_MS + 100);
  // A run of typing that begins with another key is typing, answers and all.
  for (const c of 'hello, any day now') {
    s.type(c);
    await sleep(30);
  }
  await s.waitFor(() => inputRow(s) === '> hello, any day now', 'the typing in the input');
  // Keys that arrive at once (fast typing) are typing too, even when the first is an answer.
  await sleep(TYPING_GAP_MS + 100);
  s.type(' yes');
  await s.waitFor(() => inputRow(s) === '> hello, any day now yes', 'the burst in the input');
  await sleep(TYPING_GAP_MS + 100);
  s.type(KEYS.paste('y'));
  await s.waitFor(() => inputRow(s) === '> hello, any day now yesy', 'the paste in the input');
  await sleep(200);
  assert.ok(!/-> (always )?(allowed|denied)/.test(s.text()), s.text());
  assert.ok(s.text().includes('(y) once'), 'still asking');
  await sleep(TYPING_GAP_MS + 100);
  s.type('y');
  await s.waitFor('allowed at last', 'the answer');
  assert.ok(s.text().includes('-> allowed'));
  assert.equal(inputRow(s), '> hello, any day now yesy', 'the typing is still there');
});

test('a long argument (write_file of 60 lines, a diff against no file) can be read whole: PgDn/PgUp scroll the question, said on screen; ^O shows it in the transcript', async (t) => {
  const s = await ui.open(t, [], { cols: 80, rows: 24 });
  await s.waitFor('[online]');
  const content = Array.from({ length: 60 }, (_, i) => `content line ${i + 1}`).join('\n');
  mock.push(oa.toolCall('write_file', { path: 'notes.txt', content }), oa.text('written'));
  s.type('write it\r');
  await s.waitFor('allow tool write_file: notes.txt', 'the question');
  assert.ok(s.text().includes('--- /dev/null (a new file)'), s.text());
  await s.waitFor(/lines 1–\d+ of 66/, 'where the window is, and the keys');
  assert.match(s.text(), /PgDn/);
  const seen = new Set<number>();
  const collect = () => {
    for (const m of s.text().matchAll(/content line (\d+)\b/g)) seen.add(Number(m[1]));
  };
  collect();
  for (let i = 0; i < 20 && !seen.has(60); i++) {
    const before = s.text();
    s.type(KEYS.pgDn);
    await s.waitFor(() => s.text() !== before, 'the question to scroll');
    collect();
  }
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: 60 }, (_, i) => i + 1),
    'every line was shown',
  );
  assert.match(s.text(), /lines \d+–66 of 66/);
  s.type(KEYS.pgUp);
  await s.waitFor(() => !s.text().includes('content line 60'), 'back up');
  await sleep(TYPING_GAP_MS + 100);
  s.type('y');
  await s.waitFor('written', 'the reply after the tool');
  // The transcript keeps the question as a tool output is kept: its start, and ^O shows all of it.
  await s.waitFor(/\(\+\d+ lines, \^O to expand\)/, 'the record collapsed');
  s.type(KEYS.ctrl('o'));
  await s.waitFor(() => s.lines().some((l) => l.trim() === '+content line 60'), 'the record expanded');
  assert.ok(s.lines().some((l) => l.trim() === '-> allowed'));
});

test('at 40 columns the answer keys wrap: (d) never and [esc = deny+cancel] are on screen', async (t) => {
  const s = await ui.open(t, [], { cols: 40, rows: 24 });
  await s.waitFor('[online]');
  mock.push(oa.toolCall('shell_exec', { command: 'echo narrow' }), oa.text('denied then'));
  s.type('go\r');
  await s.waitFor('allow tool shell_exec', 'the question');
  const text = s.text();
  for (const k of ['(y) once', '(n) deny', '(a) always', '(d) never', '[esc = deny+cancel]']) assert.ok(text.includes(k), `${k}:\n${text}`);
  s.type('n');
  await s.waitFor('denied then');
});

test('/permissions lists the rules in force with where they came from and the session grants; revoke takes one back', async (t) => {
  const s = await ui.open(t, ['--deny-tools', 'bg_exec']);
  await s.waitFor('[online]');
  mock.push(oa.toolCall('shell_exec', { command: 'echo granted' }), oa.text('first ran'));
  s.type('go\r');
  await s.waitFor('allow tool shell_exec: echo granted', 'the question');
  await sleep(TYPING_GAP_MS + 100);
  s.type('s');
  await s.waitFor('shell_exec(echo granted *)', 'the proposed rule');
  s.type('\r');
  await s.waitFor('first ran');
  s.type('/permissions\r');
  await s.waitFor('grants of this session:', 'the list');
  const text = s.text();
  assert.match(text, /rules in force:\n {2}deny {3}bg_exec {2}--deny-tools\n/, text);
  assert.match(text, /grants of this session:\n {2}1\. allow shell_exec\(echo granted \*\)\n/, text);
  s.type('/permissions revoke 1\r');
  await s.waitFor('[revoked: allow shell_exec(echo granted *)]');
  // Asked again.
  mock.push(oa.toolCall('shell_exec', { command: 'echo granted' }), oa.text('second ran'));
  s.type('again\r');
  await s.waitFor('(y) once', 'the question again');
  await sleep(TYPING_GAP_MS + 100);
  s.type('y');
  await s.waitFor('second ran');
});
