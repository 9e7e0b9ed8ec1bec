import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineEditor } from '../../src/tui/editor.js';
import { History } from '../../src/tui/history.js';
import { type InputEvent, KeyParser } from '../../src/tui/keys.js';
import { CURSOR_MARKER, stripEscapes } from '../../src/tui/escapes.js';
import { visibleWidth } from '../../src/tui/width.js';

/** Feed terminal bytes to an editor through the real key parser. */
function typer(ed = new LineEditor()) {
  const results: string[] = [];
  const p = new KeyParser((ev: InputEvent) => results.push(ed.handle(ev)));
  return { ed, results, type: (s: string) => p.feed(s) };
}

test('typing, moving by grapheme, deleting', () => {
  const { ed, type } = typer();
  type('héllo 日本👍🏽');
  assert.equal(ed.text, 'héllo 日本👍🏽');
  type('\x1b[D'); // left over the whole emoji with its skin tone
  type('\x7f'); // backspace deletes 本
  assert.equal(ed.text, 'héllo 日👍🏽');
  type('\x01'); // Ctrl-A
  type('\x1b[3~'); // Delete
  assert.equal(ed.text, 'éllo 日👍🏽');
  type('\x06\x04'); // Ctrl-F, Ctrl-D (delete under cursor)
  assert.equal(ed.text, 'élo 日👍🏽');
  type('\x05X'); // Ctrl-E, type
  assert.equal(ed.text, 'élo 日👍🏽X');
  type('\x02\x02Y'); // Ctrl-B twice
  assert.equal(ed.text, 'élo 日Y👍🏽X');
});

test('combining marks move and delete as one grapheme', () => {
  const { ed, type } = typer();
  type('ae\u0301b');
  type('\x1b[D\x1b[D\x7f');
  assert.equal(ed.text, 'e\u0301b');
});

test('Ctrl-U, Ctrl-K, Ctrl-Y: kill and yank; Delete does not feed the kill buffer', () => {
  const { ed, type } = typer();
  type('hello world');
  type('\x01\x0b'); // ^A ^K
  assert.equal(ed.text, '');
  type('\x19'); // ^Y
  assert.equal(ed.text, 'hello world');
  type('\x15'); // ^U
  assert.equal(ed.text, '');
  type('\x19\x19');
  assert.equal(ed.text, 'hello worldhello world');
  ed.clear();
  type('abc\x01\x1b[3~');
  assert.equal(ed.text, 'bc');
  assert.equal(ed.kill, 'hello world');
});

test('consecutive kills add up; words: Ctrl-W, Alt-B/F, Alt-D', () => {
  const { ed, type } = typer();
  type('one two three');
  type('\x17\x17'); // ^W ^W
  assert.equal(ed.text, 'one ');
  assert.equal(ed.kill, 'two three');
  type('\x1bb\x1bd');
  assert.equal(ed.text, ' ');
  type('\x19');
  assert.equal(ed.text, 'one ');
});

test('Ctrl-D on an empty editor is eof; Enter is submit; Shift/Alt+Enter insert a newline', () => {
  const { ed, results, type } = typer();
  type('\x04');
  assert.equal(results.pop(), 'eof');
  type('a\x1b[13;2ub\x1b\rc\n');
  assert.equal(ed.text, 'a\nb\nc\n');
  type('\r');
  assert.equal(results.pop(), 'submit');
  assert.equal(ed.lineCount, 4);
});

test('a paste is inserted literally: newlines kept, controls dropped, no submit', () => {
  const { ed, results, type } = typer();
  type('\x1b[200~line one\rline two\r\n\tend\x07\x1b[201~');
  assert.equal(ed.text, 'line one\nline two\n\tend');
  assert.ok(!results.includes('submit'));
  assert.equal(ed.lineCount, 3);
});

test('history: Up/Up/Down recall, consecutive duplicates kept once, the live line restored', () => {
  const ed = new LineEditor({ history: new History(['first', 'second', 'second']) });
  const { type } = typer(ed);
  assert.equal(ed.history.size, 2);
  type('draft');
  type('\x1b[A');
  assert.equal(ed.text, 'second');
  type('\x1b[A');
  assert.equal(ed.text, 'first');
  type('\x1b[A');
  assert.equal(ed.text, 'first');
  type('\x1b[B');
  assert.equal(ed.text, 'second');
  type('\x1b[B');
  assert.equal(ed.text, 'draft');
  ed.submit();
  ed.setText('draft');
  ed.submit();
  assert.deepEqual(ed.history.list(), ['first', 'second', 'draft']);
});

test('Up/Down move between lines of a multi-line text before they walk the history', () => {
  const ed = new LineEditor({ history: new History(['old']) });
  const { type } = typer(ed);
  type('abc\x1b[13;2udefgh');
  type('\x1b[A');
  assert.deepEqual(ed.cursor, { line: 0, offset: 3 });
  type('\x1b[A');
  assert.equal(ed.text, 'old');
});

test('render wraps by character and places the cursor (marker and position)', () => {
  const ed = new LineEditor();
  ed.setText('abcdefghij');
  const v = ed.render(6, { prompt: '> ' });
  assert.deepEqual(v.lines.map(stripEscapes), ['> abcd', '  efgh', '  ij']);
  assert.deepEqual([v.cursorRow, v.cursorCol], [2, 4]);
  assert.ok(v.lines[2]!.endsWith(CURSOR_MARKER));
  ed.setText('abcd');
  const w = ed.render(6, { prompt: '> ' });
  assert.deepEqual(w.lines.map(stripEscapes), ['> abcd', '  '], 'a full row puts the cursor on the next');
  assert.deepEqual([w.cursorRow, w.cursorCol], [1, 2]);
  ed.setText('日本語テキ', 2);
  const x = ed.render(7, { prompt: '> ' });
  assert.deepEqual(x.lines.map(stripEscapes), ['> 日本', '  語テ', '  キ']);
  assert.deepEqual([x.cursorRow, x.cursorCol], [1, 2]);
  for (const l of x.lines) assert.ok(visibleWidth(l) <= 7);
});

test('render with maxRows shows a window that follows the cursor', () => {
  const ed = new LineEditor();
  ed.setText(Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n'));
  let v = ed.render(40, { maxRows: 5 });
  assert.deepEqual(v.lines.map(stripEscapes), ['line 15', 'line 16', 'line 17', 'line 18', 'line 19']);
  for (let i = 0; i < 6; i++) ed.up();
  v = ed.render(40, { maxRows: 5 });
  assert.equal(stripEscapes(v.lines[v.cursorRow]!), 'line 13');
  assert.equal(v.cursorRow, 0);
});

test('a 1 MB paste stays cheap to edit and draw (only the rows around the cursor are laid out)', () => {
  const ed = new LineEditor();
  const line = 'x'.repeat(100);
  const big = Array.from({ length: 10_000 }, () => line).join('\n');
  ed.insertLiteral(big);
  assert.equal(ed.text.length, big.length);
  ed.insert('!');
  const v = ed.render(80, { maxRows: 10 });
  assert.equal(v.lines.length, 10);
  assert.equal(stripEscapes(v.lines[v.cursorRow]!), 'xxxxxxxxxxxxxxxxxxxx!');
  // One line of a megabyte, not ASCII.
  const ed2 = new LineEditor();
  ed2.insertLiteral('日'.repeat(500_000));
  ed2.insert('!');
  const w = ed2.render(80, { maxRows: 10 });
  assert.equal(w.lines.length, 10);
  assert.ok(stripEscapes(w.lines[w.cursorRow]!).endsWith('!'));
  ed2.insert('?');
  assert.ok(stripEscapes(ed2.render(80, { maxRows: 10 }).lines[9]!).endsWith('!?'));
});

test('completion helpers: the text before the cursor and replacing it', () => {
  const ed = new LineEditor();
  ed.setText('ship it :rock tail', 13);
  assert.equal(ed.textBeforeCursor, 'ship it :rock');
  ed.replaceBeforeCursor(5, '🚀');
  assert.equal(ed.text, 'ship it 🚀 tail');
  assert.equal(ed.textBeforeCursor, 'ship it 🚀');
});
