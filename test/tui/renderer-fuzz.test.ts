// Random sequences of transcript, footer and size changes: after every step the screen must be
// exactly what drawing the same state from scratch shows. Tiny terminals and resize storms too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualTerminal } from '../fixtures/virtual-terminal.js';
import { Renderer } from '../../src/tui/renderer.js';
import { CURSOR_MARKER } from '../../src/tui/escapes.js';
import type { Block } from '../../src/tui/transcript.js';
import { wrapText } from '../../src/tui/wrap.js';
import { paint } from '../../src/tui/style.js';
import { tally } from '../fixtures/tally.js';
import { checkAsync, fc } from '../fixtures/fuzz.js';
import { Vt100Screen } from '../fixtures/vt100-screen.js';

/** SU / SD: terminals at the VT100's level (the Linux console, pyte) have neither. */
const SCROLL_SEQUENCES = /\x1b\[\d*[ST]/;
const assertNoSuSd = (written: string, what: string) => assert.ok(!SCROLL_SEQUENCES.test(written), `${what}: SU/SD written`);

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const PIECES = [
  'word',
  'longer words here',
  '日本語',
  '👍🏽',
  '\x1b[1mbold\x1b[0m',
  '\x1b[31mred\x1b[0m text',
  'e\u0301',
  '\n',
  'tab\there',
  '\x1b]8;;https://x.y\x1b\\link\x1b]8;;\x1b\\',
];

class Text implements Block {
  final = false;
  constructor(public text: string) {}
  render(w: number) {
    return wrapText(this.text, w);
  }
}

/** Blocks rendered so far by Counted blocks (a test sets it to 0 first). */
let renders = 0;
class Counted extends Text {
  override render(w: number) {
    renders++;
    return super.render(w);
  }
}

async function freshScreen(
  blocks: Block[],
  footer: { render(w: number): string[] },
  cols: number,
  rows: number,
  mode: 'fullscreen' | 'inline',
) {
  const vt = new VirtualTerminal(cols, rows);
  const r = new Renderer(vt, { mode });
  r.setFooter([footer]);
  await r.start();
  for (const b of blocks) r.transcript.add(b);
  r.renderNow();
  await vt.flush();
  return { screen: vt.viewport(), cursor: vt.cursor() };
}

for (const seed of [1, 3, 5]) {
  test(`full screen, random steps (seed ${seed}): the screen is always what a fresh frame shows`, async () => {
    const rand = rng(seed);
    const pick = <T>(a: T[]) => a[Math.floor(rand() * a.length)]!;
    let cols = 30 + Math.floor(rand() * 50),
      rows = 6 + Math.floor(rand() * 20);
    const vt = new VirtualTerminal(cols, rows);
    const r = new Renderer(vt, { mode: 'fullscreen' });
    let status = 'idle',
      input = '';
    const footer = {
      render: (w: number) => [
        paint(` ${status}`.padEnd(w).slice(0, w), { inverse: true }),
        ...wrapText(`> ${input}`, w).map((l, i, a) => (i === a.length - 1 ? l + CURSOR_MARKER : l)),
      ],
    };
    r.setFooter([footer]);
    await r.start();
    const blocks: Text[] = [];
    for (let step = 0; step < 60; step++) {
      const op = rand();
      if (op < 0.35 || blocks.length === 0) {
        const b = new Text(Array.from({ length: 1 + Math.floor(rand() * 6) }, () => pick(PIECES)).join(' '));
        blocks.push(b);
        r.transcript.add(b);
      } else if (op < 0.7) {
        const b = blocks[blocks.length - 1 - Math.floor(rand() * Math.min(3, blocks.length))]!;
        b.text += pick(PIECES);
        r.transcript.changed(b);
      } else if (op < 0.8) status = pick(['idle', 'thinking', '42 tok/s', 'tools 1/3', '日本 working']);
      else if (op < 0.9) input = rand() < 0.3 ? '' : input + pick(PIECES).replace(/\x1b\[[0-9;]*m|\x1b\]8;;[^\x1b]*\x1b\\|\n/g, '');
      else {
        cols = 20 + Math.floor(rand() * 70);
        rows = 4 + Math.floor(rand() * 24);
        vt.resize(cols, rows);
      }
      r.renderNow();
      await vt.flush();
      const want = await freshScreen(blocks, footer, cols, rows, 'fullscreen');
      assert.deepEqual(vt.viewport(), want.screen, `step ${step}`);
      assert.deepEqual(vt.cursor(), want.cursor, `cursor at step ${step}`);
    }
    assertNoSuSd(vt.written, `seed ${seed}`);
    tally('fuzz', 60);
    r.stop();
  });
}

for (const seed of [11, 13]) {
  test(`inline, random steps (seed ${seed}): the screen is what a fresh frame shows; nothing doubled in the scrollback`, async () => {
    const rand = rng(seed);
    const pick = <T>(a: T[]) => a[Math.floor(rand() * a.length)]!;
    const cols = 40,
      rows = 12;
    const vt = new VirtualTerminal(cols, rows);
    const r = new Renderer(vt, { mode: 'inline' });
    let status = 'idle';
    const footer = { render: (w: number) => [` ${status}`.slice(0, w), `> ${CURSOR_MARKER}`] };
    r.setFooter([footer]);
    await r.start();
    const blocks: Text[] = [];
    let n = 0;
    for (let step = 0; step < 80; step++) {
      const op = rand();
      const live = blocks.filter((b) => !b.final);
      if (op < 0.3 || live.length === 0) {
        const b = new Text(`B${n++}: ${pick(PIECES).replace(/\n/g, '')}`);
        blocks.push(b);
        r.transcript.add(b);
      } else if (op < 0.6) {
        const b = live[live.length - 1]!;
        b.text += ` ${pick(PIECES)}`;
        r.transcript.changed(b);
      } else if (op < 0.85) {
        const b = live[0]!;
        b.final = true;
        r.transcript.changed(b);
      } else status = pick(['idle', 'thinking', 'streaming a longer status']);
      // Keep the live region shorter than the screen, where a fresh frame is the reference.
      const liveRows = blocks.filter((b) => !b.final).reduce((a, b) => a + b.render(cols).length, 0);
      if (liveRows > rows - 4) {
        for (const b of blocks) b.final = true;
        r.transcript.changedAll();
      }
      r.renderNow();
      await vt.flush();
      const total = blocks.reduce((a, b) => a + b.render(cols).length, 0) + 2;
      if (total >= rows) {
        const want = await freshScreen(blocks, footer, cols, rows, 'inline');
        assert.deepEqual(vt.viewport(), want.screen, `step ${step}`);
      }
    }
    const all = [...vt.scrollback(), ...vt.viewport()].join('\n');
    for (let i = 0; i < n; i++) assert.equal(all.split(`B${i}:`).length - 1, 1, `B${i} once`);
    assertNoSuSd(vt.written, `seed ${seed}`);
    tally('fuzz', 80);
    r.stop();
  });
}

test('full screen, a long transcript: a resize draws the end from its last blocks; the rest is laid out in the background', async () => {
  renders = 0;
  const [rows, footer] = [20, { render: (w: number) => [`> ${CURSOR_MARKER}`.slice(0, w + CURSOR_MARKER.length)] }];
  let cols = 60;
  const vt = new VirtualTerminal(cols, rows);
  const r = new Renderer(vt, { mode: 'fullscreen' });
  r.setFooter([footer]);
  await r.start();
  const blocks = Array.from({ length: 400 }, (_, i) => new Counted(`block ${i}: ${'some words that wrap '.repeat(1 + (i % 7))}`));
  for (const b of blocks) r.transcript.add(b);
  const laidOut = async () => {
    for (let i = 0; i < 2000 && r.transcript.notLaidOut(cols) > 0; i++) await new Promise((res) => setTimeout(res, 2));
    assert.equal(r.transcript.notLaidOut(cols), 0, 'the background lay-out did not finish');
  };
  const same = async (what: string) => {
    await vt.flush();
    assert.deepEqual(vt.viewport(), (await freshScreen(blocks, footer, cols, rows, 'fullscreen')).screen, what);
  };
  r.renderNow();
  await same('the first frame');
  await laidOut();
  for (const w of [45, 80, 33]) {
    renders = 0;
    cols = w;
    vt.resize(cols, rows);
    r.renderNow();
    assert.ok(renders <= 20, `${renders} blocks rendered for the frame after the resize to ${w} columns`);
    await same(`after the resize to ${w}`);
    // Streaming meanwhile: the end grows while the rest is laid out.
    for (let k = 0; k < 5; k++) {
      blocks.at(-1)!.text += ' more streamed words';
      r.transcript.changed(blocks.at(-1)!);
      r.renderNow();
      await same(`streaming at ${w}, chunk ${k}`);
    }
    await laidOut();
    r.renderNow();
    await same(`laid out at ${w}`);
  }
  // Laid out, streaming scrolls the region in place again.
  const scrolls = r.stats.scrolls;
  blocks.at(-1)!.text += ' and the last line that makes a new row of the transcript at the end';
  r.transcript.changed(blocks.at(-1)!);
  r.renderNow();
  await same('the last chunk');
  assert.ok(r.stats.scrolls > scrolls, 'no scroll in place after the lay-out');
  r.stop();
});

test('full screen: a few blocks slow to lay out (long code) are laid out for a few milliseconds of a frame, the rest in the background', {
  timeout: 60_000,
}, async () => {
  // A clock that moves only as blocks are rendered: each takes 3 ms.
  let now = 0;
  const clock = {
    now: () => now,
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
  };
  class Slow extends Text {
    override render(w: number) {
      renders++;
      now += 3;
      return super.render(w);
    }
  }
  const [rows, footer] = [20, { render: (w: number) => [`> ${CURSOR_MARKER}`.slice(0, w + CURSOR_MARKER.length)] }];
  let cols = 60;
  const vt = new VirtualTerminal(cols, rows);
  const r = new Renderer(vt, { mode: 'fullscreen', clock });
  r.setFooter([footer]);
  await r.start();
  // Twelve blocks of ten lines: fewer than a frame hands to the background by their number alone.
  const blocks = Array.from({ length: 12 }, (_, i) => new Slow(Array.from({ length: 10 }, (_, k) => `block ${i} line ${k}`).join('\n')));
  for (const b of blocks) r.transcript.add(b);
  r.renderNow();
  for (let i = 0; i < 2000 && r.transcript.notLaidOut(cols) > 0; i++) await new Promise((res) => setTimeout(res, 2));
  cols = 50;
  vt.resize(cols, rows);
  renders = 0;
  r.renderNow();
  assert.ok(renders <= 5, `${renders} blocks rendered in the frame after the resize (two laid out, the last ones drawn)`);
  assert.ok(r.transcript.notLaidOut(cols) > 0, 'the rest is left to the background');
  await vt.flush();
  assert.deepEqual(
    vt.viewport(),
    (await freshScreen(blocks, footer, cols, rows, 'fullscreen')).screen,
    'the end as a fresh render shows it',
  );
  for (let i = 0; i < 2000 && r.transcript.notLaidOut(cols) > 0; i++) await new Promise((res) => setTimeout(res, 2));
  assert.equal(r.transcript.notLaidOut(cols), 0, 'laid out in the background');
  r.stop();
});

test('full screen, scrolled up: a resize keeps the same text at the top of the view, drawn before the rest is laid out', async () => {
  renders = 0;
  const vt = new VirtualTerminal(60, 20);
  const r = new Renderer(vt, { mode: 'fullscreen' });
  r.setFooter([{ render: () => [`> ${CURSOR_MARKER}`] }]);
  await r.start();
  // Every line names its block: b17w0 b17w1 …
  for (let i = 0; i < 200; i++) r.transcript.add(new Counted(Array.from({ length: 12 + (i % 9) * 4 }, (_, k) => `b${i}w${k}`).join(' ')));
  r.layOut();
  r.renderNow();
  const topBlock = async () => {
    await vt.flush();
    return /b(\d+)w/.exec(vt.viewport()[0]!)?.[1];
  };
  for (let k = 0; k < 12; k++) r.pageUp();
  r.renderNow();
  const before = await topBlock();
  assert.ok(before && Number(before) > 20 && Number(before) < 180, `scrolled to block ${before}`);
  for (const cols of [100, 35, 60]) {
    renders = 0;
    vt.resize(cols, 20);
    r.renderNow();
    // Before anything is awaited: the rest is laid out in tasks of its own.
    assert.ok(renders <= 20, `${renders} blocks rendered for the frame after the resize to ${cols} columns`);
    assert.equal(r.linesBelow, Number.POSITIVE_INFINITY, 'the lines below are not counted yet');
    assert.equal(await topBlock(), before, `after the resize to ${cols} columns`);
    for (let i = 0; i < 2000 && r.transcript.notLaidOut(cols) > 0; i++) await new Promise((res) => setTimeout(res, 2));
    r.renderNow();
    assert.equal(await topBlock(), before, `laid out at ${cols} columns`);
    assert.ok(Number.isFinite(r.linesBelow) && r.linesBelow > 0, `${r.linesBelow} lines below`);
    assert.ok(!r.isFollowing);
  }
  // Scrolling from there goes from the same place.
  r.scrollBy(1);
  r.renderNow();
  assert.ok(Number((await topBlock()) ?? 0) >= Number(before));
  r.stop();
});

test('full screen: scrolling right after a resize, before the rest is laid out, renders only the blocks passed and lands where it would laid out', async () => {
  const rows = 20;
  const footer = { render: () => [`> ${CURSOR_MARKER}`] };
  const text = (i: number) => Array.from({ length: 40 + (i % 9) * 6 }, (_, k) => `b${i}w${k}`).join(' ');
  // Each renderer's bytes go to a screen parsed as they are written: the steps run without an
  // await, so the background lay-out has no task to go on in.
  const start = async (cols: number) => {
    const vt = new VirtualTerminal(cols, rows);
    const screen = new Vt100Screen(90, rows);
    const r = new Renderer(vt, { mode: 'fullscreen' });
    r.setFooter([footer]);
    await r.start();
    for (let i = 0; i < 300; i++) r.transcript.add(new Counted(text(i)));
    r.layOut();
    r.renderNow();
    const shows = () => {
      screen.feed(vt.takeWritten());
      return screen.viewport();
    };
    return { vt, r, shows };
  };
  const a = await start(60);
  a.vt.resize(90, rows);
  a.vt.takeWritten();
  a.r.renderNow();
  // The same transcript laid out at the new width from the start: where each scroll should land.
  const ref = await start(90);
  const steps: [string, (x: Renderer) => void][] = [
    ['PgUp', (x) => x.pageUp()],
    ['PgUp', (x) => x.pageUp()],
    ['a line up', (x) => x.scrollBy(-1)],
    ['five lines down', (x) => x.scrollBy(5)],
    ['PgUp ×4', (x) => [1, 2, 3, 4].forEach(() => x.pageUp())],
    ['PgDn ×9', (x) => Array.from({ length: 9 }, () => x.pageDown())],
    ['PgUp', (x) => x.pageUp()],
    ['Home', (x) => x.scrollToTop()],
    ['PgDn', (x) => x.pageDown()],
    ['forty lines up, past the top', (x) => x.scrollBy(-40)],
    ['End', (x) => x.scrollToBottom()],
    ['a line down at the end', (x) => x.scrollBy(1)],
    ['a line up from the end', (x) => x.scrollBy(-1)],
    ['a line down, back at the end', (x) => x.scrollBy(1)],
    ['PgUp', (x) => x.pageUp()],
    // A search's matches, shown by their block and place in it.
    ['a match in block 150', (x) => x.showAt(x.transcript.blockAt(150), 7)],
    ['a match in the last block', (x) => x.showAt(x.transcript.blockAt(299), 2)],
    ['a match in block 297', (x) => x.showAt(x.transcript.blockAt(297), 0)],
    ['a match in the first block', (x) => x.showAt(x.transcript.blockAt(0), 1)],
    ['a line past the end of block 10', (x) => x.showAt(x.transcript.blockAt(10), 1000)],
  ];
  for (const [what, step] of steps) {
    renders = 0;
    step(a.r);
    a.r.renderNow();
    assert.ok(renders <= 40, `${what}: ${renders} blocks rendered`);
    assert.ok(a.r.transcript.notLaidOut(90) > 200, `${what}: laid out meanwhile`);
    step(ref.r);
    ref.r.renderNow();
    assert.deepEqual(a.shows(), ref.shows(), what);
    assert.equal(a.r.isFollowing, ref.r.isFollowing, `${what}: following`);
  }
  // Laid out, a match shown by its block lands where its line number would: a third of the view
  // above it, as scrolling from the top to there shows it.
  for (const [b, k] of [
    [150, 5],
    [299, 2],
    [0, 1],
    [40, 3],
    [298, 0],
  ] as const) {
    ref.r.showAt(ref.r.transcript.blockAt(b), k);
    ref.r.renderNow();
    const byBlock = ref.shows();
    ref.r.scrollToBottom();
    ref.r.renderNow();
    ref.r.scrollToTop();
    ref.r.scrollBy(ref.r.transcript.blockStart(b, 90) + k - Math.floor((rows - 1) / 3));
    ref.r.renderNow();
    assert.deepEqual(ref.shows(), byBlock, `block ${b}, line ${k}`);
  }
  // Scrolled up, the rest laid out: the view stays on its text.
  const shown = a.shows();
  for (let i = 0; i < 2000 && a.r.transcript.notLaidOut(90) > 0; i++) await new Promise((res) => setTimeout(res, 2));
  a.r.renderNow();
  await a.vt.flush();
  assert.deepEqual(a.vt.viewport(), shown, 'laid out');
  assert.ok(Number.isFinite(a.r.linesBelow) && a.r.linesBelow > 0, `${a.r.linesBelow} lines below`);
  a.r.stop();
  ref.r.stop();
});

test('tiny terminals: 1×1 to 10×3 in both modes draw without error and keep the cursor on screen', async () => {
  for (const mode of ['fullscreen', 'inline'] as const) {
    for (const [c, h] of [
      [1, 1],
      [2, 2],
      [5, 3],
      [10, 3],
      [19, 7],
    ] as const) {
      const vt = new VirtualTerminal(c, h);
      const r = new Renderer(vt, { mode });
      r.setFooter([{ render: (w: number) => [' status bar'.slice(0, w), `> 日本${CURSOR_MARKER}`] }]);
      await r.start();
      r.transcript.add(Object.assign(new Text('some 日本語 text 👍🏽 that wraps'), { final: true }));
      r.transcript.add(new Text('live'));
      r.renderNow();
      await vt.flush();
      const cur = vt.cursor();
      // A shown cursor is on screen (on a 1-row screen the footer, and the cursor with it, has no room).
      if (!vt.cursorHidden) assert.ok(cur.row < h && cur.col < c, `${mode} ${c}×${h}: cursor ${JSON.stringify(cur)}`);
      else assert.equal(h, 1);
      r.stop();
    }
  }
  tally('bad_inputs', 10);
});

test('a resize storm in inline mode while streaming: nothing doubled, the footer at the bottom', async () => {
  const vt = new VirtualTerminal(60, 14);
  const r = new Renderer(vt, { mode: 'inline' });
  r.setFooter([{ render: (w: number) => [' status'.slice(0, w), `> ${CURSOR_MARKER}`] }]);
  await r.start();
  const reply = new Text('');
  r.transcript.add(reply);
  for (let i = 0; i < 80; i++) {
    reply.text += `S${String(i).padStart(3, '0')} x\n`;
    r.transcript.changed(reply);
    r.renderNow();
    if (i % 10 === 5) {
      await vt.flush();
      for (const [c, h] of [
        [50, 14],
        [45, 12],
        [55, 16],
        [40, 14],
      ] as const)
        vt.resize(c, h);
    }
    if (i % 10 === 9) await new Promise((res) => setTimeout(res, 30));
  }
  while (r.resizeInProgress) await new Promise((res) => setTimeout(res, 10));
  await vt.flush();
  const all = vt.logicalLines().join('\n');
  for (let i = 0; i < 80; i++) assert.equal(all.split(`S${String(i).padStart(3, '0')} `).length - 1, 1, `S${i} once`);
  assert.equal(vt.viewport()[13], '>');
  assertNoSuSd(vt.written, 'resize storm');
  tally('faults', 8);
  r.stop();
});

/**
 * A reply as a markdown renderer draws one: wrapped text, and lines whose decoration depends on
 * the width they are drawn at (a rule across it, a boxed row as wide as it, as a table's).
 */
class Decorated implements Block {
  final = false;
  readonly items: ({ text: string } | { rule: true } | { box: string })[] = [];
  render(w: number) {
    const out: string[] = [];
    for (const it of this.items) {
      if ('rule' in it) out.push('─'.repeat(w));
      else if ('box' in it) {
        const inner = Math.max(1, w - 4);
        out.push(`┌${'─'.repeat(w - 2)}┐`);
        for (const l of wrapText(it.box, inner)) out.push(`│ ${l.padEnd(inner)} │`);
        out.push(`└${'─'.repeat(w - 2)}┘`);
      } else out.push(...wrapText(it.text, w));
    }
    return out;
  }
}

test('inline, random resizes while wrapped and decorated lines stream (fast-check): every word reaches the scrollback exactly once', async () => {
  /** A line: words (0-14), or 15: a rule, or 16+k: a box around k words. */
  type Op = { push: number[] } | { resize: [number, number]; wait: boolean } | { commit: true } | { pause: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: fc.record({ push: fc.array(fc.integer({ min: 0, max: 24 }), { minLength: 1, maxLength: 25 }) }) },
    {
      weight: 2,
      arbitrary: fc.record({ resize: fc.tuple(fc.integer({ min: 12, max: 90 }), fc.integer({ min: 5, max: 20 })), wait: fc.boolean() }),
    },
    { weight: 1, arbitrary: fc.constant({ commit: true as const }) },
    { weight: 1, arbitrary: fc.record({ pause: fc.integer({ min: 0, max: 150 }) }) },
  );
  await checkAsync(
    30,
    fc.tuple(fc.integer({ min: 12, max: 90 }), fc.integer({ min: 5, max: 20 }), fc.array(op, { maxLength: 12 })),
    async ([cols, rows, ops]) => {
      const vt = new VirtualTerminal(cols, rows);
      const r = new Renderer(vt, { mode: 'inline' });
      r.setFooter([{ render: (w: number) => ['~status~'.slice(0, w), `> ${CURSOR_MARKER}`] }]);
      await r.start();
      // The resize is done once the terminal's cursor report came back and the frame is drawn.
      const settle = async () => {
        for (let i = 0; i < 500 && r.resizeInProgress; i++) {
          await vt.flush();
          await new Promise((res) => setTimeout(res, 2));
        }
        r.renderNow();
        await vt.flush();
      };
      const blocks: Decorated[] = [];
      let reply = new Decorated();
      blocks.push(reply);
      r.transcript.add(reply);
      let n = 0;
      const words = (k: number) =>
        `L${String(n++).padStart(4, '0')} ${Array.from({ length: k }, (_, j) => `w${(n * 7 + j) % 100}${j % 3 === 2 ? ',' : ''}`).join(' ')}`;
      for (const o of ops) {
        if ('push' in o) {
          // Frames are asked for as the text streams, also while a resize is being taken in.
          for (const k of o.push) {
            reply.items.push(k < 15 ? { text: words(k) } : k === 15 ? { rule: true } : { box: words(k - 16) });
            r.transcript.changed(reply);
            r.renderNow();
          }
          await vt.flush();
        } else if ('resize' in o) {
          vt.resize(o.resize[0], o.resize[1]);
          if (o.wait) await settle();
        } else if ('pause' in o) {
          await new Promise((res) => setTimeout(res, o.pause));
          await vt.flush();
        } else {
          reply.final = true;
          r.transcript.changed(reply);
          reply = new Decorated();
          blocks.push(reply);
          r.transcript.add(reply);
          r.renderNow();
          await vt.flush();
        }
      }
      await settle();
      r.stop();
      await vt.flush();
      const all = vt.logicalLines().join('\n');
      for (let i = 0; i < n; i++) {
        const tag = `L${String(i).padStart(4, '0')}`;
        assert.equal(all.split(tag).length - 1, 1, `${tag} once: ops ${JSON.stringify([cols, rows, ops])}\n${all}`);
      }
      // Every letter and digit in order (rules and box borders are drawn at whatever width).
      const content = (s: string) => s.replace(/[^\p{L}\p{N}]/gu, '');
      const want = blocks.flatMap((b) => b.items.map((it) => ('text' in it ? it.text : 'box' in it ? it.box : ''))).join('');
      assert.equal(content(all), content(want), `ops ${JSON.stringify([cols, rows, ops])}`);
      assert.equal(all.split(',').length, want.split(',').length, `commas, once each: ops ${JSON.stringify([cols, rows, ops])}\n${all}`);
      assertNoSuSd(vt.written, 'resizes');
      return true;
    },
  );
});

test('no frame in either mode scrolls with SU/SD; a VT100-level screen (no SU/SD, strict margins) shows what xterm shows', async () => {
  type Op =
    | { add: number }
    | { append: number }
    | { commit: true }
    | { status: number }
    | { input: number }
    | { scroll: number }
    | { page: 'up' | 'down' | 'top' | 'bottom' }
    | { resize: [number, number] };
  const ASCII = [
    'word',
    'longer words here',
    '日本語 text',
    '\x1b[1mbold\x1b[0m',
    '\x1b[31mred\x1b[0m x',
    '\n',
    'a-much-longer-unbroken-token',
  ];
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ add: fc.nat(ASCII.length - 1) }) },
    { weight: 6, arbitrary: fc.record({ append: fc.nat(ASCII.length - 1) }) },
    { weight: 2, arbitrary: fc.record({ commit: fc.constant(true as const) }) },
    { weight: 1, arbitrary: fc.record({ status: fc.nat(3) }) },
    { weight: 1, arbitrary: fc.record({ input: fc.nat(40) }) },
    { weight: 2, arbitrary: fc.record({ scroll: fc.integer({ min: -8, max: 8 }) }) },
    { weight: 1, arbitrary: fc.record({ page: fc.constantFrom('up' as const, 'down' as const, 'top' as const, 'bottom' as const) }) },
    { weight: 1, arbitrary: fc.record({ resize: fc.tuple(fc.integer({ min: 12, max: 70 }), fc.integer({ min: 4, max: 20 })) }) },
  );
  await checkAsync(
    40,
    fc.tuple(
      fc.constantFrom('fullscreen' as const, 'inline' as const),
      fc.boolean(),
      fc.integer({ min: 12, max: 70 }),
      fc.integer({ min: 4, max: 20 }),
      fc.array(op, { maxLength: 40 }),
    ),
    async ([mode, lineFeedReturns, cols0, rows0, ops]) => {
      let cols = cols0,
        rows = rows0;
      const vt = new VirtualTerminal(cols, rows, { lineFeedReturns });
      const vt100 = new Vt100Screen(cols, rows, lineFeedReturns);
      const r = new Renderer(vt, { mode });
      let status = 0,
        input = 0;
      r.setFooter([
        {
          render: (w: number) => [
            paint(` status ${'-'.repeat(status * 3)}`.padEnd(w).slice(0, w), { inverse: true }),
            ...wrapText(`> ${'i'.repeat(input)}`, w).map((l, i, a) => (i === a.length - 1 ? l + CURSOR_MARKER : l)),
          ],
        },
      ]);
      await r.start();
      const blocks: Text[] = [];
      let written = '';
      const take = () => {
        const w = vt.takeWritten();
        written += w;
        return w;
      };
      const compare = async (step: string) => {
        await vt.flush();
        vt100.feed(take());
        assert.deepEqual(vt100.viewport(), vt.viewport(), `${step}: ${JSON.stringify([mode, lineFeedReturns, cols0, rows0, ops])}`);
        if (!vt.cursorHidden) assert.deepEqual(vt100.cursor(), vt.cursor(), `cursor, ${step}`);
      };
      await compare('start');
      for (const [i, o] of ops.entries()) {
        if ('add' in o || blocks.length === 0) {
          const b = new Text(ASCII['add' in o ? o.add : 0]!);
          blocks.push(b);
          r.transcript.add(b);
        } else if ('append' in o) {
          const b = blocks[blocks.length - 1]!;
          b.text += ` ${ASCII[o.append]}`;
          r.transcript.changed(b);
        } else if ('commit' in o) {
          for (const b of blocks) b.final = true;
          r.transcript.changedAll();
        } else if ('status' in o) status = o.status;
        else if ('input' in o) input = o.input;
        else if ('scroll' in o) r.scrollBy(o.scroll);
        else if ('page' in o) {
          if (o.page === 'up') r.pageUp();
          else if (o.page === 'down') r.pageDown();
          else if (o.page === 'top') r.scrollToTop();
          else r.scrollToBottom();
        } else if (mode === 'fullscreen') {
          // The VT100 screen does not rewrap at a resize (neither does pyte): full screen only,
          // where a resize repaints everything.
          [cols, rows] = o.resize;
          await vt.flush();
          vt100.feed(take());
          vt.resize(cols, rows);
          vt100.resize(cols, rows);
          await new Promise((res) => setTimeout(res, 40));
        }
        r.renderNow();
        await compare(`step ${i} ${JSON.stringify(o)}`);
      }
      r.stop();
      assertNoSuSd(written, mode);
      return true;
    },
  );
});
