// Markdown to styled lines, checked on a real VT parser: the cells' attributes are what a
// terminal shows: emphasis, nesting, literal code blocks, table alignment, bold cells, box glyphs, and more.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualTerminal } from '../fixtures/virtual-terminal.js';
import { markdownWarmUpSteps, renderMarkdown, fitColumns } from '../../src/tui/markdown.js';
import { MarkdownStream } from '../../src/tui/markdown-stream.js';
import { highlighterReady, loadHighlighter, onHighlighterReady } from '../../src/tui/highlight.js';
import { stripEscapes } from '../../src/tui/escapes.js';
import { visibleWidth } from '../../src/tui/width.js';
import { tally } from '../fixtures/tally.js';
import { check, fc } from '../fixtures/fuzz.js';

/** Lines drawn on an emulator, for reading cell attributes. */
async function draw(lines: string[], cols = 80) {
  const vt = new VirtualTerminal(cols, Math.max(lines.length, 1) + 1);
  vt.write(lines.join('\r\n'));
  await vt.flush();
  return vt;
}
const plain = (ls: string[]) => ls.map(stripEscapes);
function cellOf(vt: VirtualTerminal, text: string) {
  const at = vt.find(text);
  assert.ok(at, `${text} on screen`);
  return vt.cell(at.row, at.col);
}

test('test_emphasis: bold, italic and code runs carry their style; plain text does not', async () => {
  const vt = await draw(renderMarkdown('plain **bold** and *ital* with `code` here', 80));
  assert.ok(cellOf(vt, 'bold').bold);
  assert.ok(!cellOf(vt, 'bold').italic);
  assert.ok(cellOf(vt, 'ital').italic);
  const code = cellOf(vt, 'code');
  assert.ok(!code.fgDefault && !code.bold, 'code is coloured');
  assert.ok(!cellOf(vt, 'plain').bold && !cellOf(vt, 'plain').italic);
  assert.ok(!cellOf(vt, 'here').bold);
});

test('test_nesting: bold and italic combine', async () => {
  const vt = await draw(renderMarkdown('**bold *both* bold** ~~gone~~', 80));
  const both = cellOf(vt, 'both');
  assert.ok(both.bold && both.italic);
  assert.ok(cellOf(vt, 'gone').strike);
});

test('test_code_block_literal: markdown inside code stays literal, in the code style', async () => {
  const lines = renderMarkdown('```\na * b **not bold**\n```', 80);
  assert.deepEqual(plain(lines), ['a * b **not bold**']);
  const vt = await draw(lines);
  const c = cellOf(vt, 'a * b');
  assert.ok(!c.bold && !c.fgDefault && c.dim);
});

test('test_table_alignment: header and body lines have the same display width (ASCII)', () => {
  const lines = renderMarkdown('| Fruit | Colour | n |\n|:--|:-:|--:|\n| Apple | Red | 1 |\n| Banana | Yellow | 22 |', 80, {
    unicode: false,
  });
  const widths = lines.map(visibleWidth);
  assert.ok(
    widths.every((w) => w === widths[0]),
    JSON.stringify(plain(lines)),
  );
  const p = plain(lines);
  assert.equal(p[3], '| Apple  |  Red   |  1 |');
  assert.equal(p[4], '| Banana | Yellow | 22 |');
});

test('test_table_bold_cell: **Red** stays bold inside a cell; header cells are bold', async () => {
  const vt = await draw(renderMarkdown('| Name | Colour |\n|---|---|\n| Apple | **Red** |', 80));
  assert.ok(cellOf(vt, 'Red').bold);
  assert.ok(cellOf(vt, 'Name').bold);
  assert.ok(!cellOf(vt, 'Apple').bold);
});

test('test_table_glyphs: ASCII uses | and no │; Unicode has │ ┌ ┘', () => {
  const md = '| a | b |\n|---|---|\n| 1 | 2 |';
  const ascii = plain(renderMarkdown(md, 80, { unicode: false })).join('\n');
  assert.ok(ascii.includes('|') && !ascii.includes('│') && ascii.includes('+'));
  const uni = plain(renderMarkdown(md, 80, { unicode: true })).join('\n');
  assert.ok(uni.includes('│') && uni.includes('┌') && uni.includes('┘'));
});

test('tables are fitted to the width with word-wrapped cells', () => {
  const md = '| Name | Description |\n|---|---|\n| widget | a rather long description that cannot fit on one line of a narrow terminal |';
  const lines = renderMarkdown(md, 40);
  for (const l of lines) assert.equal(visibleWidth(l), 40, JSON.stringify(stripEscapes(l)));
  const text = plain(lines)
    .join(' ')
    .replace(/[│┌┐└┘├┤┬┴┼─]/g, ' ')
    .replace(/\s+/g, ' ');
  assert.ok(text.includes('a rather long description that cannot fit on one line of a narrow terminal'), 'nothing cut');
  assert.deepEqual(fitColumns([10, 50], 30), [6, 24]);
  assert.deepEqual(fitColumns([2, 2, 2], 30), [2, 2, 2]);
  assert.equal(fitColumns([10, 10, 10], 8), null);
});

test('a narrow table splits no short word: the widest column gives way, and only a word longer than its column is split', () => {
  const md =
    '| Key | Value | Notes |\n|---|---|---|\n| alpha | 4444 | a_very_long_identifier_name_here and more words |\n| b | 12 | short |';
  for (const width of [40, 30, 24]) {
    // At 24 the third column, whose longest word cannot fit anyway, is the one that gives way.
    const whole = ['Key', 'Value', 'alpha', '4444', 'b', '12', ...(width > 24 ? ['Notes', 'short', 'and', 'more', 'words'] : [])];
    const lines = renderMarkdown(md, width);
    for (const l of lines) assert.ok(visibleWidth(l) <= width, `${width}: ${JSON.stringify(stripEscapes(l))}`);
    const cells = plain(lines).flatMap((l) =>
      l
        .split(/[│┌┐└┘├┤┬┴┼─]/)
        .map((c) => c.trim())
        .filter(Boolean),
    );
    // Short words and numbers are whole, each in one cell.
    for (const w of whole)
      assert.ok(
        cells.some((c) => c.split(' ').includes(w)),
        `${width}: "${w}" split:\n${plain(lines).join('\n')}`,
      );
    // The word too long for its column is split, and nothing of it is lost.
    const notes = plain(lines)
      .map((l) => l.split('│')[3]?.trim() ?? '')
      .join('');
    assert.ok(notes.includes('a_very_long_identifier_name_here'), `${width}: ${notes}`);
  }
  // Longest words 5, 5 and 32 in 30 columns: the widest gives way alone.
  assert.deepEqual(fitColumns([5, 5, 48], 30, [5, 5, 32]), [5, 5, 20]);
  // Too narrow for the short words too: the widest goes down to 3 first, then the others give way.
  assert.deepEqual(fitColumns([5, 5, 48], 13, [5, 5, 32]), [5, 5, 3]);
  assert.deepEqual(fitColumns([5, 5, 48], 10, [5, 5, 32]), [3, 4, 3]);
});

test('a table too wide for any layout is shown row by row, nothing dropped', () => {
  const md = `| ${Array.from({ length: 8 }, (_, i) => `h${i}`).join(' | ')} |\n|${'---|'.repeat(8)}\n| ${Array.from({ length: 8 }, (_, i) => `v${i}`).join(' | ')} |`;
  const p = plain(renderMarkdown(md, 20));
  for (let i = 0; i < 8; i++) assert.ok(p.includes(`h${i}: v${i}`), p.join('\n'));
});

test('headings are bold and separated by a blank line; lists use "  - " and nest', async () => {
  const md = '## Fruit\nSome **text**.\n\n- apple\n- banana\n  - small\n  - large\n- cherry\n\n1. one\n2. two\n\n- [ ] todo\n- [x] done';
  const lines = renderMarkdown(md, 80);
  assert.deepEqual(plain(lines), [
    'Fruit',
    '',
    'Some text.',
    '',
    '  - apple',
    '  - banana',
    '    - small',
    '    - large',
    '  - cherry',
    '',
    '  1. one',
    '  2. two',
    '',
    '  - [ ] todo',
    '  - [x] done',
  ]);
  const vt = await draw(lines);
  assert.ok(cellOf(vt, 'Fruit').bold);
});

test('a wrapped list item continues under its text', () => {
  const p = plain(renderMarkdown('- one two three four five six', 16));
  assert.deepEqual(p, ['  - one two', '    three four', '    five six']);
});

test('block quotes, rules, line breaks, entities', () => {
  const p = plain(renderMarkdown('> quoted text\n\n---\n\na<br>b &amp; &lt;c&gt; &#x1F600;', 30));
  assert.deepEqual(p, ['│ quoted text', '', '─'.repeat(30), '', 'a', 'b & <c> 😀']);
  assert.deepEqual(plain(renderMarkdown('> q', 30, { unicode: false })), ['> q']);
});

test('a horizontal rule spans the width it is drawn at, and is drawn again at a new width', () => {
  for (const w of [100, 140, 30]) assert.deepEqual(plain(renderMarkdown('a\n\n---\n\nb', w)), ['a', '', '─'.repeat(w), '', 'b']);
  assert.deepEqual(plain(renderMarkdown('- item\n\n  ***', 20, { unicode: false })).at(-1), `    ${'-'.repeat(16)}`);
  // Streamed, the rule is a finished block (cached): at another width it is drawn again.
  const s = new MarkdownStream();
  s.append('before\n\n---\n\nafter, still streaming');
  assert.ok(plain(s.render(100)).includes('─'.repeat(100)));
  assert.ok(plain(s.render(60)).includes('─'.repeat(60)));
  assert.ok(!plain(s.render(60)).some((l) => l.length > 60));
});

test('links: OSC 8 when the terminal has it, else the URL after the text when it differs', () => {
  const md = 'see [the docs](https://example.com/docs) or <https://example.com> or [bad](javascript:alert(1))';
  const text = renderMarkdown(md, 200).join('');
  assert.equal(stripEscapes(text), 'see the docs (https://example.com/docs) or https://example.com or bad (javascript:alert(1))');
  const linked = renderMarkdown(md, 200, { hyperlinks: true }).join('');
  assert.ok(linked.includes('\x1b]8;;https://example.com/docs\x1b\\'));
  assert.equal(stripEscapes(linked), 'see the docs or https://example.com or bad (javascript:alert(1))');
  assert.ok(!linked.includes('\x1b]8;;javascript'), 'only safe URLs are clickable');
});

test('text from the model cannot smuggle control sequences through markdown', () => {
  const hostile = 'a \x1b[2J b \x1b]0;t\x07 c\n\n```\n\x1b[31mx\x1b[0m\x07\n```\n\n| \x1b[H | b |\n|-|-|\n| 1 | 2 |';
  const out = renderMarkdown(hostile, 60).join('\n');
  const stripped = out.replace(/\x1b\[[0-9;]*m/g, '');
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(stripped.replace(/\n/g, '')), JSON.stringify(stripped));
  tally('bad_inputs', 1);
});

test('fenced code is highlighted once highlight.js has loaded; an open (streaming) block, its complete lines', {
  timeout: 30_000,
}, async () => {
  await loadHighlighter('js');
  assert.ok(highlighterReady());
  const lines = renderMarkdown('```js\nconst x = "s"; // note\n```', 80);
  assert.equal(stripEscapes(lines[0]!), 'const x = "s"; // note');
  const vt = await draw(lines);
  const kw = cellOf(vt, 'const');
  const str = cellOf(vt, '"s"');
  assert.ok(!kw.fgDefault && !str.fgDefault && kw.fg !== str.fg, 'keyword and string in different colours');
  assert.ok(!kw.dim);
  const unknown = renderMarkdown('```nosuchlang\nplain\n```', 80);
  assert.equal(stripEscapes(unknown[0]!), 'plain');
  const s = new MarkdownStream();
  // Over half a KiB (shorter code is highlighted once closed), and a line still coming.
  const code = Array.from({ length: 12 }, (_, i) => `const x${i} = compute(${i}, "a string"); // note ${i}\n`).join('');
  assert.ok(code.length > 512);
  s.append(`\`\`\`js\n${code}let y`);
  // Its complete lines, once the highlighter thread has them (plain meanwhile, and told when they come).
  let open = await draw(s.render(80));
  while (cellOf(open, 'const').dim) {
    await new Promise<void>((resolve) => {
      const off = onHighlighterReady(() => {
        off();
        resolve();
      });
    });
    open = await draw(s.render(80));
  }
  assert.ok(cellOf(open, 'let').dim, 'the line still coming is plain code');
  s.append(' = 2;\n```\n\nafter');
  const closed = await draw(s.render(80));
  assert.ok(!cellOf(closed, 'const').dim, 'highlighted once closed');
});

/** A long answer of mixed blocks, like a model's. */
function answer(bytes: number): string {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const k = i % 6;
    const p =
      k === 0
        ? `## Section ${i}\n\nThis paragraph explains **point ${i}** with *emphasis*, \`code\` and a [link](https://example.com/${i}). `.repeat(
            2,
          )
        : k === 1
          ? `- item one of ${i}\n- item two with **bold**\n  - nested ${i}\n- item three`
          : k === 2
            ? '```ts\n' + `function f${i}(x: number): number {\n  return x * ${i};\n}\n` + '```'
            : k === 3
              ? `| Key | Value |\n|---|--:|\n| a${i} | ${i} |\n| b${i} | ${i * 2} |`
              : k === 4
                ? `> A quote about ${i}, long enough to wrap around on a narrow screen at least once or twice.`
                : `Plain text ${i}: ${'lorem ipsum dolor sit amet '.repeat(4)}`;
    parts.push(p);
    n += p.length + 2;
  }
  return parts.join('\n\n');
}

test('streaming: the result equals rendering the whole text; the finished prefix is never lexed again', () => {
  const text = answer(28_000);
  assert.ok(text.length >= 28_000);
  const s = new MarkdownStream();
  let maxLex = 0;
  for (let i = 0; i < text.length; i += 40) {
    const before = s.stats.lexedChars;
    s.append(text.slice(i, i + 40));
    s.render(100);
    maxLex = Math.max(maxLex, s.stats.lexedChars - before);
  }
  assert.deepEqual(s.render(100), renderMarkdown(text, 100), 'streamed = whole');
  s.finish();
  assert.deepEqual(s.render(100), renderMarkdown(text, 100));
  assert.deepEqual(s.render(60), renderMarkdown(text, 60), 'and at another width');
  // Naive re-lexing would read ~ n²/80 ≈ 10 M characters; the open block is all that is read.
  assert.ok(s.stats.lexedChars < 5 * text.length, `lexed ${s.stats.lexedChars} characters for ${text.length}`);
  assert.ok(maxLex < 1000, `one step lexed at most ${maxLex} characters`);
  assert.ok(s.finishedBlocks > 50);
});

/** `text` streamed in `step` characters a piece, drawn at `width` after each (`each` sees it); the characters each piece lexed. */
function streamed(text: string, step: number, width: number, each?: (s: MarkdownStream, lines: string[], at: number) => void) {
  const s = new MarkdownStream();
  const lexed: number[] = [];
  for (let i = 0; i < text.length; i += step) {
    const before = s.stats.lexedChars;
    s.append(text.slice(i, i + step));
    const lines = s.render(width);
    lexed.push(s.stats.lexedChars - before);
    each?.(s, lines, i);
  }
  return { s, lexed };
}

test('streaming: blocks with no blank line between them (a heading or a fence right after a list, a list after a paragraph) settle too', () => {
  const parts: string[] = [];
  for (let i = 0; parts.join('').length < 30_000; i++) {
    const k = i % 5;
    parts.push(
      k === 0
        ? `## Heading ${i}\n`
        : k === 1
          ? `- item ${i} with **bold**\n- and \`code\` in item ${i}, long enough to wrap at forty columns\n`
          : k === 2
            ? '```js\n' + `const x${i} = ${i};\n` + '```\n'
            : k === 3
              ? `Some text about ${i}\n1. first of ${i}\n2. second\n`
              : `***\n> quoted ${i}\n`,
    );
  }
  // Ends with a paragraph: an open code block is drawn plain until the stream is finished.
  const text = `${parts.join('')}the end\n`;
  for (const step of [40, 7]) {
    const { s, lexed } = streamed(text, step, 40);
    const maxLex = Math.max(...lexed);
    assert.deepEqual(s.render(40), renderMarkdown(text, 40), `streamed = whole, ${step} characters a piece`);
    s.finish();
    assert.deepEqual(s.render(40), renderMarkdown(text, 40), `finished, ${step} characters a piece`);
    assert.ok(maxLex < 1000, `one step lexed ${maxLex} characters`);
    assert.ok(s.finishedBlocks > 100, `${s.finishedBlocks} blocks finished`);
  }
});

test('streaming (fast-check): random blocks in random pieces draw as the whole text does', () => {
  const lines = [
    '# Title',
    '## Sub',
    'plain text',
    'more *text*',
    '- a',
    '* c',
    '1. one',
    '2. two',
    '  indented',
    '    code',
    '```',
    '```js',
    'x = 1',
    '***',
    '***x',
    '---',
    '===',
    '> quote',
    '| a | b |',
    '|---|---|',
    '| 1 | 2 |',
    '<div>',
    '</div>',
    '- [ ] task',
    '  - nested',
    '',
  ];
  const doc = fc.array(fc.constantFrom(...lines), { minLength: 1, maxLength: 25 }).map((ls) => `${ls.join('\n')}\n`);
  const pieces = fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 10 });
  const same = ([text, steps]: [string, number[]]) => {
    const s = new MarkdownStream();
    for (let i = 0, j = 0; i < text.length; i += steps[j++ % steps.length]!) {
      s.append(text.slice(i, i + steps[j % steps.length]!));
      s.render(50);
    }
    s.finish();
    assert.deepEqual(plain(s.render(50)), plain(renderMarkdown(text, 50)), JSON.stringify(text));
    return true;
  };
  // Found by a longer run: `2. two\n- ` lexes as two lists for as long as the `a` has not come.
  same(['more *text*\n2. two\n- a\n***\n', [6, 11, 2, 2, 1, 7, 2, 10]]);
  // The `1` of the second item, a paragraph alone, must not end the list before the blank line.
  same(['1. a\n\n1. b\n', [7, 5]]);
  check(400, fc.tuple(doc, pieces), same);
});

test('streaming: a long list is drawn in parts, as the whole list draws it, and lexed a few items at a time', () => {
  const kinds: Record<string, (i: number) => string> = {
    bullets: (i) => `- item ${i} with **bold** and words enough to wrap at forty columns\n`,
    numbers: (i) => `${i + 1}. item ${i}\n`,
    'lazy numbers': (i) => `1. item ${i}${i % 10 === 3 ? '\n   - nested' : ''}\n`,
    tasks: (i) => `- [${i % 2 ? 'x' : ' '}] task ${i}\n`,
    loose: (i) => `- item ${i}\n\n`,
    'loose from item 150': (i) => `- item ${i}\n${i >= 150 ? '\n' : ''}`,
    'a task at item 200': (i) => (i === 200 ? `- [ ] task ${i}\n` : `- item ${i}\n`),
  };
  for (const [name, item] of Object.entries(kinds)) {
    const text = `Intro\n\n${Array.from({ length: 300 }, (_, i) => item(i)).join('')}\nAfter the list.\n`;
    for (const step of [40, 9]) {
      const { s, lexed } = streamed(text, step, 40, (s, lines, i) => {
        if (i % (step * 97) === 0)
          assert.deepEqual(
            lines,
            renderMarkdown(s.text, 40)
              .slice(0, lines.length - 3)
              .concat(lines.slice(-3)),
            `${name}: at ${i}`,
          );
      });
      assert.deepEqual(s.render(40), renderMarkdown(text, 40), `${name}, ${step} characters a piece`);
      s.finish();
      assert.deepEqual(s.render(40), renderMarkdown(text, 40), `${name}, finished`);
      assert.deepEqual(s.render(33), renderMarkdown(text, 33), `${name}, at another width`);
      // Steps that lexed much of the list: where it is lexed whole again (a number one digit wider).
      const whole = lexed.filter((n) => n > text.length / 4).length;
      assert.ok(whole <= 3, `${name}: ${whole} steps lexed over a quarter of the text`);
    }
  }
});

test('streaming: a long table is lexed a few rows at a time and drawn as the whole table draws it', { timeout: 120_000 }, () => {
  const kinds: Record<string, (i: number) => string> = {
    plain: (i) => `| item ${i} | ${i * 7} | some words here |\n`,
    // Inline markup, an escaped pipe, rows short of a cell or with one too many.
    styled: (i) => `| **b ${i}** | \`c|${i}\` \\| x | ${i % 9 === 0 ? '' : `[l](https://e/${i}) |`}${i % 13 === 0 ? ' extra |' : ''}\n`,
    // A cell that grows the column late, so the layout of every row changes.
    'wide at row 150': (i) => `| ${i === 150 ? 'w'.repeat(30) : `r${i}`} | ${i} |\n`,
  };
  const ends = ['\nAfter the table.\n', '- a list ends it\n', 'a lazy line is a row\n\nthen a paragraph\n'];
  for (const [name, row] of Object.entries(kinds)) {
    const head = name === 'wide at row 150' ? '| a | b |\n|---|--:|\n' : '| name | value | note |\n|:--|--:|:-:|\n';
    for (const end of ends) {
      const text = `Intro\n\n${head}${Array.from({ length: 300 }, (_, i) => row(i)).join('')}${end}`;
      for (const step of [37, 8]) {
        const { s, lexed } = streamed(text, step, 60);
        assert.deepEqual(s.render(60), renderMarkdown(text, 60), `${name} ${JSON.stringify(end)}, ${step} characters a piece`);
        s.finish();
        assert.deepEqual(s.render(60), renderMarkdown(text, 60), `${name}, finished`);
        assert.deepEqual(s.render(35), renderMarkdown(text, 35), `${name}, at another width`);
        const most = Math.max(...lexed.slice(0, -40));
        assert.ok(most < text.length / 4, `${name}: a step lexed ${most} of ${text.length} characters`);
      }
    }
  }
});

test('streaming (fast-check): long tables of random rows, ended any way, in random pieces draw as the whole text does', {
  timeout: 120_000,
}, () => {
  const rows = ['| a | b |', '| **x** | `y` |', '| 1 \\| 2 | 3 |', '| one |', 'lazy row', '|---|---|', '| [l](https://e) | *i* |'];
  const others = ['', '# h', '- li', '```', '> q', '<div>', '    code', '***'];
  const line = fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...rows) }, { weight: 1, arbitrary: fc.constantFrom(...others) });
  const doc = fc.array(line, { minLength: 70, maxLength: 160 }).map((ls) => `Intro\n\n| h1 | h2 |\n|:--|--:|\n${ls.join('\n')}\nend\n`);
  const pieces = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 });
  check(60, fc.tuple(doc, pieces), ([text, steps]) => {
    const s = new MarkdownStream();
    for (let i = 0, j = 0; i < text.length; i += steps[j++ % steps.length]!) {
      s.append(text.slice(i, i + steps[j % steps.length]!));
      s.render(50);
    }
    assert.deepEqual(plain(s.render(50)), plain(renderMarkdown(text, 50)), JSON.stringify(text));
    s.finish();
    assert.deepEqual(plain(s.render(50)), plain(renderMarkdown(text, 50)), JSON.stringify(text));
    return true;
  });
});

test('streaming: a finished stream keeps no token trees and one copy of its lines; other widths still draw right', () => {
  const text = answer(6_000);
  const s = new MarkdownStream();
  for (let i = 0; i < text.length; i += 40) {
    s.append(text.slice(i, i + 40));
    s.render(100);
  }
  s.finish();
  const lines = s.render(100);
  assert.deepEqual(lines, renderMarkdown(text, 100));
  assert.equal(s.render(100), lines, 'the same lines, not drawn again');
  // What each finished block keeps: its place in the source, no tokens, no lines of its own.
  const done = (s as unknown as { done: { token: unknown; lines: unknown }[] }).done;
  assert.ok(done.length > 10);
  assert.ok(
    done.every((d) => d.token === null && d.lines === null),
    'finished blocks let go of their tokens and lines',
  );
  assert.deepEqual(s.render(57), renderMarkdown(text, 57), 'lexed again at another width');
  assert.deepEqual(s.render(100), lines);
  // Streams without a theme of their own share their rendering contexts.
  const ctx = (m: MarkdownStream) => m as unknown as { ctxDone: object; ctxOpen: object };
  const a = new MarkdownStream({ unicode: true }),
    b = new MarkdownStream({ unicode: true });
  assert.equal(ctx(a).ctxDone, ctx(b).ctxDone);
  assert.equal(ctx(a).ctxOpen, ctx(b).ctxOpen);
  assert.notEqual(ctx(a).ctxDone, ctx(a).ctxOpen);
});

test('streaming: blocks stay open until they cannot change (lists, setext headings, tables)', () => {
  const s = new MarkdownStream();
  s.append('- a\n\n');
  s.render(40);
  s.append('- b');
  assert.deepEqual(plain(s.render(40)), plain(renderMarkdown('- a\n\n- b', 40)));
  const h = new MarkdownStream();
  h.append('Title\n');
  h.render(40);
  h.append('===\n\ntext');
  assert.deepEqual(plain(h.render(40)), ['Title', '', 'text']);
  const t = new MarkdownStream();
  t.append('| a |\n|---|\n| 1 |\n');
  t.render(40);
  t.append('| 2 |\n\nafter');
  assert.deepEqual(t.render(40), renderMarkdown('| a |\n|---|\n| 1 |\n| 2 |\n\nafter', 40));
  const cr = new MarkdownStream();
  cr.append('line one\r');
  cr.append('\nline two');
  assert.equal(cr.text, 'line one\nline two');
});

test("the warm-up comes in small steps, one for each of marked's rules, and leaves rendering as it was", () => {
  const sample = '# T\n\n**b** _c_ ~~d~~ `e` [f](https://g.example)\n\n- h\n  - i\n\n| j | k |\n|---|--:|\n| 1 | 2 |\n\n> l';
  const before = renderMarkdown(sample, 30);
  const steps = markdownWarmUpSteps();
  // marked's rules found (Lexer.rules): without them one step would be ~40 ms on Node 20.
  assert.ok(steps.length > 30, `${steps.length} steps`);
  for (const step of steps) step();
  for (const step of steps) step(); // twice: nothing of the first run left in a rule's state
  assert.deepEqual(renderMarkdown(sample, 30), before);
});
