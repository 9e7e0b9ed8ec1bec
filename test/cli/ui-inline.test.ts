// The UI inline (--no-alt-screen, ui = "inline"): finished blocks go into the terminal's own
// scrollback once, only the live region is redrawn, the mouse is never captured, the alternate
// screen never entered; and the no-flicker property of both modes: while a reply streams into a
// long transcript, nothing clears the screen and each chunk costs few bytes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KEYS, type PtyScreen } from '../fixtures/pty-screen.js';
import * as oa from '../fixtures/openai-replies.js';
import { linesReply, uiSuite } from '../fixtures/ui-suite.js';
import { sandboxUnavailable } from '../fixtures/bwrap.js';
import { writeSession } from '../fixtures/cli-suite.js';

const ui = await uiSuite();
const { mock, dirs } = ui;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusRow = (s: PtyScreen) => s.screen().find((l) => l.startsWith(' clm ')) ?? '';
const idle = (s: PtyScreen) => !/\] {2}[|/\\-] /.test(statusRow(s));
const MOUSE_ON = /\x1b\[\?(1000|1002|1003|1006|1015)h/;
const ALT_ON = /\x1b\[\?(1049|1047|47)h/;
const CLEARS = /\x1b\[[23]J/;

function assertInline(s: PtyScreen) {
  assert.equal(s.buffer(), 'normal');
  assert.ok(!MOUSE_ON.test(s.raw()), 'mouse reporting was enabled');
  assert.ok(!ALT_ON.test(s.raw()), 'the alternate screen was entered');
}

/** Each `line k` (1..n) exactly once in the scrollback and screen. */
function assertOnce(s: PtyScreen, n: number, prefix = 'line') {
  const lines = s.lines();
  const counts = new Map<string, number>();
  for (const l of lines) if (l.startsWith(`${prefix} `)) counts.set(l, (counts.get(l) ?? 0) + 1);
  for (let k = 1; k <= n; k++)
    assert.equal(
      counts.get(`${prefix} ${k}`) ?? 0,
      1,
      `${prefix} ${k} ×${counts.get(`${prefix} ${k}`) ?? 0}\n${lines.slice(0, 60).join('\n')}`,
    );
  assert.equal([...counts.keys()].length, n, 'torn or extra lines');
}

test('inline: after a 500-line reply the scrollback holds it once; status bar and input at the bottom', async (t) => {
  const s = await ui.open(t, ['--no-alt-screen'], { rows: 24, cols: 80 });
  mock.push(linesReply(500, { chunks: 60, delayMs: 5 }));
  s.type('long\r');
  await s.waitFor('line 500', 'the end of the reply', 30_000);
  await s.waitFor(() => idle(s), 'idle');
  assertOnce(s, 500);
  const screen = s.screen();
  assert.ok(screen.at(-2)!.startsWith(' clm [mock/mock-model:test]'), screen.join('\n'));
  assert.ok(screen.at(-1)!.startsWith('>'), screen.join('\n'));
  // The status bar is drawn once, at the bottom: none left behind in the scrollback.
  assert.equal(s.lines().filter((l) => l.startsWith(' clm [')).length, 1, s.lines().slice(0, 10).join('\n'));
  assertInline(s);
  const first = s.lines().findIndex((l) => l.startsWith('clm -- type a prompt'));
  // The banner, then the prompt (after the notice that the sandbox is not available, where
  // bubblewrap is missing).
  const prompt = s.lines().findIndex((l) => l === 'you> long');
  const after = prompt - first;
  assert.ok(first >= 0 && (sandboxUnavailable() ? after > 2 : after === 2), s.lines().slice(0, 5).join('\n'));
});

test('inline: a long block of code goes into the scrollback only once its colours are back', { timeout: 60_000 }, async (t) => {
  const s = await ui.open(t, ['--no-alt-screen'], { rows: 24, cols: 100 });
  await s.waitFor('[online]');
  // Over 2 KiB: highlighted by the worker thread, after the block has closed.
  const lines = Array.from({ length: 60 }, (_, i) => `const value${i}: number = compute(${i}, "a string"); // ${i}\n`);
  mock.push(
    oa.streamText(['Code:\n\n', '```ts\n', lines.slice(0, 30).join(''), lines.slice(30).join(''), '```\n', '\ncode done'], {
      chunkDelayMs: 10,
    }),
  );
  s.type('code\r');
  await s.waitFor('code done');
  await s.waitFor(() => idle(s), 'idle');
  await s.waitFor(() => {
    const at = s.find('const value59');
    return !!at && s.cell(at.row, at.col).fg === 5;
  }, 'the last line of the block highlighted');
  assert.equal(s.lines().filter((l) => l.startsWith('const value59')).length, 1, 'written once');
  assertInline(s);
});

test('inline: long code scrolling off while its fence is still open goes into the scrollback coloured', {
  timeout: 90_000,
}, async (t) => {
  const s = await ui.open(t, ['--no-alt-screen'], { rows: 24, cols: 100 });
  await s.waitFor('[online]');
  const block = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => `const ${tag}${i}: number = compute(${i}, "a string"); // ${i}\n`);
  // A first block, closed at once: the highlighter thread is up when the streaming one comes.
  mock.push(oa.streamText(['Warm:\n\n```ts\n', block('warm', 40).join(''), '```\n\nwarm done']));
  s.type('warm\r');
  await s.waitFor(() => {
    const at = s.find('const warm39');
    return !!at && s.cell(at.row, at.col).fg === 5;
  }, 'the first block coloured');
  // Eighty lines, five at a time: the first ones are in the scrollback long before the fence closes.
  const lines = block('value', 80);
  const parts = ['Code:\n\n```ts\n'];
  for (let i = 0; i < lines.length; i += 5) parts.push(lines.slice(i, i + 5).join(''));
  mock.push(oa.streamText([...parts, '```\n', '\ncode done'], { chunkDelayMs: 120 }));
  s.type('code\r');
  await s.waitFor('code done', 'the end of the reply', 30_000);
  await s.waitFor(() => idle(s), 'idle');
  await s.settle();
  const all = s.lines();
  const plain: string[] = [];
  for (let i = 0; i < 80; i++) {
    const at = all.flatMap((l, n) => (l.startsWith(`const value${i}:`) ? [n] : []));
    assert.equal(at.length, 1, `const value${i} written ${at.length} times`);
    if (s.cellOfLine(at[0]!, 0).fg !== 5) plain.push(`value${i}`);
  }
  assert.deepEqual(plain, [], 'lines that went into the scrollback plain');
  assertInline(s);
});

test("inline: a resumed conversation's long code goes into the scrollback coloured, each block once", {
  timeout: 60_000,
}, async (t) => {
  // Three replies with over 2 KiB of code each (highlighted by the worker thread), more than a
  // screen of them: the replay holds each block live until its colours are back.
  const id = '20250404-000000-c0dec0de';
  const code = (k: number) =>
    Array.from({ length: 40 }, (_, i) => `const v${k}_${i}: number = compute(${i}, "a string"); // ${i}`).join('\n');
  writeSession(
    dirs,
    id,
    [1, 2, 3].flatMap((k) => [
      { role: 'user' as const, content: `code ${k}` },
      { role: 'assistant' as const, content: `Code ${k}:\n\n\`\`\`ts\n${code(k)}\n\`\`\`\n\nend of ${k}` },
    ]),
  );
  const s = await ui.open(t, ['--no-alt-screen', '-r', id], { rows: 24, cols: 100 });
  await s.waitFor(`[resumed session ${id}]`, 'the end of the replay', 30_000);
  await s.settle();
  const lines = s.lines();
  for (const k of [1, 2, 3])
    for (const i of [0, 39]) {
      const text = `const v${k}_${i}:`;
      const at = lines.flatMap((l, n) => (l.startsWith(text) ? [n] : []));
      assert.equal(at.length, 1, `${text} written ${at.length} times`);
      assert.equal(s.cellOfLine(at[0]!, 0).fg, 5, `${text}: the keyword const is not magenta`);
    }
  assertInline(s);
});

test('inline: resizing while a long reply streams duplicates and tears nothing', async (t) => {
  const s = await ui.open(t, ['--no-alt-screen'], { rows: 20, cols: 80 });
  mock.push(linesReply(300, { chunks: 100, delayMs: 25 }));
  s.type('long\r');
  await s.waitFor(() => s.lines().includes('line 60'), 'the reply under way');
  await s.resize(60, 20);
  await sleep(100);
  await s.resize(90, 24);
  await sleep(100);
  await s.resize(70, 18);
  assert.ok(!s.lines().includes('line 300'), 'the resizes came after the stream');
  await s.waitFor('line 300', 'the end of the reply', 30_000);
  await s.waitFor(() => idle(s), 'idle');
  await sleep(200);
  await s.settle();
  assertOnce(s, 300);
  assert.ok(s.screen().at(-1)!.startsWith('>'));
  assert.ok(s.screen().at(-2)!.startsWith(' clm ['));
  assertInline(s);
});

test('inline: on exit the live region goes, the transcript stays in the scrollback, then the session line', async (t) => {
  const s = await ui.open(t, ['--no-alt-screen'], { rows: 12, cols: 80 });
  mock.push(linesReply(20, { chunks: 4 }));
  s.type('some\r');
  await s.waitFor('line 20');
  await s.waitFor(() => idle(s), 'idle');
  s.type(KEYS.ctrl('o'));
  await s.waitFor('what is already in the scrollback stays as written', 'the ^O notice');
  s.type(KEYS.ctrl('c'));
  await s.exited;
  await s.settle();
  const lines = s.lines();
  assertOnce(s, 20);
  assert.ok(!lines.some((l) => l.startsWith(' clm [')), 'the status bar stayed');
  assert.ok(!lines.some((l) => l === '>' || l.startsWith('> ')), 'the input stayed');
  assert.match(lines.at(-1)!, /^session: (\S+) \(resume with clm -r \1\)$/);
  assert.equal(lines.at(-2), '[output: full; what is already in the scrollback stays as written]');
  assertInline(s);
});

test('ui = "inline" in config.lua selects inline; a profile may say fullscreen; --no-alt-screen wins', async (t) => {
  dirs.write(
    'config.lua',
    `return {
  agent = "test", model = "mock/mock-model", ui = "inline",
  providers = { mock = { kind = "openai", url = "${mock.base}" } },
  agents = { test = {}, full = { ui = "fullscreen" } },
}`,
  );
  const s = await ui.open(t);
  await s.waitFor('[online]');
  assert.equal(s.buffer(), 'normal');
  assertInline(s);
  const f = await ui.open(t, ['-a', 'full']);
  await f.waitFor('[online]');
  assert.equal(f.buffer(), 'alternate');
  const n = await ui.open(t, ['-a', 'full', '--no-alt-screen']);
  await n.waitFor('[online]');
  assertInline(n);
});

// ---- no flicker --------------------------------------------------------------------------------

for (const mode of ['fullscreen', 'inline'] as const) {
  test(`${mode}: a reply streaming into a long transcript clears nothing and costs few bytes per chunk`, async (t) => {
    const s = await ui.open(t, mode === 'inline' ? ['--no-alt-screen'] : [], { rows: 30, cols: 100 });
    mock.push(linesReply(400, { chunks: 20, delayMs: 1 }));
    s.type('long\r');
    await s.waitFor('line 400', 'the long transcript', 30_000);
    await s.waitFor(() => idle(s), 'idle');
    await sleep(200);
    await s.settle();
    const chunks = 60;
    const parts = Array.from({ length: chunks }, (_, i) => `word${i} `.repeat(4) + (i % 6 === 5 ? '\n\n' : ''));
    const from = s.raw().length;
    mock.push(oa.streamText(parts, { chunkDelayMs: 25 }));
    s.type('more\r');
    await s.waitFor(`word${chunks - 1}`, 'the streamed reply', 30_000);
    await s.waitFor(() => idle(s), 'idle');
    const written = s.raw().slice(from);
    assert.ok(!CLEARS.test(written), 'a screen clear was written');
    // A full repaint erases every row; streaming erases only where text shrank.
    const frames = written.split('\x1b[?2026h').slice(1);
    const worst = Math.max(...frames.map((f) => (f.match(/\x1b\[K/g) ?? []).length));
    assert.ok(worst < 10, `a frame erased ${worst} rows`);
    const perChunk = Buffer.byteLength(written) / chunks;
    assert.ok(perChunk < 600, `${perChunk.toFixed(0)} bytes per chunk`);
  });
}
