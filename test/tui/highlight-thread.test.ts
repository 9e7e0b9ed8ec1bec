// Long code is highlighted in a worker thread, drawn plain until its colours are back; a block
// the worker gets stuck on stays plain and the next block gets a new worker; a thread that cannot
// start leaves long code to the main thread as before. This file's process starts with nothing loaded.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  configureHighlightThread,
  highlightCode,
  highlightStreamingCode,
  highlightThreadFailure,
  loadHighlighter,
  OFF_THREAD_AT,
  onHighlighterReady,
  plainCodeDraws,
  streamedLines,
} from '../../src/tui/highlight.js';
import { HighlightThread, type HighlightThreadOptions } from '../../src/tui/highlight-thread.js';
import type { Span } from '../../src/tui/spans.js';

const STALLING = new URL('../fixtures/highlight/stalling-worker.mjs', import.meta.url);

/** Lines of TypeScript, each a statement of its own, so the code can be highlighted in parts. */
const tsLines = (n: number, tag = 'v') =>
  Array.from({ length: n }, (_, i) => `const ${tag}${i}: number = f(${i}, "text ${i}"); // note ${i}`);

const nextReady = () =>
  new Promise<void>((resolve) => {
    const off = onHighlighterReady(() => {
      off();
      resolve();
    });
  });

/** Call `f` at each notice until it gives a value (the highlighter's load, a grammar, the thread). */
async function whenReady<T>(f: () => T | null): Promise<T> {
  for (;;) {
    const v = f();
    if (v !== null) return v;
    await nextReady();
  }
}

/** A thread on the stalling worker, and `ask(code)`: asks for code not asked before, resolves with its answer. */
function stallingThread(opts: { cacheChars?: number; idleMs?: number }) {
  let notify = () => {};
  const t = new HighlightThread(() => notify(), { script: STALLING, ...opts });
  const ask = (code: string) =>
    new Promise<string | null | undefined>((resolve) => {
      notify = () => resolve(t.html(code, 'ts'));
      assert.equal(t.html(code, 'ts'), undefined);
    });
  return { t, ask };
}

/** A thread whose notices are counted; `until(p)` resolves once `p()` holds, looked at now and at each notice. */
function noticedThread(opts: HighlightThreadOptions) {
  let count = 0;
  let check = () => {};
  const t = new HighlightThread(() => {
    count++;
    check();
  }, opts);
  const until = (p: () => boolean) =>
    new Promise<void>((resolve) => {
      check = () => {
        if (p()) resolve();
      };
      check();
    });
  return { t, notices: () => count, until };
}

const hasKeyword = (lines: Span[][]) => lines.some((l) => l.some((s) => s.style.fg === '35'));

test('long code drawn first waits for the load alone, not for a grammar compiled here', { timeout: 60_000 }, async () => {
  const long = tsLines(80, 'first').join('\n');
  assert.ok(long.length > OFF_THREAD_AT);
  const plain = plainCodeDraws();
  assert.equal(highlightCode(long, 'typescript'), null, 'nothing loaded yet');
  assert.equal(plainCodeDraws(), plain + 1);
  const lines = await whenReady(() => highlightCode(long, 'typescript'));
  assert.ok(hasKeyword(lines));
  const core = (await import('highlight.js/lib/core')).default;
  const ts = core.getLanguage('typescript') as { isCompiled?: boolean };
  assert.notEqual(ts.isCompiled, true, "this thread's TypeScript grammar was not compiled");
});

test('long code is highlighted off the main thread: plain first, then the same colours as highlighted here', {
  timeout: 60_000,
}, async () => {
  await loadHighlighter('typescript');
  const lines = tsLines(120);
  // Parts short enough to be highlighted here, in this thread.
  const parts: string[][] = [];
  for (let i = 0; i < lines.length; i += 20) parts.push(lines.slice(i, i + 20));
  const here: Span[][] = [];
  for (const p of parts) {
    const code = p.join('\n');
    assert.ok(code.length <= OFF_THREAD_AT);
    here.push(...(await whenReady(() => highlightCode(code, 'typescript'))));
  }
  assert.ok(hasKeyword(here));
  const long = lines.join('\n');
  assert.ok(long.length > OFF_THREAD_AT);
  const plain = plainCodeDraws();
  const ready = nextReady();
  // The grammar is compiled here, yet the long code is not highlighted in this thread.
  assert.equal(highlightCode(long, 'typescript'), null, 'drawn plain until the thread answers');
  assert.equal(plainCodeDraws(), plain + 1, 'counted as drawn plain for a while');
  assert.equal(highlightCode(long, 'typescript'), null, 'still plain, asked once');
  await ready;
  const there = highlightCode(long, 'typescript');
  assert.deepEqual(there, here, 'the same lines and colours');
  assert.equal(plainCodeDraws(), plain + 2);
  // A block too long for the thread stays plain and is not counted as waiting.
  const huge = tsLines(1500).join('\n');
  assert.equal(highlightCode(huge, 'typescript'), null);
  assert.equal(plainCodeDraws(), plain + 2);
  assert.equal(highlightThreadFailure(), null);
});

test('a thread that cannot start leaves long code to this thread, as before', { timeout: 60_000 }, async () => {
  await loadHighlighter('typescript');
  configureHighlightThread({ script: new URL('./no-such-worker.mjs', STALLING) });
  try {
    const long = tsLines(60, 'w').join('\n');
    assert.ok(long.length > OFF_THREAD_AT && long.length < 16_384);
    const ready = nextReady();
    assert.equal(highlightCode(long, 'typescript'), null, 'asked of the thread first');
    await ready;
    assert.match(highlightThreadFailure() ?? '', /highlighter thread/);
    const lines = highlightCode(long, 'typescript');
    assert.ok(lines && hasKeyword(lines), 'highlighted here once the thread failed');
  } finally {
    configureHighlightThread({});
  }
});

test('blocks go in the order asked for; one the worker is stuck on stays plain, and a new worker takes the next', {
  timeout: 60_000,
}, async () => {
  const { t, notices, until } = noticedThread({ script: STALLING, deadlineMs: 1500 });
  const answered = (n: number) => until(() => notices() >= n);
  try {
    // Both asked before the worker is ready: the first asked for goes first.
    assert.equal(t.html('STALL here', 'ts'), undefined);
    assert.equal(t.html('fine', 'ts'), undefined);
    await answered(1);
    assert.equal(t.html('STALL here', 'ts'), null, 'plain for good');
    assert.equal(t.html('fine', 'ts'), undefined, 'waiting behind it');
    await answered(2);
    assert.equal(t.html('fine', 'ts'), '<span class="hljs-keyword">fine</span>', 'answered by a new worker');
    assert.equal(t.failed, null);
  } finally {
    t.close();
  }
});

test('answers are kept up to a total size, the least recently used going first', { timeout: 60_000 }, async () => {
  const { t, ask } = stallingThread({ cacheChars: 100 });
  try {
    const a = 'a'.repeat(30);
    const b = 'b'.repeat(30);
    assert.match((await ask(a)) ?? '', /a{30}/);
    assert.match((await ask(b)) ?? '', /b{30}/);
    assert.match((await ask(a)) ?? '', /a{30}/, 'a went to make room for b, and is asked for again');
    assert.equal(t.html(b, 'ts'), undefined, 'then b went');
  } finally {
    t.close();
  }
});

test('an idle worker is ended, and the next long block starts another', { timeout: 60_000 }, async () => {
  const { t, ask } = stallingThread({ idleMs: 100 });
  try {
    assert.match((await ask('one')) ?? '', /one/);
    assert.ok(t.started, 'the worker runs');
    const deadline = Date.now() + 20_000;
    while (t.started && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(!t.started, 'ended once idle');
    assert.match((await ask('two')) ?? '', /two/, 'a new worker answers');
    assert.equal(t.failed, null);
  } finally {
    t.close();
  }
});

test('answers to many blocks at once are told together, not one notice each', { timeout: 60_000 }, async () => {
  const { t, notices, until } = noticedThread({ script: STALLING });
  try {
    const codes = Array.from({ length: 40 }, (_, i) => `block ${i}`);
    for (const c of codes) assert.equal(t.html(c, 'ts'), undefined);
    await until(() => codes.every((c) => t.html(c, 'ts') !== undefined));
    assert.ok(notices() <= 4, `${notices()} notices for 40 answers`);
    assert.equal(t.html('block 39', 'ts'), '<span class="hljs-keyword">block 39</span>');
  } finally {
    t.close();
  }
});

test('a worker that never gets ready fails the thread after the deadline, and what waited is told', { timeout: 60_000 }, async () => {
  let told = 0;
  const t = new HighlightThread(() => told++, { script: new URL('./silent-worker.mjs', STALLING), deadlineMs: 300 });
  try {
    assert.equal(t.html('code', 'ts'), undefined);
    const deadline = Date.now() + 20_000;
    while (!told && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(told, 1);
    assert.match(t.failed ?? '', /did not start within 300 ms/);
    assert.equal(t.html('code', 'ts'), null, 'plain from then on');
  } finally {
    t.close();
  }
});

const NUMBERING = new URL('../fixtures/highlight/numbering-worker.mjs', import.meta.url);

test('code still streaming: one job waits, for the newest of it; its answers are kept apart; plain for good stays so', {
  timeout: 60_000,
}, async () => {
  let notify = () => {};
  const t = new HighlightThread(() => notify(), { script: NUMBERING, deadlineMs: 400 });
  const told = () => new Promise<void>((resolve) => (notify = resolve));
  // The worker is stuck on a block: the streaming code asked for meanwhile waits behind it.
  let answer = told();
  assert.equal(t.html('STALL', 'ts'), undefined);
  for (const code of ['a\n', 'a\nb\n', 'a\nb\nc\n']) assert.equal(t.streamingHtml(code, 'ts'), undefined);
  for (;;) {
    await answer;
    answer = told();
    if (t.streamingHtml('a\nb\nc\n', 'ts')) break;
  }
  // The new worker's first job was the newest code: the older pieces were never highlighted.
  assert.deepEqual(t.streamingHtml('a\nb\nc\n', 'ts'), {
    code: 'a\nb\nc\n',
    lang: 'ts',
    html: '<span class="hljs-keyword">1:a\nb\nc\n</span>',
  });
  // Not kept with the blocks' answers (each piece of a stream would be one): asked for as a block
  // of its own, whose answer is the next notice.
  assert.equal(t.html('a\nb\nc\n', 'ts'), undefined);
  await answer;
  answer = told();
  // More of it: the last answer until the new one comes.
  assert.equal(t.streamingHtml('a\nb\nc\nd\n', 'ts')?.code, 'a\nb\nc\n');
  await answer;
  answer = told();
  assert.equal(t.streamingHtml('a\nb\nc\nd\n', 'ts')?.html, '<span class="hljs-keyword">3:a\nb\nc\nd\n</span>');
  // Code the worker is stuck on stays plain, and what follows it is not asked for again.
  assert.equal(t.streamingHtml('STALL\n', 'ts')?.code, 'a\nb\nc\nd\n');
  await answer;
  assert.deepEqual(t.streamingHtml('STALL\nmore\n', 'ts'), { code: 'STALL\n', lang: 'ts', html: null });
  assert.equal(t.started, false, 'a worker started for code that follows plain code');
  t.close();
});

test('long code still streaming is drawn coloured a round trip behind the text, and keeps them when it closes', {
  timeout: 60_000,
}, async () => {
  configureHighlightThread({});
  await loadHighlighter('typescript');
  const lines = tsLines(100, 's');
  // A comment open where the first colours end: the next answer's lines are turned into spans from there.
  lines.splice(58, 3, '/* a comment', '   that goes on', '   and ends here */');
  const first = `${lines.slice(0, 60).join('\n')}\n`;
  assert.ok(first.length > OFF_THREAD_AT);
  // The last line still coming: never coloured.
  const streaming = `${first}const partial`;
  const plain = plainCodeDraws();
  assert.equal(highlightStreamingCode(streaming, 'typescript'), null, 'coloured before the thread answered');
  assert.ok(plainCodeDraws() > plain, 'drawn plain without saying so: no notice would draw it again');
  const coloured = await whenReady(() => highlightStreamingCode(streaming, 'typescript'));
  assert.equal(coloured.length, 60);
  assert.ok(hasKeyword(coloured));
  // Forty more lines: the sixty known stay coloured until the rest are back.
  const more = `${lines.join('\n')}\n`;
  assert.equal(highlightStreamingCode(more, 'typescript')?.length, 60);
  const all = await whenReady(() => {
    const l = highlightStreamingCode(more, 'typescript');
    return l && l.length === 100 ? l : null;
  });
  assert.ok(hasKeyword(all.slice(60)));
  // The lines coloured before are kept as they were: only the new ones are made from the answer.
  assert.ok(all.slice(0, 60).every((l, i) => l === coloured[i]));
  // The same colours as the whole code highlighted at once (the blocks' queue, not the stream's).
  assert.deepEqual(all, await whenReady(() => highlightCode(lines.join('\n'), 'typescript')));
  // Closed: the block's own colours come from the blocks' queue; meanwhile it has these.
  assert.equal(streamedLines(lines.join('\n'), 'typescript')?.length, 100);
  assert.equal(streamedLines(`${lines.join('\n')}\nsomething else`, 'typescript')?.length, 100);
  assert.equal(streamedLines('other code', 'typescript'), null);
});

test('a second block streaming after the first, shorter than it, is coloured as it streams too', { timeout: 60_000 }, async () => {
  await loadHighlighter('typescript');
  const first = `${tsLines(60, 'one').join('\n')}\n`;
  await whenReady(() => {
    const l = highlightStreamingCode(first, 'typescript');
    return l && l.length === 60 ? l : null;
  });
  const second = `${tsLines(12, 'two').join('\n')}\n`;
  assert.ok(second.length > 512 && second.length < first.length);
  const lines = await whenReady(() => highlightStreamingCode(second, 'typescript'));
  assert.equal(lines.length, 12);
  assert.ok(lines[0]!.some((s) => s.text.includes('two0')));
});
