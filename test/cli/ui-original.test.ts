// The original's own pty tests of its UI (test/tui/test_tui.py), on the real clm through a
// pseudo-terminal with @xterm/headless as the screen, against the scripted mock LLM.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KEYS, type PtyScreen } from '../fixtures/pty-screen.js';
import { writeSession } from '../fixtures/cli-suite.js';
import { fruitReply, linesReply, uiSuite } from '../fixtures/ui-suite.js';

const ui = await uiSuite();
const { mock, dirs } = ui;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusRow = (s: PtyScreen) => s.screen().find((l) => l.startsWith(' clm ')) ?? '';
/** No spinner in the status bar: the turn is over. */
const idle = (s: PtyScreen) => !/\] {2}[|/\\-] /.test(statusRow(s));
const inputRow = (s: PtyScreen) => (s.screen()[s.cursor().row] ?? '').trimEnd();
/** Submit a prompt and wait for the end of the scripted reply. */
async function ask(s: PtyScreen, prompt: string, until = 'Yellow') {
  const before = s.lines().filter((l) => l.includes(until)).length;
  s.type(`${prompt}\r`);
  await s.waitFor(() => s.lines().filter((l) => l.includes(until)).length > before, `the reply to ${prompt}`);
  await s.waitFor(() => idle(s), 'the turn to end');
}

test('test_connection_online: the status bar says [online]', async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
});

test('test_connection_offline: a server that is not there is shown offline', async (t) => {
  const s = await ui.open(t, ['-u', 'http://127.0.0.1:1/v1']);
  await s.waitFor(() => /\[offline: [^\]]+\]/.test(statusRow(s)), 'offline with its reason');
  assert.match(statusRow(s), /\[offline: .*ECONNREFUSED|cannot connect/);
});

test('test_agent_name: the status bar names provider, model and profile', async (t) => {
  const s = await ui.open(t);
  await s.waitFor(() => statusRow(s).includes('[mock/mock-model:test]'), 'the identity');
});

test('test_markdown: heading, list and table drawn, box characters, bold in bold', async (t) => {
  const s = await ui.open(t);
  await ask(s, 'show me fruit');
  const text = s.text();
  for (const w of ['Fruit', '- Apple', '- Banana', '- Cherry', 'Apple', 'Red', 'Yellow'])
    assert.ok(text.includes(w), `${w} missing:\n${text}`);
  assert.ok(/[┌┬┐│├┼┤└┴┘─]/.test(text), 'box drawing');
  const at = s.find('bold')!;
  assert.ok(s.cell(at.row, at.col).bold, 'bold is bold');
  assert.ok(!s.cell(at.row, at.col - 2).bold, 'the text before is not');
  const it = s.find('italic')!;
  assert.ok(s.cell(it.row, it.col).italic, 'italic is italic');
  const h = s.find('Fruit')!;
  assert.ok(s.cell(h.row, h.col).bold, 'the heading is bold');
  // The prompt's echo in blue, the label in cyan.
  const you = s.find('you> show me fruit')!;
  assert.equal(s.cell(you.row, you.col).fg, 4);
  const label = s.find('clm>')!;
  assert.equal(s.cell(label.row, label.col).fg, 6);
});

test('test_scrollback: PgUp shows what scrolled away (Fruit), PgDn comes back', async (t) => {
  const s = await ui.open(t, [], { rows: 16 });
  await ask(s, 'first');
  mock.push(linesReply(30));
  await ask(s, 'second', 'line 30');
  assert.ok(!s.text().includes('Fruit'), 'the first reply scrolled away');
  const bottom = s.text();
  s.type(KEYS.pgUp);
  await s.waitFor(() => s.text() !== bottom, 'the view to move');
  for (let i = 0; i < 6 && !s.text().includes('Fruit'); i++) {
    s.type(KEYS.pgUp);
    await sleep(60);
    await s.settle();
  }
  assert.ok(s.text().includes('Fruit'), s.text());
  for (let i = 0; i < 10 && !s.text().includes('line 30'); i++) {
    s.type(KEYS.pgDn);
    await sleep(60);
    await s.settle();
  }
  await s.waitFor('line 30', 'back at the end');
});

test('the mouse wheel scrolls the transcript three rows a notch (full screen)', async (t) => {
  const s = await ui.open(t, [], { rows: 16 });
  mock.push(linesReply(40));
  await ask(s, 'first', 'line 40');
  assert.equal(s.modes().mouseTrackingMode, 'vt200', 'wheel reports asked for');
  const bottom = s.screen().slice(0, 12);
  s.type(KEYS.wheelUp(5, 5));
  await s.waitFor(() => s.screen()[3] === bottom[0], 'three rows up');
  s.type(KEYS.wheelDown(5, 5));
  await s.waitFor(() => s.screen()[0] === bottom[0], 'back down');
});

test('test_scroll_stable_while_streaming: scrolled up, a streaming reply does not move the view', async (t) => {
  const s = await ui.open(t, [], { rows: 16 });
  mock.push(linesReply(40));
  await ask(s, 'first', 'line 40');
  s.type(KEYS.pgUp);
  await s.waitFor(() => !s.text().includes('line 40'), 'scrolled up');
  await sleep(150);
  const held = s.screen().slice(0, 8).join('\n');
  mock.push(linesReply(40, { prefix: 'second', chunks: 20, delayMs: 60 }));
  s.type('next\r');
  await s.waitFor(() => mock.posts.length === 2, 'the second request');
  await sleep(400);
  assert.equal(s.screen().slice(0, 8).join('\n'), held, 'the view moved mid-stream');
  await s.waitFor(() => idle(s), 'the second reply to end', 30_000);
  assert.equal(s.screen().slice(0, 8).join('\n'), held, 'the view moved after the stream');
  for (let i = 0; i < 12 && !s.text().includes('second 40'); i++) {
    s.type(KEYS.pgDn);
    await sleep(60);
    await s.settle();
  }
  await s.waitFor('second 40', 'PgDn reaches the end');
});

test('test_end_key: End on an empty input goes to the bottom; with text it moves the cursor', async (t) => {
  const s = await ui.open(t, [], { rows: 16 });
  mock.push(linesReply(40));
  await ask(s, 'first', 'line 40');
  s.type(KEYS.pgUp);
  await s.waitFor(() => !s.text().includes('line 40'), 'scrolled up');
  s.type(`abc${KEYS.home}`);
  await sleep(100);
  s.type(KEYS.end);
  await sleep(150);
  await s.settle();
  assert.ok(!s.text().includes('line 40'), 'End with text typed scrolled');
  assert.equal(s.cursor().col, 5, 'the cursor after "> abc"');
  s.type(KEYS.ctrl('u'));
  s.type(KEYS.end);
  await s.waitFor('line 40', 'End on an empty input scrolls to the end');
});

test('test_resize: the transcript reflows when the terminal is narrowed and widened', async (t) => {
  const s = await ui.open(t);
  await ask(s, 'fruit please');
  await s.resize(40, 30);
  await s.waitFor(() => s.text().includes('Banana') && s.screen().every((l) => l.length <= 40), 'narrow reflow');
  assert.ok(s.text().includes('Fruit'));
  await s.resize(120, 30);
  await s.waitFor(() => s.text().includes('Yellow') && s.text().includes('you> fruit please'), 'wide reflow');
  assert.ok(statusRow(s).length > 40);
});

test('test_editing: ^A ^K clears, ^Y restores, ^U clears', async (t) => {
  const s = await ui.open(t);
  const input = () => inputRow(s);
  s.type('hello world');
  await s.waitFor(() => input().startsWith('> hello world'), 'typed');
  s.type(KEYS.ctrl('a') + KEYS.ctrl('k'));
  await s.waitFor(() => input() === '>', 'killed');
  s.type(KEYS.ctrl('y'));
  await s.waitFor(() => input() === '> hello world', 'yanked');
  s.type(KEYS.ctrl('u'));
  await s.waitFor(() => input() === '>', 'killed to the start');
});

test('test_history: Up, Up, Down walk the prompt history', async (t) => {
  const s = await ui.open(t);
  await ask(s, 'one');
  await ask(s, 'two');
  const input = () => inputRow(s);
  s.type(KEYS.up);
  await s.waitFor(() => input() === '> two', 'two');
  s.type(KEYS.up);
  await s.waitFor(() => input() === '> one', 'one');
  s.type(KEYS.down);
  await s.waitFor(() => input() === '> two', 'two again');
});

test('test_commands on 70×20, as the original: /help at once shows /clear and /reasoning', async (t) => {
  const s = await ui.open(t, [], { cols: 70, rows: 20 });
  await s.waitFor('[online]');
  s.type('/help\r');
  await s.waitFor('/reasoning', 'the help');
  await sleep(400);
  await s.settle();
  assert.ok(s.text().includes('/clear') && s.text().includes('/reasoning'), s.text());
});

test('/help fits a 24-row screen after a reply: its first and last lines are on screen, nothing wrapped', async (t) => {
  const s = await ui.open(t, [], { cols: 80, rows: 24 });
  await ask(s, 'fruit');
  s.type('/help\r');
  await s.waitFor('/quit', 'the help');
  await sleep(200);
  await s.settle();
  const text = s.text();
  for (const c of ['commands', '/help', '/clear', '/agent', '/model', '/provider', '/reasoning', '/output', '/compact', '/quit'])
    assert.ok(text.includes(c), `${c} is not on screen:\n${text}`);
  s.type('/help keys\r');
  await s.waitFor('Ctrl-C', 'the keys');
  await sleep(200);
  await s.settle();
  for (const k of ['keys', 'Enter', 'Esc', 'TAB']) assert.ok(s.text().includes(k), `${k}:\n${s.text()}`);
});

test('test_commands: /help lists /clear and /reasoning; /clear wipes the transcript', async (t) => {
  const s = await ui.open(t);
  await ask(s, 'fruit');
  s.type('/help\r');
  await s.waitFor('/reasoning', 'the help');
  assert.ok(s.text().includes('/clear'));
  s.type('/clear\r');
  await s.waitFor('[new session', 'the clear');
  assert.ok(!s.text().includes('Banana'), s.text());
  assert.ok(!s.text().includes('you> fruit'), s.text());
});

test('test_queueing: a prompt typed while a turn runs waits as (queued), then becomes the next turn', async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  mock.push(fruitReply(150));
  s.type('first\r');
  await s.waitFor('clm>', 'the first reply to start');
  s.type('second\r');
  await s.waitFor(() => s.text().includes('you> second  (queued)'), '(queued)');
  await s.waitFor(() => s.screen().some((l) => l === 'you> second'), 'you> second in the transcript', 30_000);
  await s.waitFor(() => mock.posts.length === 2, 'the second turn');
  const last = mock.posts[1]!.json.messages.at(-1);
  assert.equal(last.content, 'second');
  await s.waitFor(() => s.lines().filter((l) => l.includes('Yellow')).length === 2, 'its reply');
  assert.ok(!s.text().includes('(queued)'));
});

test('test_permission: the question, y at once allows; a fresh run, n at once denies', async (t) => {
  // As the original's suite (and a quick person) does: the key right after the question shows,
  // less than half a second after the Enter that started the turn (Enter ends a run of typing).
  const s = await ui.open(t, [], { cols: 80, rows: 24 });
  await s.waitFor('[online]');
  s.type('shelltest please\r');
  await s.waitFor('allow tool', 'the question');
  assert.ok(s.text().includes('allow tool shell_exec: echo hi'), s.text());
  assert.ok(s.text().includes('(y) once'), s.text());
  s.type('y');
  await s.waitFor('-> allowed', 'the echo');
  await s.waitFor('Yellow', 'the reply after the tool');
  const tool = mock.posts[1]!.json.messages.find((m: any) => m.role === 'tool');
  assert.equal(tool.content.trim(), 'hi');

  const s2 = await ui.open(t, [], { cols: 80, rows: 24 });
  const before = mock.posts.length;
  await s2.waitFor('[online]');
  s2.type('shelltest please\r');
  await s2.waitFor('allow tool', 'the question');
  s2.type('n');
  await s2.waitFor('-> denied', 'the echo');
  await s2.waitFor(() => mock.posts.length === before + 2, 'the denial sent');
  const denied = mock.posts[before + 1]!.json.messages.find((m: any) => m.role === 'tool');
  assert.match(denied.content, /denied/);
});

test('test_cancel: Esc while a reply streams shows [cancelled]; the next prompt works', async (t) => {
  const s = await ui.open(t);
  mock.push(fruitReply(400));
  s.type('slow\r');
  await s.waitFor('clm>', 'the reply to start');
  s.type(KEYS.esc);
  await s.waitFor('[cancelled]');
  await ask(s, 'again');
  assert.equal(mock.posts.at(-1)!.json.messages.findLast((m: any) => m.role === 'user').content, 'again');
});

test('test_bracketed_paste: pasted lines do not submit; one Enter sends them as one prompt', async (t) => {
  const s = await ui.open(t);
  s.type(KEYS.paste('line one\rline two\rline three'));
  await s.waitFor('line three', 'the paste in the input');
  await sleep(200);
  assert.equal(mock.posts.length, 0, 'the paste submitted');
  assert.ok(s.text().includes('> line one') && s.text().includes('  line two'), s.text());
  s.type('\r');
  await s.waitFor('Yellow', 'the reply');
  assert.equal(s.lines().filter((l) => l.startsWith('you>')).length, 1);
  assert.equal(mock.posts[0]!.json.messages.at(-1).content, 'line one\nline two\nline three');
});

test('test_session_resume: --resume replays the saved conversation and goes on', async (t) => {
  const id = '20260101-120000-abcdef01';
  writeSession(dirs, id, [
    { role: 'user', content: 'what is an apple?' },
    { role: 'assistant', content: 'An **apple** is a fruit.' },
  ]);
  const s = await ui.open(t, ['--resume', id]);
  await s.waitFor(`[resumed session ${id}]`);
  assert.ok(s.text().includes('you> what is an apple?'));
  assert.ok(s.text().includes('An apple is a fruit.'));
  await ask(s, 'and a banana?');
  const msgs = mock.posts[0]!.json.messages;
  assert.deepEqual(
    msgs.slice(1).map((m: any) => m.content),
    ['what is an apple?', 'An **apple** is a fruit.', 'and a banana?'],
  );
});
