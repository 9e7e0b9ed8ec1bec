// Syntax highlighting gets ready in the background: highlight.js is loaded a module a task, each
// grammar compiled in a task of its own, never inside a render (a key typed as the first code of a
// session is drawn waits for one step); code drawn plain meanwhile is drawn again once ready, and
// only what was drawn plain. This file's process starts with nothing loaded.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { highlighterReady, highlightGeneration, onHighlighterReady, plainCodeDraws } from '../../src/tui/highlight.js';
import { MarkdownStream } from '../../src/tui/markdown-stream.js';
import { renderMarkdown } from '../../src/tui/markdown.js';
import { MarkdownBlock, TextBlock } from '../../src/tui/components.js';
import { Transcript } from '../../src/tui/transcript.js';

/** Keywords are magenta once highlighted; plain code is one dim colour. */
const coloured = (lines: string[]) => lines.some((l) => l.includes('\x1b[35m'));
const TS = '```ts\nconst x: number = f("s"); // note\n```\n';
const PY = '```python\ndef f(x):\n    return "s"  # note\n```\n';

/** Resolves at the next notice that more can be highlighted, with the tasks run meanwhile. */
function nextReady(): Promise<number> {
  return new Promise((resolve) => {
    let tasks = 0;
    let timer = setTimeout(function tick() {
      tasks++;
      timer = setTimeout(tick, 0);
    }, 0);
    const off = onHighlighterReady(() => {
      off();
      clearTimeout(timer);
      resolve(tasks);
    });
  });
}

test('code is drawn plain until its grammar is ready, which comes a step a task, never inside a render', {
  timeout: 30_000,
}, async () => {
  // The modules imported beforehand (no file read during the load): the tasks counted are the
  // load's own steps.
  await import('highlight.js/lib/core');
  await import('../../src/tui/highlight-languages.js');
  const gen = highlightGeneration();
  const draws = plainCodeDraws();
  const ready = nextReady();
  const first = renderMarkdown(TS, 80);
  assert.ok(!coloured(first), 'plain before the highlighter is loaded');
  assert.equal(plainCodeDraws(), draws + 1, 'the plain draw is counted');
  assert.ok(!highlighterReady(), 'the render loaded nothing itself');
  const tasks = await ready;
  // The core, 17 languages and the grammar: each a task of its own, timers running between them.
  assert.ok(tasks >= 15, `only ${tasks} tasks ran while highlight.js loaded`);
  assert.ok(highlighterReady());
  assert.equal(highlightGeneration(), gen + 1, 'one notice: the grammar, not the load as well');
  assert.ok(coloured(renderMarkdown(TS, 80)), 'highlighted once ready');

  // Another language: its grammar too compiles in a task of its own, after a plain draw.
  const pyReady = nextReady();
  assert.ok(!coloured(renderMarkdown(PY, 80)), 'python plain while its grammar compiles');
  assert.ok(!coloured(renderMarkdown(PY, 80)), 'and still plain on a second render in the same task');
  await pyReady;
  assert.ok(coloured(renderMarkdown(PY, 80)), 'python highlighted once its grammar is ready');
  assert.ok(!coloured(renderMarkdown('```nosuchlang\nconst x = 1\n```\n', 80)), 'a language not known stays plain');
  const before = plainCodeDraws();
  renderMarkdown('```nosuchlang\nconst x = 1\n```\n', 80);
  assert.equal(plainCodeDraws(), before, 'and waits for nothing');
});

test('a streamed fence gets the highlighter ready as it opens, so it is highlighted when it closes', {
  timeout: 30_000,
}, async () => {
  const s = new MarkdownStream();
  s.append('Some words first.\n\n```go\nfunc main() {\n');
  const ready = nextReady();
  assert.ok(!coloured(s.render(80)), 'the open fence is plain');
  await ready;
  const draws = plainCodeDraws();
  s.append('\treturn "s"\n}\n```\n\nafter');
  assert.ok(coloured(s.render(80)), 'highlighted in the frame the fence closes in');
  assert.equal(plainCodeDraws(), draws, 'no plain draw waiting for a grammar');
  assert.equal(s.drawsCodePlain, false);
});

test('once ready, only the blocks that drew code plain are drawn again', { timeout: 30_000 }, async () => {
  const t = new Transcript();
  const counts = new Map<object, number>();
  const counted = <T extends { render(w: number): string[] }>(b: T): T => {
    const render = b.render.bind(b);
    b.render = (w: number) => {
      counts.set(b, (counts.get(b) ?? 0) + 1);
      return render(w);
    };
    return b;
  };
  const prose = counted(new MarkdownBlock({}, 'Only **words** here, and `inline code`.\n'));
  const code = counted(new MarkdownBlock({}, 'Some code:\n\n```rust\nfn main() { let s = "s"; }\n```\n'));
  const text = counted(new TextBlock('a notice'));
  prose.finish();
  code.finish();
  for (const b of [prose, code, text]) t.add(b);
  t.lineCount(80);
  assert.deepEqual(
    [prose, code, text].map((b) => counts.get(b)),
    [1, 1, 1],
  );
  assert.equal(code.awaitsHighlighter(), true, 'the rust block waits for its grammar');
  assert.equal(prose.awaitsHighlighter(), false);
  await nextReady();
  t.changedWhere((b) => b.awaitsHighlighter?.() === true);
  const lines = t.lines(80, 0, t.lineCount(80));
  assert.deepEqual(
    [prose, code, text].map((b) => counts.get(b)),
    [1, 2, 1],
    'only the code block drawn again',
  );
  assert.ok(coloured(lines), 'and it is highlighted');
  assert.equal(code.awaitsHighlighter(), false);
  // A notice for another grammar: the prose keeps its lines (nothing lexed or drawn again).
  const proseLines = prose.render(80);
  const lexed = prose.stream.stats.lexedChars;
  const gen = highlightGeneration();
  const luaReady = nextReady();
  renderMarkdown('```lua\nlocal s = "s"\n```\n', 80);
  await luaReady;
  assert.equal(highlightGeneration(), gen + 1);
  assert.equal(prose.render(80), proseLines, 'the same lines');
  assert.equal(prose.stream.stats.lexedChars, lexed, 'nothing lexed again');
});
