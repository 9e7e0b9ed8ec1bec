// The renderer on a real VT parser (@xterm/headless): what a terminal shows after the bytes it
// writes, in full-screen and inline mode, and how few bytes it takes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualTerminal } from '../fixtures/virtual-terminal.js';
import { Vt100Screen } from '../fixtures/vt100-screen.js';
import { type Clock, Renderer } from '../../src/tui/renderer.js';
import { CURSOR_MARKER } from '../../src/tui/escapes.js';
import type { Block } from '../../src/tui/transcript.js';
import { wrapText } from '../../src/tui/wrap.js';
import { paint } from '../../src/tui/style.js';

class Text implements Block {
  final = false;
  constructor(public text: string) {}
  render(w: number) {
    return wrapText(this.text, w);
  }
}
const done = (t: string) => Object.assign(new Text(t), { final: true });

/** A streaming reply in `r`; push(from, to) appends lines `line(i)` one frame each. */
function streamingReply(r: Renderer, line: (i: number) => string) {
  const reply = new Text('');
  r.transcript.add(reply);
  const push = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      reply.text += `${line(i)}\n`;
      r.transcript.changed(reply);
      r.renderNow();
    }
  };
  return { reply, push };
}

/** A clock whose timers run only when the test advances it. */
function fakeClock() {
  let now = 0;
  const pending: { at: number; fn: () => void }[] = [];
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const t = { at: now + ms, fn };
      pending.push(t);
      return t;
    },
    clearTimeout: (h) => {
      const i = pending.indexOf(h as never);
      if (i >= 0) pending.splice(i, 1);
    },
  };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      pending.sort((a, b) => a.at - b.at);
      const t = pending[0];
      if (!t || t.at > end) break;
      pending.shift();
      now = t.at;
      t.fn();
    }
    now = end;
  };
  return { clock, advance };
}

/** Once the renderer has taken in a resize (inline: the size held, the cursor report came, the frame is drawn). */
async function resized(r: Renderer) {
  await new Promise((res) => setTimeout(res, 10));
  while (r.resizeInProgress) await new Promise((res) => setTimeout(res, 10));
}

const tagOf = (i: number) => `L${String(i).padStart(3, '0')}`;

/** Each of the tags L000…L(n-1) is in the terminal's lines exactly once. */
function assertEachOnce(vt: VirtualTerminal, n: number, tag: (i: number) => string = tagOf) {
  const all = vt.logicalLines().join('\n');
  for (let i = 0; i < n; i++) assert.equal(all.split(tag(i)).length - 1, 1, `${tag(i)} exactly once:\n${all}`);
}

class Footer {
  status = 'idle';
  input = '';
  render(w: number) {
    return [paint(` clm [mock] ${this.status}`.padEnd(w).slice(0, w), { bg: 'blue', fg: 'black' }), `> ${this.input}${CURSOR_MARKER}`];
  }
}

async function setup(mode: 'fullscreen' | 'inline', cols = 60, rows = 12, opts: { answerQueries?: boolean; prefill?: string } = {}) {
  const vt = new VirtualTerminal(cols, rows, { answerQueries: opts.answerQueries });
  if (opts.prefill) vt.write(opts.prefill);
  await vt.flush();
  vt.takeWritten();
  const r = new Renderer(vt, { mode });
  const footer = new Footer();
  r.setFooter([footer]);
  await r.start();
  await vt.flush();
  return { vt, r, footer };
}

/** What a renderer drawing the same blocks from scratch shows (following the bottom). */
async function fresh(mode: 'fullscreen' | 'inline', blocks: Block[], footer: Footer, cols: number, rows: number): Promise<string[]> {
  const vt = new VirtualTerminal(cols, rows);
  const r = new Renderer(vt, { mode });
  r.setFooter([footer]);
  await r.start();
  for (const b of blocks) r.transcript.add(b);
  r.renderNow();
  await vt.flush();
  return vt.viewport();
}

const CLEARS = /\x1b\[[23]J/;

// ---- full screen -------------------------------------------------------------------------------

test('full screen: alternate screen, paste and wheel on; the first frame; everything off again at stop', async () => {
  const { vt, r } = await setup('fullscreen', 40, 8);
  assert.ok(vt.altScreen);
  assert.ok(vt.bracketedPaste);
  assert.notEqual(vt.mouseTracking, 'none');
  assert.ok(vt.raw);
  r.transcript.add(done('first line'));
  r.transcript.add(done('second line'));
  r.renderNow();
  await vt.flush();
  const v = vt.viewport();
  assert.deepEqual(v.slice(0, 2), ['first line', 'second line']);
  assert.equal(v[6]!.trim(), 'clm [mock] idle');
  assert.equal(v[7], '>');
  assert.deepEqual(vt.cursor(), { row: 7, col: 2 }, 'the hardware cursor sits at the input (IME)');
  r.stop();
  await vt.flush();
  assert.ok(!vt.altScreen);
  assert.ok(!vt.bracketedPaste);
  assert.equal(vt.mouseTracking, 'none');
  assert.ok(!vt.raw);
  assert.ok(!vt.cursorHidden);
});

test('full screen: only the changed cells are written; nothing at all while idle', async () => {
  const { vt, r, footer } = await setup('fullscreen', 60, 10);
  for (let i = 0; i < 5; i++) r.transcript.add(done(`line ${i}`));
  r.renderNow();
  await vt.flush();
  vt.takeWritten();
  r.renderNow();
  assert.equal(vt.takeWritten(), '', 'no change, no bytes');
  footer.status = 'idla';
  r.renderNow();
  const w = vt.takeWritten();
  assert.ok(w.length < 45, `one changed cell took ${w.length} bytes: ${JSON.stringify(w)}`);
  assert.ok(w.startsWith('\x1b[?2026h') && w.endsWith('\x1b[?2026l'), 'inside synchronized output');
  footer.input = 'hello';
  r.renderNow();
  await vt.flush();
  assert.equal(vt.viewport()[9], '> hello');
  assert.deepEqual(vt.cursor(), { row: 9, col: 7 });
});

test('full screen: streaming into a 2,000-line transcript scrolls the region in place, no clear, few bytes per chunk', async () => {
  const { vt, r, footer } = await setup('fullscreen', 110, 32);
  const blocks: Block[] = [];
  for (let i = 0; i < 2000; i++) {
    const b = done(`transcript line ${i} ${'lorem ipsum '.repeat(i % 7)}`);
    blocks.push(b);
    r.transcript.add(b);
  }
  const reply = new Text('');
  blocks.push(reply);
  r.transcript.add(reply);
  r.renderNow();
  // The first frame drew the end from the last blocks; the rest is laid out in the background.
  for (let i = 0; i < 1000 && r.transcript.notLaidOut(110) > 0; i++) await new Promise((res) => setTimeout(res, 5));
  assert.equal(r.transcript.notLaidOut(110), 0);
  r.renderNow();
  await vt.flush();
  vt.takeWritten();
  const repaints = r.stats.fullRepaints;
  const words = 'the quick brown fox jumps over the lazy dog and keeps running '.split(' ');
  let chunks = 0;
  for (let i = 0; i < 400; i++) {
    let d = '';
    while (d.length < 40) d += `${words[(i * 7 + d.length) % words.length]} `;
    reply.text += d;
    r.transcript.changed(reply);
    chunks++;
    if (i % 50 === 0) {
      footer.status = `${i} tok/s`;
    }
    r.renderNow();
  }
  await vt.flush();
  const bytes = vt.takeWritten();
  assert.ok(!CLEARS.test(bytes), 'no full-screen clear while streaming');
  assert.equal(r.stats.fullRepaints, repaints, 'no repaint from scratch');
  assert.ok(/\x1b\[1;30r/.test(bytes) && /\v|\x1b\[\d*M/.test(bytes), 'the transcript region is scrolled in place (line feeds or DL)');
  assert.ok(!/\x1b\[\d*[ST]/.test(bytes), 'no SU/SD: a VT100-level terminal has none');
  const perChunk = Buffer.byteLength(bytes) / chunks;
  assert.ok(perChunk < 120, `bytes per chunk ${perChunk.toFixed(1)}`);
  assert.deepEqual(vt.viewport(), await fresh('fullscreen', blocks, footer, 110, 32), 'the screen is what a fresh render shows');
});

test('full screen on a VT100-level screen (pyte, the Linux console): scrolling, PgUp and the footer land as on xterm', async () => {
  for (const lineFeedReturns of [false, true]) {
    const vt = new VirtualTerminal(40, 10, { lineFeedReturns });
    const vt100 = new Vt100Screen(40, 10, lineFeedReturns);
    const r = new Renderer(vt, { mode: 'fullscreen' });
    const footer = new Footer();
    r.setFooter([footer]);
    await r.start();
    let all = '';
    const same = async (what: string) => {
      await vt.flush();
      const w = vt.takeWritten();
      all += w;
      vt100.feed(w);
      assert.deepEqual(vt100.viewport(), vt.viewport(), what);
      assert.deepEqual(vt100.cursor(), vt.cursor(), `cursor: ${what}`);
    };
    const { push } = streamingReply(r, (i) => `reply line ${i}`);
    push(0, 30);
    await same('streamed past the bottom (the region scrolled)');
    // The status bar, then the cursor back down to the input: below the region's margins.
    footer.status = 'thinking';
    r.renderNow();
    await same('a status change');
    footer.input = 'typed';
    r.renderNow();
    await same('typing');
    r.pageUp();
    r.renderNow();
    await same('PgUp');
    r.scrollBy(-1);
    r.renderNow();
    await same('one row up');
    r.scrollBy(3);
    r.renderNow();
    await same('three rows down');
    r.scrollToBottom();
    r.renderNow();
    await same('End');
    assert.ok(!/\x1b\[\d*[ST]/.test(all), 'no SU/SD');
    r.stop();
  }
});

test('rows scrolled in take no style of the text before them: a background, inverse or underline stays on its text', async () => {
  for (const mode of ['fullscreen', 'inline'] as const) {
    const { vt, r } = await setup(mode, 40, 8);
    const styles = [{ bg: 'red' }, { inverse: true }, { underline: true }, { fg: 'green' }] as const;
    const { push } = streamingReply(r, (i) => `row ${i} ${paint('styled end', styles[i % styles.length]!)}`);
    for (let i = 0; i < 24; i++) push(i, i + 1);
    await vt.flush();
    const v = vt.viewport();
    // Rows 0-4 are text; row 5 is the blank line the reply goes on in.
    for (let row = 0; row < 5; row++) {
      const end = v[row]!.length;
      assert.ok(end > 0 && end < 38, `${mode}: row ${row} ${JSON.stringify(v[row])}`);
      const c = vt.cell(row, end + 1);
      assert.ok(c.bgDefault && !c.inverse && !c.underline, `${mode}: the blank after row ${row} is plain: ${JSON.stringify(c)}`);
    }
    r.stop();
  }
});

test('a terminal whose line feed returns (a tty in raw mode, ONLCR) gets LF for the next row, and the same screens', async () => {
  const words = 'the quick brown fox jumps over the lazy dog and keeps running '.split(' ');
  const run = async (mode: 'fullscreen' | 'inline', lineFeedReturns: boolean) => {
    const vt = new VirtualTerminal(60, 12, { lineFeedReturns });
    const r = new Renderer(vt, { mode });
    const footer = new Footer();
    r.setFooter([footer]);
    await r.start();
    for (let i = 0; i < 30; i++) r.transcript.add(done(`old line ${i}`));
    const reply = new Text('');
    r.transcript.add(reply);
    for (let i = 0; i < 60; i++) {
      reply.text += `${words[i % words.length]} ${i % 9 === 8 ? '\n' : ''}`;
      r.transcript.changed(reply);
      footer.status = `${i}`;
      r.renderNow();
    }
    await vt.flush();
    // Bytes on the wire: the tty sends CR LF for each LF.
    const wire = vt.written.length + (lineFeedReturns ? vt.written.split('\n').length - 1 : 0);
    const lfs = vt.written.split('\n').length - 1;
    const out = { screen: vt.viewport(), scrollback: vt.scrollback(), bytes: wire, lfs, crlf: vt.written.includes('\r\n') };
    r.stop();
    return out;
  };
  for (const mode of ['fullscreen', 'inline'] as const) {
    const plain = await run(mode, false);
    const lf = await run(mode, true);
    assert.deepEqual(lf.screen, plain.screen, mode);
    assert.deepEqual(lf.scrollback, plain.scrollback, mode);
    // On the wire an LF costs what CR LF costs elsewhere, no more: CR LF itself would cost three.
    assert.ok(lf.bytes <= plain.bytes + plain.lfs, `${mode}: ${lf.bytes} > ${plain.bytes} + ${plain.lfs}`);
    assert.ok(!lf.crlf, `${mode}: CR LF written where LF does`);
  }
});

test('full screen: scrolled up, the viewport holds still while text streams in; PgUp/PgDn/End', async () => {
  const { vt, r } = await setup('fullscreen', 50, 10);
  for (let i = 0; i < 100; i++) r.transcript.add(done(`line ${i}`));
  const reply = new Text('');
  r.transcript.add(reply);
  r.renderNow();
  r.pageUp();
  r.renderNow();
  await vt.flush();
  const before = vt.viewport().slice(0, 8);
  assert.equal(before[0], 'line 86');
  for (let i = 0; i < 30; i++) {
    reply.text += `more streamed text ${i} `;
    r.transcript.changed(reply);
    r.renderNow();
  }
  await vt.flush();
  assert.deepEqual(vt.viewport().slice(0, 8), before, 'held still');
  r.pageUp();
  r.renderNow();
  await vt.flush();
  assert.equal(vt.viewport()[0], 'line 79');
  for (let i = 0; i < 4; i++) r.pageDown();
  r.renderNow();
  await vt.flush();
  assert.ok(r.isFollowing, 'back at the bottom, following again');
  assert.match(vt.viewport()[7]!, /streamed text 29/);
  r.scrollToTop();
  r.renderNow();
  await vt.flush();
  assert.equal(vt.viewport()[0], 'line 0');
  r.scrollToBottom();
  r.renderNow();
  await vt.flush();
  assert.match(vt.viewport()[7]!, /streamed text 29/);
});

test('full screen: PgUp through a 10,000-line transcript shows the right lines at every step', async () => {
  const { vt, r } = await setup('fullscreen', 80, 24);
  for (let i = 0; i < 10_000; i++) r.transcript.add(done(`row ${i}`));
  r.renderNow();
  let top = 10_000 - 22;
  for (let step = 0; step < 30; step++) {
    r.pageUp();
    r.renderNow();
    top -= 21;
  }
  await vt.flush();
  assert.equal(vt.viewport()[0], `row ${top}`);
  assert.equal(vt.viewport()[21], `row ${top + 21}`);
});

test('full screen: resize repaints at the new size; Ctrl-L redraw repaints', async () => {
  const { vt, r, footer } = await setup('fullscreen', 60, 12);
  const blocks = Array.from({ length: 30 }, (_, i) => done(`entry ${i}: ${'word '.repeat(i % 12)}`));
  for (const b of blocks) r.transcript.add(b);
  r.renderNow();
  vt.resize(30, 8);
  r.renderNow();
  await vt.flush();
  assert.deepEqual(vt.viewport(), await fresh('fullscreen', blocks, footer, 30, 8));
  vt.resize(90, 20);
  r.renderNow();
  await vt.flush();
  assert.deepEqual(vt.viewport(), await fresh('fullscreen', blocks, footer, 90, 20));
  vt.write('\x1b[5;5Hgarbage');
  r.redraw();
  r.renderNow();
  await vt.flush();
  assert.deepEqual(vt.viewport(), await fresh('fullscreen', blocks, footer, 90, 20));
});

test('full screen: wide characters and styles change in the middle of rows without leftovers', async () => {
  const { vt, r, footer } = await setup('fullscreen', 30, 6);
  const b = new Text('日本語 abc');
  r.transcript.add(b);
  r.renderNow();
  for (const t of ['日本 abc', '日x本語 abc', '\x1b[1m日本\x1b[0m語 abc', 'ab日本語', '👍🏽 ok', '']) {
    b.text = t;
    r.transcript.changed(b);
    r.renderNow();
    await vt.flush();
    assert.deepEqual(vt.viewport(), await fresh('fullscreen', [b], footer, 30, 6), JSON.stringify(t));
  }
});

test('an emoji whose width terminals disagree on (VS16, ZWJ) does not shift what is written after it on its row', async () => {
  // xterm here, as tmux and many terminals, draws ⚠️ (U+26A0 U+FE0F) one column wide where the
  // renderer counts two: text streamed onto the row after it, with the cursor away in between,
  // landed a column off ("⚠️ Warn ing"), and a line drawn whole then differs from one streamed.
  for (const mode of ['fullscreen', 'inline'] as const) {
    const { vt, r, footer } = await setup(mode, 60, 8);
    const reply = new Text('');
    r.transcript.add(reply);
    for (const piece of ['\u26a0\ufe0f Warn', 'ing: this', ' and \u2764\ufe0f more', ' text.']) {
      reply.text += piece;
      r.transcript.changed(reply);
      footer.status = footer.status === 'idle' ? 'busy' : 'idle';
      r.renderNow();
      await vt.flush();
    }
    const streamed = vt.viewport();
    const whole = await fresh(mode, [new Text(reply.text)], footer, 60, 8);
    assert.deepEqual(streamed, whole, mode);
    assert.ok(
      streamed.some((l) => /Warning: this and .+ more text\.$/.test(l)),
      streamed.join('\n'),
    );
    r.stop();
  }
});

test('full screen: control sequences inside component lines never reach the terminal', async () => {
  const { vt, r } = await setup('fullscreen', 40, 6);
  r.transcript.add({ render: () => ['a\x1b[2Jb\x1b]0;pwned\x07c\x1b[?1049ld\x07e'] });
  r.renderNow();
  await vt.flush();
  const w = vt.takeWritten();
  assert.ok(!CLEARS.test(w) && !w.includes(']0;') && !w.includes('?1049l') && !w.includes('\x07'), JSON.stringify(w));
  assert.equal(vt.viewport()[0], 'abcde');
});

test('frames for streamed content are coalesced; a keystroke is drawn at once', async () => {
  const { clock, advance } = fakeClock();
  const vt = new VirtualTerminal(40, 8);
  const r = new Renderer(vt, { mode: 'fullscreen', clock, frameMs: 50 });
  const footer = new Footer();
  r.setFooter([footer]);
  await r.start();
  const reply = new Text('');
  r.transcript.add(reply);
  const frames0 = r.stats.frames;
  for (let i = 0; i < 50; i++) {
    reply.text += 'word ';
    r.transcript.changed(reply);
    r.requestRender();
    advance(4);
  }
  const streamed = r.stats.frames - frames0;
  assert.ok(streamed >= 3 && streamed <= 6, `${streamed} frames for 200 ms of streaming`);
  footer.input = 'x';
  r.requestRender(true);
  advance(0);
  assert.equal(r.stats.frames - frames0, streamed + 1, 'the keystroke frame did not wait');
  r.stop();
});

// ---- inline ------------------------------------------------------------------------------------

test('inline: normal screen, no mouse; finished blocks go into the scrollback once; footer at the bottom', async () => {
  const { vt, r } = await setup('inline', 50, 10);
  assert.ok(!vt.altScreen);
  assert.equal(vt.mouseTracking, 'none');
  assert.ok(vt.bracketedPaste);
  for (let i = 0; i < 40; i++) {
    r.transcript.add(done(`block ${i}`));
    if (i % 3 === 0) r.renderNow();
  }
  r.renderNow();
  await vt.flush();
  const all = [...vt.scrollback(), ...vt.viewport()];
  for (let i = 0; i < 40; i++) assert.equal(all.filter((l) => l === `block ${i}`).length, 1, `block ${i} once`);
  const v = vt.viewport();
  assert.equal(v[8]!.trim(), 'clm [mock] idle');
  assert.equal(v[9], '>');
  assert.ok(!/\x1b\[\?1049h|\x1b\[\?100[0236]h/.test(vt.written));
});

test('inline: starts below what is already on the screen and leaves it alone', async () => {
  const { vt, r } = await setup('inline', 40, 10, { prefill: '$ ls\r\nfile1 file2\r\n$ clm' });
  r.transcript.add(done('hello'));
  r.renderNow();
  await vt.flush();
  assert.deepEqual(vt.viewport().slice(0, 4), ['$ ls', 'file1 file2', '$ clm', 'hello']);
});

test('once the terminal was restored (a signal), a frame still pending writes nothing', async () => {
  for (const mode of ['fullscreen', 'inline'] as const) {
    const { vt, r } = await setup(mode);
    r.transcript.add(done('late text'));
    r.requestRender();
    vt.restore();
    const restored = vt.takeWritten();
    assert.ok(restored.includes('\x1b[?25h'), mode);
    await new Promise((res) => setTimeout(res, 80));
    r.renderNow();
    assert.equal(vt.takeWritten(), '', `${mode}: drew after the restore`);
    r.stop();
    assert.equal(vt.takeWritten(), '', `${mode}: stop wrote after the restore`);
  }
});

test('inline: a frame asked for while the start waits for the cursor report is drawn after it, where the region is', async () => {
  const vt = new VirtualTerminal(40, 10);
  vt.write('$ ls\r\nfile1 file2\r\n');
  await vt.flush();
  const r = new Renderer(vt, { mode: 'inline' });
  const footer = new Footer();
  r.setFooter([footer]);
  const started = r.start();
  // What a screen does as its configuration arrives: new content and a frame, before the answer.
  r.transcript.add(done('hello'));
  footer.status = 'ready';
  r.requestRender(true);
  r.renderNow();
  await new Promise((res) => setTimeout(res, 20));
  await started;
  await vt.flush();
  assert.deepEqual(vt.viewport().slice(0, 5), ['$ ls', 'file1 file2', 'hello', ' clm [mock] ready', '>']);
  assert.deepEqual(
    vt
      .viewport()
      .slice(5)
      .filter((l) => l.trim()),
    [],
  );
  r.stop();
});

test('inline: a 500-line reply streams with few bytes per chunk; its first lines are in the scrollback exactly once', async () => {
  const { vt, r, footer } = await setup('inline', 80, 24);
  for (let i = 0; i < 50; i++) r.transcript.add(done(`earlier ${i}`));
  const reply = new Text('');
  r.transcript.add(reply);
  r.renderNow();
  await vt.flush();
  vt.takeWritten();
  let chunks = 0;
  for (let i = 0; i < 500; i++) {
    const line = `R${String(i).padStart(3, '0')} ${'streamed words '.repeat(2)}`;
    for (let k = 0; k < line.length; k += 20) {
      reply.text += line.slice(k, k + 20);
      r.transcript.changed(reply);
      r.renderNow();
      chunks++;
    }
    reply.text += '\n';
  }
  await vt.flush();
  const bytes = vt.takeWritten();
  assert.ok(!CLEARS.test(bytes), 'no clear while streaming');
  assert.ok(Buffer.byteLength(bytes) / chunks < 60, `bytes per chunk ${(Buffer.byteLength(bytes) / chunks).toFixed(1)}`);
  const all = [...vt.scrollback(), ...vt.viewport()].join('\n');
  for (let i = 0; i < 500; i++) {
    const tag = `R${String(i).padStart(3, '0')} `;
    assert.equal(all.split(tag).length - 1, 1, `${tag} exactly once`);
  }
  const v = vt.viewport();
  assert.equal(v[22]!.trim(), 'clm [mock] idle');
  assert.equal(v[23], '>');
  reply.final = true;
  r.transcript.changed(reply);
  footer.status = 'done';
  r.renderNow();
  r.stop();
  await vt.flush();
  const after = [...vt.scrollback(), ...vt.viewport()].join('\n');
  for (let i = 0; i < 500; i += 50) assert.equal(after.split(`R${String(i).padStart(3, '0')} `).length - 1, 1);
  assert.ok(!after.includes('clm [mock]'), 'the footer is gone at stop');
});

/** A finished block of `n` tagged lines that waits for its colours while `waits` is set. */
class Waiting extends Text {
  override final = true;
  waits = true;
  constructor(tag: string, n: number) {
    super(Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(2, '0')}`).join('\n'));
  }
  awaitsHighlighter() {
    return this.waits;
  }
}

test('inline: a block waiting for its colours that no frame showed yet is not drawn until they come (or the last frame)', {
  timeout: 10_000,
}, async () => {
  const { vt, r } = await setup('inline', 40, 10);
  r.transcript.add(done('before'));
  const code = new Waiting('C', 30);
  r.transcript.add(code);
  assert.equal(r.lastAwaitsColours(), true);
  r.renderNow();
  await vt.flush();
  let all = [...vt.scrollback(), ...vt.viewport()];
  assert.ok(all.includes('before'), all.join('\n'));
  // Drawn plain, 20 of its 30 rows would be in the scrollback for good.
  assert.ok(!all.some((l) => l.startsWith('C')), all.join('\n'));
  code.waits = false;
  r.transcript.changed(code);
  assert.equal(r.lastAwaitsColours(), false);
  r.renderNow();
  await vt.flush();
  all = [...vt.scrollback(), ...vt.viewport()];
  for (let i = 0; i < 30; i++) assert.equal(all.filter((l) => l === `C${String(i).padStart(2, '0')}`).length, 1, all.join('\n'));

  // The last frame (stop) draws a block still waiting: the transcript stays whole in the scrollback.
  const late = new Waiting('D', 5);
  r.transcript.add(late);
  r.renderNow();
  await vt.flush();
  assert.ok(![...vt.scrollback(), ...vt.viewport()].some((l) => l.startsWith('D')));
  r.stop();
  await vt.flush();
  all = [...vt.scrollback(), ...vt.viewport()];
  for (let i = 0; i < 5; i++) assert.equal(all.filter((l) => l === `D0${i}`).length, 1, all.join('\n'));
});

test('inline: a block still streaming is drawn at once, whatever it waits for', { timeout: 10_000 }, async () => {
  const { vt, r } = await setup('inline', 40, 10);
  const reply = new Waiting('S', 3);
  reply.final = false;
  r.transcript.add(reply);
  r.renderNow();
  await vt.flush();
  assert.deepEqual(vt.viewport().slice(0, 3), ['S00', 'S01', 'S02']);
});

test('inline: a block already on screen stays drawn, live, while it waits for its colours', { timeout: 10_000 }, async () => {
  const { vt, r } = await setup('inline', 40, 10);
  const reply = new Waiting('R', 3);
  reply.waits = false;
  reply.final = false;
  r.transcript.add(reply);
  r.renderNow();
  reply.final = true;
  reply.waits = true;
  r.transcript.changed(reply);
  r.renderNow();
  await vt.flush();
  assert.deepEqual(vt.viewport().slice(0, 3), ['R00', 'R01', 'R02']);
  assert.equal(r.isCommitted(reply), false, 'committed before its colours came');
});

test('inline: a row that changes in the frame that pushes it off the screen is written before it goes', async () => {
  const { vt, r, footer } = await setup('inline', 80, 20);
  r.transcript.add(done('you> long'));
  const reply = new Text('');
  r.transcript.add(reply);
  const text = Array.from({ length: 300 }, (_, i) => `line ${i + 1}\n`).join('\n');
  const size = Math.ceil(text.length / 100);
  let n = 0;
  // Three deltas a frame: one frame adds most of a screen below a half-written line.
  for (let i = 0; i < text.length; i += size) {
    reply.text = text.slice(0, i + size).replace(/\n$/, '');
    r.transcript.changed(reply);
    if (++n % 3 === 0) {
      footer.status = `frame ${n}`;
      r.renderNow();
      await vt.flush();
    }
  }
  reply.final = true;
  r.transcript.changed(reply);
  r.renderNow();
  await vt.flush();
  const all = [...vt.scrollback(), ...vt.viewport()].filter((l) => l.startsWith('l'));
  assert.deepEqual(
    all,
    Array.from({ length: 300 }, (_, i) => `line ${i + 1}`),
  );
  r.stop();
});

test('inline: resizing while a long reply streams tears and doubles nothing', async () => {
  const { vt, r } = await setup('inline', 60, 16);
  const { push } = streamingReply(r, (i) => `${tagOf(i)} some text`);
  push(0, 60);
  await vt.flush(); // the terminal has drawn what was written before it is resized
  vt.resize(40, 16);
  await resized(r);
  await vt.flush();
  push(60, 120);
  await vt.flush();
  vt.resize(70, 12);
  await resized(r);
  await vt.flush();
  push(120, 150);
  await vt.flush();
  assertEachOnce(vt, 150, (i) => `${tagOf(i)} `);
  assert.equal(vt.viewport()[11], '>');
  r.stop();
});

test('inline: rows the terminal rewraps at a resize (a footer padded with spaces) are reckoned as it does: nothing doubled', async () => {
  // A padded row's spaces are cells the terminal keeps and rewraps; the renderer never writes them.
  class Padded {
    render(w: number) {
      return [' status'.padEnd(w), `> ${CURSOR_MARKER}`];
    }
  }
  for (const sizes of [
    [
      [80, 30],
      [100, 30],
    ],
    [
      [80, 25],
      [100, 30],
    ],
    [
      [100, 25],
      [100, 30],
    ],
  ]) {
    const vt = new VirtualTerminal(100, 30, { lineFeedReturns: true });
    const r = new Renderer(vt, { mode: 'inline' });
    r.setFooter([new Padded()]);
    await r.start();
    // 98 columns: one row at 100, two at 80.
    const { push } = streamingReply(
      r,
      (i) => `${tagOf(i)} the quick brown fox jumps over the lazy dog again and again until the line wraps somewhere`,
    );
    push(0, 60);
    await vt.flush();
    let n = 60;
    for (const [cols, rows] of sizes) {
      vt.resize(cols!, rows!);
      await resized(r);
      await vt.flush();
      push(n, n + 10);
      n += 10;
      await vt.flush();
    }
    assertEachOnce(vt, n, (i) => `${tagOf(i)} `);
    r.stop();
  }
});

test('inline: a wrapped line half in the scrollback when the terminal is resized is drawn once, not its head twice', async () => {
  const { vt, r } = await setup('inline', 60, 16);
  // Up to 64 columns: some lines wrap at 60, more at 30, so some straddle the top of the screen.
  const { reply, push } = streamingReply(r, (i) => `${tagOf(i)} ${'some text '.repeat(i % 7)}`);
  push(0, 40);
  await vt.flush();
  vt.resize(30, 16);
  await new Promise((res) => setTimeout(res, 700));
  await vt.flush();
  push(40, 80);
  await vt.flush();
  vt.resize(70, 12);
  await new Promise((res) => setTimeout(res, 700));
  await vt.flush();
  push(80, 100);
  await vt.flush();
  assertEachOnce(vt, 100);
  reply.final = true;
  r.transcript.changed(reply);
  r.renderNow();
  await vt.flush();
  const after = vt.logicalLines().join('\n');
  for (let i = 0; i < 100; i++) {
    const tag = `L${String(i).padStart(3, '0')}`;
    assert.equal(after.split(tag).length - 1, 1, `${tag} exactly once after the commit:\n${after}`);
  }
  assert.equal(vt.viewport()[11], '>');
  r.stop();
});

test('inline: a line whose head went into the scrollback goes on after it when the terminal widens, its punctuation not drawn twice', async () => {
  for (const cols of [30, 60]) {
    const { vt, r } = await setup('inline', 20, 6);
    const { reply } = streamingReply(r, () => '');
    reply.text = 'aa, bb. cc, dd. ee, ff. gg, hh. ii, jj. kk, ll. mm, nn. oo, pp. qq, rr.\n';
    r.transcript.changed(reply);
    r.renderNow();
    await vt.flush();
    assert.equal(vt.scrollback().length, 1, 'the head of the line is in the scrollback');
    vt.resize(cols, 6);
    await resized(r);
    reply.final = true;
    r.transcript.changed(reply);
    r.renderNow();
    r.stop();
    await vt.flush();
    const text = vt.logicalLines().join(' ').replace(/\s+/g, ' ').trim();
    assert.equal(text, reply.text.trim(), `${cols} columns`);
  }
});

test('inline: a blank line below a line gone into the scrollback at a resize stays live, and what fills it later is shown', async () => {
  const { vt, r } = await setup('inline', 26, 5);
  const reply = new Text('L0000 w7 w8 w9 w10 w11 w12\n'); // one row at 26 columns, three at 12, the top one off screen
  r.transcript.add(reply);
  r.renderNow();
  await vt.flush();
  vt.resize(12, 5);
  await new Promise((res) => setTimeout(res, 700));
  await vt.flush();
  reply.text += 'L0001 next\n';
  r.transcript.changed(reply);
  r.renderNow();
  await vt.flush();
  const all = vt.logicalLines().join('\n');
  assert.equal(all.split('L0000').length - 1, 1, all);
  assert.equal(all.split('L0001 next').length - 1, 1, all);
  assert.deepEqual(vt.viewport().slice(0, 4), ['L0001 next', '', ' clm [mock]', '>']);
  r.stop();
});

/** Inline on 100×30, a reply of `L000 x`, blank, `L001 x`, … streamed; then the terminal shrinks to 20×5. */
async function shrinkWhileStreaming(o: { duringResize: boolean }) {
  const vt = new VirtualTerminal(100, 30, { lineFeedReturns: true });
  const r = new Renderer(vt, { mode: 'inline' });
  r.setFooter([new Footer()]); // the status bar padded to the width: five rows at 20 columns
  await r.start();
  const reply = new Text('');
  r.transcript.add(reply);
  const push = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      reply.text += `${tagOf(i)} x\n\n`;
      r.transcript.changed(reply);
      r.renderNow();
    }
  };
  push(0, 40);
  await vt.flush();
  vt.resize(20, 5);
  if (o.duringResize) push(40, 45);
  await resized(r);
  await vt.flush();
  push(o.duringResize ? 45 : 40, 80);
  await vt.flush();
  assertEachOnce(vt, 80);
  assert.deepEqual(vt.viewport().slice(-2), [' clm [mock] idle', '>']);
  r.stop();
}

test('inline: a status bar the terminal rewraps into the scrollback at a shrink is not taken for transcript rows', async () => {
  await shrinkWhileStreaming({ duringResize: true });
});

test('inline: the blank line a reply streams into, pushed into the scrollback by a shrink, stays live', async () => {
  await shrinkWhileStreaming({ duringResize: false });
});

test('inline: a terminal that answers the cursor query late (400 ms) after a resize loses and doubles nothing', async () => {
  const { vt, r } = await setup('inline', 60, 16);
  vt.answerDelayMs = 400; // fast at the start, slow later
  // Up to 45 columns: one row at 60, two once the terminal is narrowed to 30 (it rewraps them).
  const { push } = streamingReply(r, (i) => `${tagOf(i)} ${'text '.repeat(i % 9)}`);
  push(0, 6); // the screen not yet full: rewrapped rows push the region down
  await vt.flush();
  vt.resize(30, 16);
  push(6, 10); // streaming goes on while the report is awaited
  await new Promise((res) => setTimeout(res, 700));
  await vt.flush();
  push(10, 80);
  await vt.flush();
  assertEachOnce(vt, 80);
  assert.equal(vt.viewport()[15], '>');
  r.stop();
});

test('inline: the footer follows the content while the screen is not yet full; stop leaves the cursor below the transcript', async () => {
  const { vt, r, footer } = await setup('inline', 40, 12);
  const reply = new Text('partial');
  r.transcript.add(done('you> hi'));
  r.transcript.add(reply);
  r.renderNow();
  await vt.flush();
  assert.deepEqual(
    vt
      .viewport()
      .slice(0, 4)
      .map((l) => l.trim()),
    ['you> hi', 'partial', 'clm [mock] idle', '>'],
  );
  reply.text = 'partial answer\nsecond line';
  r.transcript.changed(reply);
  footer.input = 'next';
  r.renderNow();
  await vt.flush();
  assert.deepEqual(
    vt
      .viewport()
      .slice(0, 5)
      .map((l) => l.trim()),
    ['you> hi', 'partial answer', 'second line', 'clm [mock] idle', '> next'],
  );
  r.stop();
  await vt.flush();
  assert.deepEqual(vt.viewport().slice(0, 4), ['you> hi', 'partial answer', 'second line', '']);
  assert.deepEqual(vt.cursor(), { row: 3, col: 0 });
  vt.write('session: abc');
  await vt.flush();
  assert.equal(vt.viewport()[3], 'session: abc');
});

test('inline: a terminal that does not answer the cursor query still gets a working screen', async () => {
  const { vt, r } = await setup('inline', 40, 8, { answerQueries: false });
  for (let i = 0; i < 20; i++) r.transcript.add(done(`b${i}`));
  r.renderNow();
  await vt.flush();
  const all = [...vt.scrollback(), ...vt.viewport()];
  for (let i = 0; i < 20; i++) assert.equal(all.filter((l) => l === `b${i}`).length, 1);
  assert.equal(vt.viewport()[7], '>');
  r.stop();
});

test('inline: after the transcript is cleared (/clear), new blocks are written below the old ones', async () => {
  const { vt, r } = await setup('inline', 40, 10);
  const old = done('old block');
  r.transcript.add(old);
  r.renderNow();
  assert.ok(r.isCommitted(old));
  r.transcript.clear();
  r.transcript.add(done('[new session]'));
  r.transcript.add(done('fresh block'));
  r.renderNow();
  await vt.flush();
  assert.deepEqual(vt.viewport().slice(0, 3), ['old block', '[new session]', 'fresh block']);
});

test('inline: resume after a suspend starts the live region below what the shell printed', async () => {
  const { vt, r } = await setup('inline', 40, 10);
  r.transcript.add(done('before'));
  r.renderNow();
  await vt.flush();
  // The shell took over: it printed below the footer.
  vt.write('\x1b[5;1H[1]+  Stopped\r\n$ fg\r\n');
  await vt.flush();
  await r.resume();
  await vt.flush();
  const v = vt.viewport();
  assert.equal(v[0], 'before');
  assert.equal(v[4], '[1]+  Stopped');
  assert.equal(v[5], '$ fg');
  assert.equal(v[6]!.trim(), 'clm [mock] idle');
  assert.equal(v[7], '>');
  r.stop();
});

test('full screen: a redraw after the region has been scrolled (margins set) repaints right', async () => {
  const { vt, r, footer } = await setup('fullscreen', 40, 8);
  const blocks: Block[] = [];
  for (let i = 0; i < 20; i++) {
    const b = done(`row ${i}`);
    blocks.push(b);
    r.transcript.add(b);
    r.renderNow();
  }
  assert.ok(r.stats.scrolls > 0);
  r.redraw();
  r.renderNow();
  await vt.flush();
  assert.deepEqual(vt.viewport(), await fresh('fullscreen', blocks, footer, 40, 8));
});

test('full screen: a resize storm is drawn once, after it settles', async () => {
  const { clock, advance } = fakeClock();
  const vt = new VirtualTerminal(60, 20);
  const r = new Renderer(vt, { mode: 'fullscreen', clock });
  const footer = new Footer();
  r.setFooter([footer]);
  await r.start();
  const blocks = Array.from({ length: 50 }, (_, i) => done(`entry ${i}`));
  for (const b of blocks) r.transcript.add(b);
  r.renderNow();
  const repaints = r.stats.fullRepaints;
  for (let i = 0; i < 12; i++) {
    vt.resize(40 + i, 15 + (i % 4));
    advance(8);
  }
  assert.equal(r.stats.fullRepaints, repaints, 'nothing drawn while the size keeps changing');
  advance(100);
  assert.equal(r.stats.fullRepaints, repaints + 1);
  await vt.flush();
  assert.deepEqual(vt.viewport(), await fresh('fullscreen', blocks, footer, 51, 18));
  r.stop();
});

// ---- bytes per frame ---------------------------------------------------------------------------

class SpinnerFooter {
  spin = '|';
  render(w: number) {
    return [paint(` clm ${this.spin} busy`.padEnd(w).slice(0, w), { bg: 'blue', fg: 'black' }), `> ${CURSOR_MARKER}`];
  }
}

test('a frame where only the spinner changes writes that cell and the shortest moves there and back', async () => {
  for (const mode of ['fullscreen', 'inline'] as const) {
    const vt = new VirtualTerminal(60, 10, { lineFeedReturns: true });
    const r = new Renderer(vt, { mode });
    const footer = new SpinnerFooter();
    r.setFooter([footer]);
    await r.start();
    for (let i = 0; i < 20; i++) r.transcript.add(done(`line ${i}`));
    r.renderNow();
    await vt.flush();
    vt.takeWritten();
    footer.spin = '/';
    r.renderNow();
    const w = vt.takeWritten();
    // To the spinner (row 8, column 5) from the cursor in the input box (row 9, column 2): CUP in
    // full screen, up and right inline; then the cell, the short reset, and a vertical tab (a row
    // down, the column kept, one byte where the tty turns a line feed into two) and CHA back.
    const there = mode === 'fullscreen' ? '\x1b[9;6H' : '\x1b[A\x1b[6G';
    assert.equal(w, `\x1b[?2026h${there}\x1b[30;44m/\x1b[m\v\x1b[3G\x1b[?2026l`, mode);
    await vt.flush();
    assert.equal(vt.viewport()[8]!.slice(0, 10), ' clm / bus', mode);
    assert.deepEqual(vt.cursor(), { row: 9, col: 2 }, mode);
    r.stop();
  }
});

test('inline: rows added above the footer: the growing row is written on the way up, then the rows are inserted', async () => {
  const vt = new VirtualTerminal(40, 8, { lineFeedReturns: true });
  const r = new Renderer(vt, { mode: 'inline' });
  const footer = new SpinnerFooter();
  r.setFooter([footer]);
  await r.start();
  const reply = new Text('');
  r.transcript.add(reply);
  const words = 'a streamed reply costs a few bytes per chunk and no more '.split(' ');
  let scrolled = 0;
  for (let i = 0; i < 80; i++) {
    // Several words a step: the last row grows and a new one starts in the same frame.
    for (let j = 0; j < 5; j++) reply.text += `${words[(i * 5 + j) % words.length]} `;
    r.transcript.changed(reply);
    vt.takeWritten();
    r.renderNow();
    const w = vt.takeWritten();
    // Never back up a row right after the insertion: the row above was written before it.
    assert.ok(!/\x1b\[\d*L\x1b\[A/.test(w), `step ${i}: ${JSON.stringify(w)}`);
    // The screen is made to scroll with vertical tabs (one byte each on a tty), not line feeds
    // (CR LF on the wire) nor CSI S (its rows would not reach the scrollback in every terminal).
    const scroll = /^\x1b\[\?2026h([\n\v]+)\x1b\[\d*A/.exec(w);
    if (scroll) {
      assert.ok(/^\v+$/.test(scroll[1]!), `step ${i}: ${JSON.stringify(w)}`);
      scrolled++;
    }
    assert.ok(!/\x1b\[\d*S/.test(w), `step ${i}: ${JSON.stringify(w)}`);
  }
  assert.ok(scrolled > 10, `frames that scrolled: ${scrolled}`);
  await vt.flush();
  const blocks = [Object.assign(new Text(reply.text), { final: false })];
  const want = await fresh('inline', blocks, footer as unknown as Footer, 40, 8);
  assert.deepEqual(vt.viewport(), want);
  r.stop();
});
