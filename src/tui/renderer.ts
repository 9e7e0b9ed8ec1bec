// The renderer: a transcript of blocks and fixed rows below it (the footer), drawn on a terminal
// in one of two modes, writing only what changed since the last frame, inside synchronized output.
//
// Full screen (alternate screen): the transcript is a scrollable viewport above the footer. When
// the viewport moves by fewer rows than it has, the terminal scrolls the region in place (margins +
// SU/SD) and only the rows that came in are written. Scrolled up, the viewport holds still while
// the transcript grows.
//
// Inline (normal screen): finished blocks are written once and left to the terminal's scrollback;
// only the live region (unfinished blocks and the footer) is redrawn in place, with relative cursor
// moves from where the region started. The region grows by line feeds at its bottom (the terminal
// scrolls, the top goes into scrollback) and an insert-line above the footer, so the footer is not
// redrawn as the text above it grows. Rows that scrolled off are never touched again.

import {
  cursorTo,
  cursorUp,
  CURSOR_HIDE,
  CURSOR_SHOW,
  ERASE_DOWN,
  ERASE_LINE_RIGHT,
  insertLines,
  RESET_MARGINS,
  scrollDown,
  scrollUp,
  setMargins,
  SGR_RESET,
  SYNC_BEGIN,
  SYNC_END,
} from './escapes.js';
import { cursorMove, lineFeeds } from './cursor-move.js';
import { diffRows, EMPTY_ROW, parseRow, type Row, rowWithoutColor, writeCells } from './row.js';
import { wireTransition } from './spans.js';
import { DEFAULT_STYLE, type Style } from './style.js';
import type { Terminal } from './terminal.js';
import { type Component, Transcript } from './transcript.js';

export type ScreenMode = 'fullscreen' | 'inline';

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface RendererOptions {
  mode: ScreenMode;
  /** Least time between frames drawn for content (streaming); input-driven frames never wait. Default 50 ms. */
  frameMs?: number;
  /** Wheel reports in full-screen mode (default true; never in inline mode). */
  mouse?: boolean;
  /** Bracketed paste (default true). */
  bracketedPaste?: boolean;
  /** modifyOtherKeys, for Shift/Alt+Enter (default true). */
  modifyOtherKeys?: boolean;
  /** Colours (default true); without, a background is drawn in inverse video (NO_COLOR). */
  color?: boolean;
  clock?: Clock;
  /** The transcript to draw (default: a new one); lets a screen fill it before it starts, or move it to another renderer. */
  transcript?: Transcript;
}

export interface RenderStats {
  /** Frames that wrote something. */
  frames: number;
  bytes: number;
  /** Frames drawn from scratch (start, resize, redraw). */
  fullRepaints: number;
  /** Region scrolls (full screen) and line insertions (inline). */
  scrolls: number;
  /** Time spent composing and diffing frames, ms. */
  renderMs: number;
}

const RESIZE_SETTLE_MS = 30;
/** Inline, a resize is drawn once the size has held this long (a key repeats every ~35 ms). */
const INLINE_RESIZE_SETTLE_MS = 100;
/**
 * Erase from the cursor (at column 0 of screen row `row`) to the end of the screen. From the
 * top-left corner that is a clear screen, which tmux (scroll-on-clear) first copies into the
 * scrollback, where the rows drawn again next would then be twice: there the first row is
 * erased on its own.
 */
function eraseDown(row: number): string {
  return row > 0 ? ERASE_DOWN : `${ERASE_LINE_RIGHT}\x1b[B${ERASE_DOWN}\x1b[A`;
}

// How long an inline resize waits for the cursor report of a terminal that answered one before.
// Drawing guessing where the rewrapped region went can erase transcript rows, so a late answer
// (a slow link, a loaded machine) is worth waiting for; streaming only pauses meanwhile.
const RESIZE_REPORT_MS = 2000;
const rowsOf = (n: number): Row[] => Array.from({ length: n }, () => EMPTY_ROW);
const NONSPACE = /\S/gu;
const countInk = (rows: readonly Row[]): number => {
  let n = 0;
  for (const r of rows) for (const c of r.cells) if (c !== '' && c !== ' ') n += c.match(NONSPACE)?.length ?? 0;
  return n;
};
/**
 * The line without the cells holding its first `n` non-space characters (and the blanks after
 * them): what is left of a line whose head is already in the scrollback.
 */
const dropInk = (line: string, width: number, n: number): string => {
  const row = parseRow(line, width);
  let i = 0;
  for (let ink = 0; i < row.cells.length && ink < n; i++) ink += row.cells[i]!.match(NONSPACE)?.length ?? 0;
  while (i < row.cells.length && (row.cells[i] === '' || (row.cells[i] === ' ' && row.styles[i] === DEFAULT_STYLE))) i++;
  let out = '',
    st = DEFAULT_STYLE;
  for (; i < row.cells.length; i++) {
    const c = row.cells[i]!;
    if (c === '') continue;
    out += wireTransition(st, row.styles[i]!) + c;
    st = row.styles[i]!;
  }
  return out + wireTransition(st, DEFAULT_STYLE);
};

export class Renderer {
  readonly transcript: Transcript;
  readonly mode: ScreenMode;
  readonly stats: RenderStats = { frames: 0, bytes: 0, fullRepaints: 0, scrolls: 0, renderMs: 0 };
  private footer: Component[] = [];
  private readonly opts: Required<Omit<RendererOptions, 'clock' | 'transcript'>>;
  private readonly clock: Clock;
  private running = false;
  private timer: unknown = null;
  private timerAt = Infinity;
  private lastFrameAt = -Infinity;
  private offInput: (() => void) | null = null;
  private offResize: (() => void) | null = null;

  // What the terminal shows.
  private prevRows: Row[] = [];
  private prevLines: string[] = [];
  private width = 0;
  private height = 0;
  private repaint = true;
  private style: Style = DEFAULT_STYLE;
  /** Hardware cursor: full screen, absolute row; inline, frame row. col -1 = unknown. */
  private hwRow = -1;
  private hwCol = -1;
  private cursorShown: boolean | null = null;

  // Full screen.
  private following = true;
  private anchorTop = 0;
  private prevTop = 0;
  private prevVh = 0;
  private margins = -1;

  // Inline.
  private regionTop = 0;
  private frozen = 0;
  /** Non-space characters on the frozen rows (their cells are let go; resize needs the count). */
  private frozenInk = 0;
  /** Blank frozen rows after the last one with ink (a blank line is one row at any width). */
  private frozenBlank = 0;
  private hiddenDoc = 0;
  /**
   * Non-space characters at the start of doc line `hiddenDoc` that frozen rows already show (a
   * wrapped line straddling the top of the screen at a resize): the frame shows only the rest.
   * frozenInk counts them too.
   */
  private hiddenInk = 0;
  private pendingSkipInk = -1;
  private committed = 0;
  private committedSet = new WeakSet<object>();
  private footerStart = 0;
  private prevFooterLen = -1;
  private resizing = false;
  /** The terminal has answered a cursor query (inline start or resume). */
  private answersReports = false;
  private resizeAgain = false;

  constructor(
    private readonly terminal: Terminal,
    options: RendererOptions,
  ) {
    this.mode = options.mode;
    this.transcript = options.transcript ?? new Transcript();
    this.clock = options.clock ?? realClock;
    this.opts = {
      mode: options.mode,
      frameMs: options.frameMs ?? 50,
      mouse: options.mouse ?? true,
      bracketedPaste: options.bracketedPaste ?? true,
      modifyOtherKeys: options.modifyOtherKeys ?? true,
      color: options.color ?? true,
    };
  }

  /** The components drawn below the transcript, top to bottom (status bar, input box, ...). */
  setFooter(components: Component[]): void {
    this.footer = components;
    this.requestRender(true);
  }

  /** Inline mode: the block is in the scrollback for good (changing it shows nothing). */
  isCommitted(block: object): boolean {
    return this.committedSet.has(block);
  }

  get isFollowing(): boolean {
    return this.following;
  }

  /** Full screen, scrolled up: transcript lines below the view (0 while following the end). */
  get linesBelow(): number {
    if (this.mode !== 'fullscreen' || this.following) return 0;
    const W = this.width || this.terminal.columns;
    const vh = this.prevVh || Math.max(1, this.terminal.rows - 1);
    return Math.max(0, this.transcript.lineCount(W) - this.anchorTop - vh);
  }

  /** A resize is being taken in (inline: waiting for the size to hold, or for the cursor report); frames wait for it. */
  get resizeInProgress(): boolean {
    return this.resizePending || this.resizing;
  }

  /** Rows of the transcript viewport in the last frame (full screen). */
  get viewportHeight(): number {
    return this.prevVh;
  }

  /** Turn on the terminal modes and draw the first frame. */
  async start(): Promise<void> {
    const inline = this.mode === 'inline';
    this.terminal.enter({
      raw: true,
      altScreen: !inline,
      bracketedPaste: this.opts.bracketedPaste,
      mouse: !inline && this.opts.mouse,
      modifyOtherKeys: this.opts.modifyOtherKeys,
    });
    this.running = true;
    this.offResize = this.terminal.onResize(() => this.onResize());
    this.width = this.terminal.columns;
    this.height = this.terminal.rows;
    if (inline) {
      // No frame until the region's place is known (one asked for meanwhile is drawn after).
      this.resizing = true;
      let pos: { row: number; col: number } | null;
      try {
        pos = await this.terminal.queryCursorPosition();
      } finally {
        this.resizing = false;
      }
      if (pos) this.answersReports = true;
      if (!this.running) return;
      let pre = '';
      if (pos) {
        this.regionTop = pos.row - 1;
        if (pos.col > 1) {
          // Start on a line of our own.
          pre = '\r\n';
          this.regionTop = Math.min(this.height - 1, this.regionTop + 1);
        }
      } else {
        // No answer: make the position known by going to the bottom row (what was on screen
        // scrolls into the scrollback, nothing is lost).
        pre = `\r${'\n'.repeat(Math.max(0, this.height - 1))}`;
        this.regionTop = this.height - 1;
      }
      if (pre) this.emit(pre);
      this.hwRow = 0;
      this.hwCol = 0;
      this.terminal.setRestorePreamble(() => this.inlineRestoreBytes());
    }
    this.renderNow();
  }

  /**
   * Draw the last frame and give the terminal back. Inline: every block is written into the
   * scrollback, the footer is cleared and the cursor is left on the line below.
   */
  stop(): void {
    if (!this.running) return;
    this.cancelTimer();
    if (this.resizeTimer !== null) {
      this.clock.clearTimeout(this.resizeTimer);
      this.resizeTimer = null;
    }
    const pending = this.resizePending;
    this.resizePending = false;
    if (this.mode === 'inline' && !this.resizing && !pending && this.terminal.isActive) {
      this.footer = [];
      this.renderNow(true);
      // Leave the cursor at the start of the line below the transcript.
      if (this.hwRow < 0) this.emit(`\r${'\n'.repeat(-this.hwRow)}`);
      else if (this.hwCol !== 0) this.emit('\r');
    }
    this.running = false;
    this.offResize?.();
    this.offInput?.();
    this.terminal.setRestorePreamble(null);
    this.terminal.restore();
  }

  /**
   * Ask for a frame. Urgent frames (a key was typed) are drawn on the next turn of the event loop;
   * others (streamed text) at most once per frameMs.
   */
  requestRender(urgent = false): void {
    if (!this.running) return;
    const now = this.clock.now();
    const at = urgent ? now : Math.max(now, this.lastFrameAt + this.opts.frameMs);
    if (this.timer !== null && this.timerAt <= at) return;
    this.cancelTimer();
    this.timerAt = at;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Infinity;
        this.renderNow();
      },
      Math.max(0, at - now),
    );
  }

  private cancelTimer(): void {
    if (this.timer !== null) {
      this.clock.clearTimeout(this.timer);
      this.timer = null;
      this.timerAt = Infinity;
    }
  }

  /** Forget what is on screen and draw everything again (Ctrl-L). */
  redraw(): void {
    this.repaint = true;
    this.requestRender(true);
  }

  /**
   * The terminal was taken back after a suspend (Ctrl-Z, then fg): full screen draws everything
   * again; inline starts its live region afresh below whatever the shell printed meanwhile.
   */
  async resume(): Promise<void> {
    if (!this.running) return;
    if (this.mode === 'fullscreen') {
      this.redraw();
      return;
    }
    this.resizing = true;
    try {
      const pos = await this.terminal.queryCursorPosition(this.answersReports ? RESIZE_REPORT_MS : undefined);
      if (pos) this.answersReports = true;
      this.height = this.terminal.rows;
      this.width = this.terminal.columns;
      let pre = '';
      if (pos) {
        this.regionTop = pos.row - 1;
        if (pos.col > 1) {
          pre = '\r\n';
          this.regionTop = Math.min(this.height - 1, this.regionTop + 1);
        }
      } else {
        pre = `\r${'\n'.repeat(Math.max(0, this.height - 1))}`;
        this.regionTop = this.height - 1;
      }
      if (pre) this.emit(pre);
      this.prevRows = [];
      this.prevLines = [];
      this.frozen = 0;
      this.frozenInk = 0;
      this.frozenBlank = 0;
      this.hiddenDoc = 0;
      this.hiddenInk = 0;
      this.pendingSkipInk = -1;
      this.prevFooterLen = -1;
      this.hwRow = 0;
      this.hwCol = 0;
      this.cursorShown = null;
      this.style = DEFAULT_STYLE;
    } finally {
      this.resizing = false;
    }
    this.renderNow();
  }

  // ---- scrolling (full screen) -------------------------------------------------------------

  /** Move the viewport by n lines (negative: up, towards the start). */
  scrollBy(n: number): void {
    if (this.mode !== 'fullscreen' || n === 0) return;
    const vh = Math.max(1, this.prevVh || this.height - 1);
    const maxTop = Math.max(0, this.transcript.lineCount(this.width || this.terminal.columns) - vh);
    const top = this.following ? maxTop : Math.min(this.anchorTop, maxTop);
    const next = Math.max(0, Math.min(maxTop, top + n));
    this.following = next >= maxTop;
    this.anchorTop = next;
    this.requestRender(true);
  }

  pageUp(): void {
    this.scrollBy(-Math.max(1, (this.prevVh || this.height) - 1));
  }

  pageDown(): void {
    this.scrollBy(Math.max(1, (this.prevVh || this.height) - 1));
  }

  scrollToBottom(): void {
    this.following = true;
    this.requestRender(true);
  }

  scrollToTop(): void {
    if (this.mode !== 'fullscreen') return;
    this.following = this.transcript.lineCount(this.width || this.terminal.columns) <= (this.prevVh || this.height);
    this.anchorTop = 0;
    this.requestRender(true);
  }

  // ---- frames ------------------------------------------------------------------------------

  private onResize(): void {
    if (this.mode === 'inline') {
      // Nothing is drawn until the size has held for a moment: a frame drawn for a size the
      // terminal no longer has (a window being dragged, a pane resized with a key held down)
      // lands where its rows are not, and rows it pushes into the scrollback stay there.
      this.resizePending = true;
      if (this.resizeTimer !== null) this.clock.clearTimeout(this.resizeTimer);
      this.resizeTimer = this.clock.setTimeout(() => {
        this.resizeTimer = null;
        this.resizePending = false;
        void this.resizeInline();
      }, INLINE_RESIZE_SETTLE_MS);
      return;
    }
    // A resize reflows every block: wait for the storm (a window being dragged) to pass.
    this.repaint = true;
    if (this.resizeTimer !== null) this.clock.clearTimeout(this.resizeTimer);
    this.resizeTimer = this.clock.setTimeout(() => {
      this.resizeTimer = null;
      this.requestRender(true);
    }, RESIZE_SETTLE_MS);
  }

  private resizeTimer: unknown = null;
  /** Inline: a resize is waiting for the size to hold (no frame meanwhile). */
  private resizePending = false;

  /** Draw a frame now (tests, and the timer). `final`: inline, commit every block. */
  renderNow(final = false): void {
    // A terminal restored behind the renderer's back (a signal, a crash) is not drawn on again.
    if (!this.running || this.resizing || this.resizePending || !this.terminal.isActive) return;
    this.cancelTimer();
    const t0 = performance.now();
    const out = this.mode === 'fullscreen' ? this.frameFullscreen() : this.frameInline(final);
    this.stats.renderMs += performance.now() - t0;
    this.lastFrameAt = this.clock.now();
    if (out) {
      this.emit(SYNC_BEGIN + out + SYNC_END);
      this.stats.frames++;
    }
  }

  private emit(s: string): void {
    this.stats.bytes += s.length + (/[^\x00-\x7f]/.test(s) ? Buffer.byteLength(s) - s.length : 0);
    this.terminal.write(s);
  }

  /** A line as the cells to draw. */
  private row(line: string, width: number): Row {
    const r = parseRow(line, width);
    return this.opts.color ? r : rowWithoutColor(r);
  }

  private footerLines(width: number, max: number): string[] {
    const lines: string[] = [];
    for (const c of this.footer) for (const l of c.render(width)) lines.push(l);
    return lines.length > max ? lines.slice(lines.length - max) : lines;
  }

  /** Switch the terminal to the default style (needed before erasing or scrolling). */
  private plain(): string {
    if (this.style === DEFAULT_STYLE) return '';
    const t = wireTransition(this.style, DEFAULT_STYLE);
    this.style = DEFAULT_STYLE;
    return t;
  }

  private writeRowChange(prev: Row, row: Row, move: (col: number) => string, width: number): string {
    const ch = diffRows(prev, row);
    if (!ch) return '';
    let out = move(ch.from);
    const w = writeCells(row, ch.from, ch.to, this.style);
    out += w.out;
    this.style = w.style;
    this.hwCol = ch.to >= width ? -1 : ch.to;
    if (ch.eraseAfter) out += this.plain() + ERASE_LINE_RIGHT;
    return out;
  }

  private placeCursor(rows: Row[], move: (row: number, col: number) => string): string {
    let out = '';
    let at = -1;
    for (let r = rows.length - 1; r >= 0; r--)
      if (rows[r]!.cursor >= 0) {
        at = r;
        break;
      }
    if (at >= 0) {
      out += move(at, rows[at]!.cursor);
      if (this.cursorShown !== true) {
        out += CURSOR_SHOW;
        this.cursorShown = true;
      }
    } else if (this.cursorShown !== false) {
      out += CURSOR_HIDE;
      this.cursorShown = false;
    }
    return out;
  }

  // ---- full screen -------------------------------------------------------------------------

  private moveAbs(row: number, col: number): string {
    if (this.hwRow === row && this.hwCol === col) return '';
    // A line feed moves down without scrolling except on the bottom margin (or the last row).
    // (margins: 0 = the whole screen, -1 = not known, so no line feeds).
    // Up and down moves stop at a margin they cross, so they stay on their side of the bottom one.
    const bottom = this.margins > 0 ? this.margins - 1 : this.height - 1;
    const rowsSafe = this.hwRow >= 0 && this.margins >= 0 && !(this.hwRow <= bottom && row > bottom);
    const out = cursorMove(this.hwRow, this.hwCol, row, col, {
      lineFeedReturns: this.terminal.lineFeedReturns === true,
      lineFeedsSafe: rowsSafe && row < this.height,
      rowsSafe,
      absolute: true,
    });
    this.hwRow = row;
    this.hwCol = col;
    return out;
  }

  private frameFullscreen(): string {
    const W = Math.max(1, this.terminal.columns);
    const H = Math.max(1, this.terminal.rows);
    const foot = this.footerLines(W, Math.max(0, H - 1));
    const vh = H - foot.length;
    const total = this.transcript.lineCount(W);
    const maxTop = Math.max(0, total - vh);
    if (!this.following && this.anchorTop >= maxTop) this.following = true;
    const top = this.following ? maxTop : this.anchorTop;
    const lines = this.transcript.lines(W, top, top + vh);
    while (lines.length < vh) lines.push('');
    for (const l of foot) lines.push(l);

    let out = '';
    const sizeChanged = W !== this.width || H !== this.height;
    if (this.repaint || sizeChanged || this.prevRows.length !== H) {
      this.repaint = false;
      this.stats.fullRepaints++;
      this.prevRows = rowsOf(H);
      // Force every row to be written: an unknown screen is not a blank one.
      this.prevLines = new Array<string>(H).fill('\u0000');
      this.hwRow = -1;
      this.cursorShown = null;
      this.width = W;
      this.height = H;
      // Margins back to the whole screen (a resize may have left old ones in force).
      out += SGR_RESET + RESET_MARGINS;
      this.margins = 0;
      this.style = DEFAULT_STYLE;
      for (let r = 0; r < H; r++) out += this.moveAbs(r, 0) + ERASE_LINE_RIGHT;
    } else {
      const d = top - this.prevTop;
      const region = Math.min(vh, this.prevVh);
      if (d !== 0 && Math.abs(d) < region) {
        if (this.margins !== region) {
          out += this.plain() + setMargins(0, region - 1);
          this.margins = region;
          this.hwRow = -1;
        }
        out += this.plain() + (d > 0 ? scrollUp(d) : scrollDown(-d));
        this.stats.scrolls++;
        const rows = this.prevRows,
          ls = this.prevLines;
        if (d > 0) {
          for (let r = 0; r < region - d; r++) {
            rows[r] = rows[r + d]!;
            ls[r] = ls[r + d]!;
          }
          for (let r = region - d; r < region; r++) {
            rows[r] = EMPTY_ROW;
            ls[r] = '';
          }
        } else {
          for (let r = region - 1; r >= -d; r--) {
            rows[r] = rows[r + d]!;
            ls[r] = ls[r + d]!;
          }
          for (let r = 0; r < -d; r++) {
            rows[r] = EMPTY_ROW;
            ls[r] = '';
          }
        }
      }
    }
    const rows: Row[] = new Array(H);
    for (let r = 0; r < H; r++) {
      const line = lines[r]!;
      if (line === this.prevLines[r]) {
        rows[r] = this.prevRows[r]!;
        continue;
      }
      const row = this.row(line, W);
      rows[r] = row;
      out += this.writeRowChange(this.prevRows[r]!, row, (c) => this.moveAbs(r, c), W);
    }
    out += this.plain();
    this.prevRows = rows;
    this.prevLines = lines;
    this.prevTop = top;
    this.prevVh = vh;
    out += this.placeCursor(rows, (r, c) => this.moveAbs(r, c));
    return out;
  }

  // ---- inline ------------------------------------------------------------------------------

  private onScreen(i: number): boolean {
    return i >= this.frozen && this.regionTop + i >= 0 && this.regionTop + i < this.height;
  }

  /** Relative move to frame row `row`, column `col` (both on screen). */
  private moveRel(row: number, col: number): string {
    // Rows below on screen: line feeds cannot scroll.
    const out = cursorMove(this.hwRow, this.hwCol, row, col, {
      lineFeedReturns: this.terminal.lineFeedReturns === true,
      lineFeedsSafe: true,
      rowsSafe: true,
      absolute: false,
    });
    this.hwRow = row;
    this.hwCol = col;
    return out;
  }

  private frameInline(final: boolean): string {
    const W = Math.max(1, this.terminal.columns);
    const H = Math.max(1, this.terminal.rows);
    this.width = W;
    this.height = H;
    const t = this.transcript;
    // Blocks removed or the transcript cleared: count the written ones again.
    if (this.committed > t.length || (this.committed > 0 && !this.committedSet.has(t.blockAt(this.committed - 1)))) {
      let c = 0;
      while (c < t.length && this.committedSet.has(t.blockAt(c))) c++;
      this.committed = c;
    }
    let commitEnd = this.committed;
    if (final) commitEnd = t.length;
    else while (commitEnd < t.length && t.blockAt(commitEnd).final) commitEnd++;
    const doc: string[] = [];
    for (let b = this.committed; b < t.length; b++) for (const l of t.blockLines(b, W)) doc.push(l);
    let commitCount = 0;
    for (let b = this.committed; b < commitEnd; b++) commitCount += t.blockLines(b, W).length;
    const footStart = doc.length;
    for (const l of this.footerLines(W, Math.max(0, H - 1))) doc.push(l);

    // After a resize, the first doc lines are the ones the frozen rows already show.
    if (this.pendingSkipInk >= 0) {
      let ink = 0,
        k = 0,
        blank = 0;
      let lastInk = footStart - 1;
      while (lastInk >= 0 && countInk([parseRow(doc[lastInk]!, W)]) === 0) lastInk--;
      while (k < footStart) {
        const n = countInk([parseRow(doc[k]!, W)]);
        if (ink + n > this.pendingSkipInk) break;
        // Blank lines after all the frozen ink: only as many as frozen rows show are behind them
        // (the others are live, and may fill as the stream goes on), and none at the end of the
        // transcript: those are where the stream goes on (the line being written), and a frozen
        // row hiding one would hide what fills it. Drawn again, such a line costs a blank row.
        if (n === 0 && ink === this.pendingSkipInk && (k > lastInk || blank++ === this.frozenBlank)) break;
        ink += n;
        k++;
      }
      this.hiddenDoc = k;
      // A line partly frozen: its rest continues on the next row, as a terminal wraps.
      this.hiddenInk = k < footStart ? this.pendingSkipInk - ink : 0;
      this.pendingSkipInk = -1;
    }
    if (this.hiddenInk > 0 && this.hiddenDoc < footStart) doc[this.hiddenDoc] = dropInk(doc[this.hiddenDoc]!, W, this.hiddenInk);
    const lines: string[] = [];
    for (let i = 0; i < this.frozen; i++) lines.push(this.prevLines[i] ?? '');
    for (let i = this.hiddenDoc; i < doc.length; i++) lines.push(doc[i]!);
    const shift = this.frozen - this.hiddenDoc; // frame row = doc line + shift
    this.footerStart = footStart + shift;

    let out = '';
    let prev = this.prevRows;
    let prevLines = this.prevLines;
    if (this.repaint) {
      // Ctrl-L: clear the live rows on screen and draw them again.
      this.repaint = false;
      this.stats.fullRepaints++;
      let first = this.frozen;
      while (first < prev.length && !this.onScreen(first)) first++;
      if (first < prev.length) {
        out += this.moveRel(first, 0) + this.plain() + eraseDown(this.regionTop + first);
        prev = prev.slice(0, first);
        prevLines = prevLines.slice(0, first);
      }
      this.cursorShown = null;
    }
    prev = prev.slice();
    prevLines = prevLines.slice();

    // Growth or shrinkage above the footer (or another unchanged tail): insert or delete rows
    // right above it, so it moves with the terminal's help and only its changed cells are drawn.
    const k = lines.length - prev.length;
    const footLen = lines.length - this.footerStart;
    if (k !== 0 && prev.length > 0) {
      let s = 0;
      const maxS = Math.min(prev.length, lines.length) - this.frozen;
      if (footLen > 0 && footLen === this.prevFooterLen && footLen <= maxS) s = footLen;
      else while (s < maxS && prevLines[prev.length - 1 - s] === lines[lines.length - 1 - s]) s++;
      if (s > 0 && Math.abs(k) < H) {
        if (k > 0) {
          const p = prev.length - s;
          const bottom = this.regionTop + prev.length - 1;
          const scrolled = Math.max(0, bottom + k - (H - 1));
          const pScreen = this.regionTop - scrolled + p;
          if (pScreen >= 0 && p >= this.frozen && this.onScreen(prev.length - 1)) {
            // Rows this growth pushes off the top are never drawn again: what changed in them
            // (the end of a half-streamed line) is written first, while they are on screen.
            for (let i = Math.max(this.frozen, -this.regionTop); i < p && this.regionTop - scrolled + i < 0; i++) {
              if (lines[i] === prevLines[i]) continue;
              const row = this.row(lines[i]!, W);
              out += this.writeRowChange(prev[i]!, row, (c) => this.moveRel(i, c), W);
              prev[i] = row;
              prevLines[i] = lines[i]!;
            }
            // The column does not matter for the line feeds (vertical tabs: one byte each, the
            // column kept), nor after IL (it homes the cursor).
            out +=
              (this.hwRow === prev.length - 1 ? '' : this.moveRel(prev.length - 1, Math.max(0, this.hwCol))) + this.plain() + lineFeeds(k);
            this.hwRow += k;
            this.regionTop -= scrolled;
            const q = p - 1;
            if (this.onScreen(q) && lines[q] !== prevLines[q]) {
              // The row above the new ones changed (the end of the growing line): written on the
              // way up, and the rows inserted from the start of the next, where that leaves the cursor.
              const row = this.row(lines[q]!, W);
              out += this.writeRowChange(prev[q]!, row, (c) => this.moveRel(q, c), W);
              prev[q] = row;
              prevLines[q] = lines[q]!;
              out += this.moveRel(p, 0) + this.plain() + insertLines(k);
              this.hwCol = 0;
            } else {
              out += cursorUp(this.hwRow - p) + insertLines(k);
              this.hwCol = -1;
            }
            this.hwRow = p;
            this.stats.scrolls++;
            prev.splice(p, 0, ...rowsOf(k));
            prevLines.splice(p, 0, ...new Array<string>(k).fill(''));
          }
        } else {
          const p = lines.length - s;
          if (p >= this.frozen && this.onScreen(p)) {
            out += this.moveRel(p, 0) + this.plain() + `\x1b[${-k === 1 ? '' : -k}M`;
            this.stats.scrolls++;
            prev.splice(p, -k);
            prevLines.splice(p, -k);
          }
        }
      }
    }

    const rows: Row[] = new Array(lines.length);
    const common = Math.min(prev.length, lines.length);
    for (let i = 0; i < common; i++) {
      if (lines[i] === prevLines[i]) {
        rows[i] = prev[i]!;
        continue;
      }
      if (!this.onScreen(i)) {
        // Off screen: the terminal keeps what it shows, and so does the frame.
        rows[i] = prev[i]!;
        lines[i] = prevLines[i]!;
        continue;
      }
      const row = this.row(lines[i]!, W);
      rows[i] = row;
      out += this.writeRowChange(prev[i]!, row, (c) => this.moveRel(i, c), W);
    }
    if (lines.length > prev.length) {
      for (let i = prev.length; i < lines.length; i++) {
        const row = this.row(lines[i]!, W);
        rows[i] = row;
        if (this.hwRow === i) out += this.moveRel(i, 0);
        else {
          // A new row below the region: a line feed from its last row (the terminal scrolls at the bottom).
          const onRow = this.terminal.lineFeedReturns && this.hwRow === i - 1;
          out += (onRow ? '' : this.moveRel(i - 1, 0)) + this.plain() + '\n';
          this.hwRow = i;
          if (this.regionTop + i > H - 1) this.regionTop = H - 1 - i;
        }
        const w = writeCells(row, 0, row.cells.length, this.style);
        out += w.out;
        this.style = w.style;
        this.hwCol = row.cells.length >= W ? -1 : row.cells.length;
      }
    } else if (lines.length < prev.length) {
      let at = Math.max(lines.length, this.frozen);
      while (at < prev.length && !this.onScreen(at)) at++;
      if (at < prev.length) out += this.moveRel(at, 0) + this.plain() + eraseDown(this.regionTop + at);
    }
    out += this.plain();
    let cursorAt = -1;
    for (let i = rows.length - 1; i >= this.frozen; i--)
      if (rows[i]!.cursor >= 0 && this.onScreen(i)) {
        cursorAt = i;
        break;
      }
    if (cursorAt >= 0) {
      out += this.moveRel(cursorAt, rows[cursorAt]!.cursor);
      if (this.cursorShown !== true) {
        out += CURSOR_SHOW;
        this.cursorShown = true;
      }
    } else {
      if (this.cursorShown !== false) {
        out += CURSOR_HIDE;
        this.cursorShown = false;
      }
      // Park on the last row, so the cursor is always inside the region.
      if (lines.length > 0 && this.hwRow >= lines.length) out += this.moveRel(lines.length - 1, 0);
    }

    this.prevFooterLen = footLen;
    // Blocks now written for good leave the frame.
    const commitRows = Math.max(0, commitCount - this.hiddenDoc);
    if (commitCount > 0) {
      if (commitCount >= this.hiddenDoc) {
        const drop = this.frozen + commitRows;
        this.prevRows = rows.slice(drop);
        this.prevLines = lines.slice(drop);
        this.regionTop += drop;
        this.hwRow -= drop;
        this.footerStart -= drop;
        this.frozen = 0;
        this.hiddenDoc = 0;
        // A partly frozen line not committed with them stays partly hidden.
        if (commitRows > 0) this.hiddenInk = 0;
        this.frozenInk = this.hiddenInk;
        this.frozenBlank = 0;
      } else {
        // Committed lines all behind frozen rows: they leave the count of what those rows show.
        this.frozenInk = Math.max(0, this.frozenInk - countInk(doc.slice(0, commitCount).map((l) => parseRow(l, W))));
        this.hiddenDoc -= commitCount;
        this.prevRows = rows;
        this.prevLines = lines;
      }
      for (let b = this.committed; b < commitEnd; b++) this.committedSet.add(t.blockAt(b));
      this.committed = commitEnd;
      t.release(commitEnd);
    } else {
      this.prevRows = rows;
      this.prevLines = lines;
    }
    // Rows that scrolled off the top are frozen: the terminal owns them now.
    // Their cells are not needed any more: a reply of thousands of lines keeps none of them.
    while (this.frozen < this.prevRows.length && this.regionTop + this.frozen < 0) {
      const n = countInk([this.prevRows[this.frozen]!]);
      this.frozenInk += n;
      this.frozenBlank = n > 0 ? 0 : this.frozenBlank + 1;
      this.prevRows[this.frozen] = EMPTY_ROW;
      this.prevLines[this.frozen] = '';
      this.frozen++;
      this.hiddenDoc++;
      this.hiddenInk = 0;
    }
    return out;
  }

  /** Bytes that clear the footer rows of an inline screen (restoring after a crash or signal). */
  private inlineRestoreBytes(): string {
    if (!this.running) return '';
    let at = Math.max(this.footerStart, this.frozen);
    while (at < this.prevRows.length && !this.onScreen(at)) at++;
    if (at >= this.prevRows.length) return '';
    return this.moveRel(at, 0) + SGR_RESET + eraseDown(this.regionTop + at);
  }

  /**
   * After the terminal changed size: find where the live region is now (the terminal may have
   * rewrapped it), keep the rows that went off screen, clear the rest and draw it at the new size.
   */
  private async resizeInline(): Promise<void> {
    if (!this.running) return;
    if (this.resizing) {
      this.resizeAgain = true;
      return;
    }
    this.resizing = true;
    this.cancelTimer();
    try {
      do {
        this.resizeAgain = false;
        const pos = await this.terminal.queryCursorPosition(this.answersReports ? RESIZE_REPORT_MS : undefined);
        if (!this.running) return;
        // Resized again meanwhile: the report may be of either size, and only the next one is sure.
        if (this.resizeAgain) continue;
        const W1 = Math.max(1, this.terminal.columns);
        const H1 = Math.max(1, this.terminal.rows);
        const W0 = this.width;
        const rewrap = W1 < W0;
        const height = (r: Row) => (rewrap ? Math.max(1, Math.ceil(r.inkWidth / W1)) : 1);
        const rows = this.prevRows;
        const curRow = Math.min(Math.max(0, this.hwRow), Math.max(0, rows.length - 1));
        const curCol = Math.max(0, this.hwCol);
        let cr: number;
        if (pos) cr = pos.row - 1;
        else cr = Math.min(H1 - 1, this.regionTop + curRow); // no answer: assume nothing moved
        // Screen row of the top of each frame row, counting up from the cursor.
        const tops: number[] = new Array(rows.length + 1);
        tops[curRow] = cr - (rewrap ? Math.floor(curCol / W1) : 0);
        for (let i = curRow - 1; i >= 0; i--) tops[i] = tops[i + 1]! - height(rows[i]!);
        for (let i = curRow + 1; i <= rows.length; i++) tops[i] = tops[i - 1]! + height(rows[i - 1] ?? EMPTY_ROW);
        // Rows gone off the top are frozen: the terminal owns them. Only transcript rows: footer
        // rows the terminal pushed into its scrollback (a padded status bar rewrapped into several
        // rows) are no part of the transcript, and their rest on screen is cleared like the others.
        let f = this.frozen;
        const docEnd = Math.min(rows.length, Math.max(this.frozen, this.footerStart));
        while (f < docEnd && tops[f]! < 0) f++;
        const y0 = rows.length === 0 ? cr : Math.max(0, Math.min(H1 - 1, tops[f]!));
        this.width = W1;
        this.height = H1;
        let ink = this.frozenInk;
        for (let i = this.frozen; i < f; i++) {
          const n = countInk([rows[i]!]);
          ink += n;
          this.frozenBlank = n > 0 ? 0 : this.frozenBlank + 1;
        }
        const out = SGR_RESET + cursorTo(y0, 0) + eraseDown(y0);
        this.style = DEFAULT_STYLE;
        this.emit(SYNC_BEGIN + out + SYNC_END);
        this.stats.fullRepaints++;
        this.prevRows = rows.slice(0, f);
        this.prevLines = this.prevLines.slice(0, f);
        this.frozen = f;
        this.frozenInk = ink;
        // The doc lines hidden behind frozen rows are found again by their content at the new width.
        this.pendingSkipInk = f > 0 || ink > 0 ? ink : -1;
        this.hiddenInk = 0;
        if (f === 0 && ink === 0) this.hiddenDoc = 0;
        this.regionTop = y0 - f;
        this.hwRow = f;
        this.hwCol = 0;
        this.cursorShown = null;
      } while (this.resizeAgain);
    } finally {
      this.resizing = false;
    }
    this.renderNow();
  }
}
