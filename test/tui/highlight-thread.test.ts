// Long code is highlighted in a worker thread, drawn plain until its colours are back; a block
// the worker gets stuck on stays plain and the next block gets a new worker; a thread that cannot
// start leaves long code to the main thread as before. This file's process starts with nothing loaded.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  configureHighlightThread,
  highlightCode,
  highlightThreadFailure,
  loadHighlighter,
  OFF_THREAD_AT,
  onHighlighterReady,
  plainCodeDraws,
} from '../../src/tui/highlight.js';
import { HighlightThread } from '../../src/tui/highlight-thread.js';
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
  let answers = 0;
  let notify = () => {};
  const t = new HighlightThread(
    () => {
      answers++;
      notify();
    },
    { script: STALLING, deadlineMs: 1500 },
  );
  const answered = (n: number) =>
    new Promise<void>((resolve) => {
      notify = () => {
        if (answers >= n) resolve();
      };
      notify();
    });
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
  let notices = 0;
  let notify = () => {};
  const t = new HighlightThread(
    () => {
      notices++;
      notify();
    },
    { script: STALLING },
  );
  try {
    const codes = Array.from({ length: 40 }, (_, i) => `block ${i}`);
    const all = new Promise<void>((resolve) => {
      notify = () => {
        if (codes.every((c) => t.html(c, 'ts') !== undefined)) resolve();
      };
    });
    for (const c of codes) assert.equal(t.html(c, 'ts'), undefined);
    await all;
    assert.ok(notices <= 4, `${notices} notices for 40 answers`);
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
