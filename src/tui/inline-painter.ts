// The inline painter (normal screen): finished blocks are written once and left to the terminal's
// scrollback; only the live region (unfinished blocks and the footer) is redrawn in place, with
// moves relative to the cursor, so a frame the terminal takes in after it was resized still lands
// where its rows are. The region grows by line feeds at its bottom (the terminal scrolls, the top
// goes into the scrollback) and an insert-line above the footer, so the footer is not redrawn as
// the text above it grows. Rows that scrolled off are never touched again. Which rows those are,
// and which transcript lines they show, is the region model's (inline-region.ts).

import { CursorTracker, cursorRow } from './cursor.js';
import { lineFeeds } from './cursor-move.js';
import { cursorTo, cursorUp, deleteLines, ERASE_DOWN, ERASE_LINE_RIGHT, insertLines, SGR_RESET, SYNC_BEGIN, SYNC_END } from './escapes.js';
import { countInk, dropInk, InlineRegion } from './inline-region.js';
import type { Painter, Scene } from './painter.js';
import { EMPTY_ROW, parseRow, type Row } from './row.js';
import { DEFAULT_STYLE } from './style.js';

// How long an inline resize waits for the cursor report of a terminal that answered one before.
// Drawing guessing where the rewrapped region went can erase transcript rows, so a late answer
// (a slow link, a loaded machine) is worth waiting for; streaming only pauses meanwhile.
const RESIZE_REPORT_MS = 2000;

/**
 * Erase from the cursor (at column 0 of screen row `row`) to the end of the screen. From the
 * top-left corner that is a clear screen, which tmux (scroll-on-clear) first copies into the
 * scrollback, where the rows drawn again next would then be twice: there the first row is
 * erased on its own.
 */
function eraseDown(row: number): string {
  return row > 0 ? ERASE_DOWN : `${ERASE_LINE_RIGHT}\x1b[B${ERASE_DOWN}\x1b[A`;
}

/** The transcript's live lines and the footer, as a frame draws them. */
interface Doc {
  /** Lines of the blocks not yet committed, then the footer's. */
  lines: string[];
  footStart: number;
  /** Blocks [committed, commitEnd) are committed by this frame, their first `commitCount` lines. */
  commitEnd: number;
  commitCount: number;
}

/** A frame being drawn. */
interface Work {
  /** The frame, row by row (frozen rows first, as placeholders). */
  lines: string[];
  /** What the terminal shows, kept up to date as bytes are written. */
  prev: Row[];
  prevLines: string[];
  out: string;
}

export class InlinePainter implements Painter {
  private readonly region = new InlineRegion();
  private readonly cursor: CursorTracker;
  /** What the terminal shows, frame row by frame row. */
  private prevRows: Row[] = [];
  private prevLines: string[] = [];
  private width = 0;
  private repaint = true;
  /** Blocks [0, committed) of the transcript are in the scrollback for good. */
  private committed = 0;
  private readonly committedSet = new WeakSet<object>();
  /** Blocks some frame has drawn (live or committed). */
  private readonly shownSet = new WeakSet<object>();
  /** Frame row of the footer's first line. */
  private footerStart = 0;
  private prevFooterLen = -1;
  /** Waiting for a cursor position report (start, resume, resize): no frame meanwhile. */
  private locating = false;
  private resizeAgain = false;
  /** The terminal has answered a cursor query. */
  private answersReports = false;

  constructor(private readonly scene: Scene) {
    this.cursor = new CursorTracker(() => scene.terminal.lineFeedReturns === true);
  }

  get busy(): boolean {
    return this.locating;
  }

  /** The block is in the scrollback for good (changing it shows nothing). */
  isCommitted(block: object): boolean {
    return this.committedSet.has(block);
  }

  async start(): Promise<boolean> {
    if (!(await this.locate())) return false;
    this.scene.terminal.setRestorePreamble(() => this.restoreBytes());
    return true;
  }

  /** The live region starts afresh below whatever the shell printed meanwhile. */
  resume(): Promise<boolean> {
    return this.locate();
  }

  redraw(): void {
    this.repaint = true;
  }

  /**
   * Where the region starts: on the cursor's row, asked of the terminal (no frame until it is
   * known), on a line of its own. What was drawn before is forgotten.
   */
  private async locate(): Promise<boolean> {
    const term = this.scene.terminal;
    this.locating = true;
    let pos: { row: number; col: number } | null;
    try {
      pos = await term.queryCursorPosition(this.answersReports ? RESIZE_REPORT_MS : undefined);
    } finally {
      this.locating = false;
    }
    if (pos) this.answersReports = true;
    if (!this.scene.running) return false;
    const H = term.rows;
    this.width = term.columns;
    this.region.height = H;
    let top = H - 1;
    let pre = '';
    if (!pos) {
      // No answer: make the position known by going to the bottom row (what was on screen
      // scrolls into the scrollback, nothing is lost).
      pre = `\r${'\n'.repeat(Math.max(0, H - 1))}`;
    } else if (pos.col > 1) {
      // Start on a line of our own.
      pre = '\r\n';
      top = Math.min(H - 1, pos.row);
    } else top = pos.row - 1;
    if (pre) this.scene.emit(pre);
    this.region.reset(top);
    this.prevRows = [];
    this.prevLines = [];
    this.prevFooterLen = -1;
    this.cursor.forget(0, 0);
    this.cursor.style = DEFAULT_STYLE;
    return true;
  }

  /** After the last frame: the bytes that leave the cursor at the start of the line below the transcript. */
  leave(): string {
    if (this.cursor.row < 0) return `\r${'\n'.repeat(-this.cursor.row)}`;
    return this.cursor.col !== 0 ? '\r' : '';
  }

  /** Bytes that clear the footer rows (restoring the terminal after a crash or signal). */
  private restoreBytes(): string {
    if (!this.scene.running) return '';
    let at = Math.max(this.footerStart, this.region.frozen);
    while (at < this.prevRows.length && !this.region.onScreen(at)) at++;
    if (at >= this.prevRows.length) return '';
    return this.moveTo(at, 0) + SGR_RESET + eraseDown(this.region.top + at);
  }

  // ---- resize --------------------------------------------------------------------------------

  /**
   * The terminal changed size and the size held: find where the live region is now (the terminal
   * may have rewrapped it), keep the rows that went off the screen, clear the rest. Resolves to
   * true when the frame at the new size is to be drawn now; false when the renderer stopped, or
   * when a resize already under way takes this one in.
   */
  async resize(): Promise<boolean> {
    if (this.locating) {
      this.resizeAgain = true;
      return false;
    }
    this.locating = true;
    try {
      do {
        this.resizeAgain = false;
        const pos = await this.scene.terminal.queryCursorPosition(this.answersReports ? RESIZE_REPORT_MS : undefined);
        if (!this.scene.running) return false;
        // Resized again meanwhile: the report may be of either size, and only the next one is sure.
        if (!this.resizeAgain) this.takeNewSize(pos ? pos.row - 1 : null);
      } while (this.resizeAgain);
    } finally {
      this.locating = false;
    }
    return true;
  }

  /** The cursor is on screen row `cursorRow` (null: not known) at the terminal's new size. */
  private takeNewSize(cursorRow: number | null): void {
    const term = this.scene.terminal;
    const W = Math.max(1, term.columns);
    const at = { row: this.cursor.row, col: this.cursor.col, docEnd: this.footerStart, oldWidth: this.width };
    const { frozen, liveTop } = this.region.resize(this.prevRows, at, W, Math.max(1, term.rows), cursorRow);
    this.width = W;
    this.scene.emit(SYNC_BEGIN + SGR_RESET + cursorTo(liveTop, 0) + eraseDown(liveTop) + SYNC_END);
    this.cursor.style = DEFAULT_STYLE;
    this.scene.stats.fullRepaints++;
    this.prevRows = this.prevRows.slice(0, frozen);
    this.prevLines = this.prevLines.slice(0, frozen);
    this.cursor.forget(frozen, 0);
  }

  // ---- frames --------------------------------------------------------------------------------

  frame(final: boolean): string {
    const W = Math.max(1, this.scene.terminal.columns);
    const H = Math.max(1, this.scene.terminal.rows);
    this.width = W;
    this.region.height = H;
    const doc = this.compose(final, W, H);
    const lines = this.frameLines(doc, W);
    const footLen = lines.length - this.footerStart;
    const w: Work = { lines, prev: this.prevRows.slice(), prevLines: this.prevLines.slice(), out: '' };
    this.clearIfAsked(w);
    this.moveTail(w, footLen, W, H);
    const rows = this.drawLines(w, W, H);
    w.out += this.cursor.plain() + this.placeCursor(rows, lines.length);
    this.prevFooterLen = footLen;
    this.keep(doc, rows, lines, W);
    return w.out;
  }

  /** Blocks removed or the transcript cleared: count the written ones again. */
  private recountCommitted(): void {
    const t = this.scene.transcript;
    if (this.committed <= t.length && (this.committed === 0 || this.committedSet.has(t.blockAt(this.committed - 1)))) return;
    let c = 0;
    while (c < t.length && this.committedSet.has(t.blockAt(c))) c++;
    this.committed = c;
  }

  /**
   * The last block, just drawn with code plain until its colours come (the highlighter thread, a
   * grammar), stays live meanwhile: in the scrollback it would stay plain. Blocks with more after
   * them (a resumed conversation's) are written as they are.
   */
  private awaitsColours(index: number): boolean {
    const t = this.scene.transcript;
    return index === t.length - 1 && t.blockAt(index).awaitsHighlighter?.() === true;
  }

  /**
   * Whether block `index` is drawn in this (not final) frame: all are but a finished one that
   * waits for its code's colours and that no frame has shown yet (a resumed conversation's reply).
   * Drawn plain, its rows beyond the screen would go into the scrollback plain for good.
   */
  private shows(index: number, W: number): boolean {
    const t = this.scene.transcript;
    const block = t.blockAt(index);
    if (this.shownSet.has(block)) return true;
    t.blockLines(index, W);
    // A block still streaming is drawn as it comes: its colours follow the text (highlight.ts).
    if (block.final && this.awaitsColours(index)) return false;
    this.shownSet.add(block);
    return true;
  }

  private compose(final: boolean, W: number, H: number): Doc {
    const t = this.scene.transcript;
    this.recountCommitted();
    const drawn: string[][] = [];
    for (let b = this.committed; b < t.length; b++) drawn.push(final || this.shows(b, W) ? t.blockLines(b, W) : []);
    let commitEnd = this.committed;
    if (final) commitEnd = t.length;
    else while (commitEnd < t.length && t.blockAt(commitEnd).final && !this.awaitsColours(commitEnd)) commitEnd++;
    const lines: string[] = [];
    let commitCount = 0;
    drawn.forEach((ls, i) => {
      if (this.committed + i < commitEnd) commitCount += ls.length;
      for (const l of ls) lines.push(l);
    });
    const footStart = lines.length;
    for (const l of this.scene.footerLines(W, Math.max(0, H - 1))) lines.push(l);
    return { lines, footStart, commitEnd, commitCount };
  }

  /** The frame's lines: the frozen rows' placeholders, then the doc from the first line they do not show. */
  private frameLines(doc: Doc, W: number): string[] {
    const r = this.region;
    // After a resize, the first doc lines are the ones the frozen rows already show.
    r.locateHidden(doc.footStart, (k) => countInk(parseRow(doc.lines[k]!, W)));
    if (r.hiddenInk > 0 && r.hiddenDoc < doc.footStart)
      doc.lines[r.hiddenDoc] = dropInk(doc.lines[r.hiddenDoc]!, W, r.hiddenInk, r.frozenTail);
    const lines: string[] = [];
    for (let i = 0; i < r.frozen; i++) lines.push(this.prevLines[i] ?? '');
    for (let i = r.hiddenDoc; i < doc.lines.length; i++) lines.push(doc.lines[i]!);
    this.footerStart = r.frameRow(doc.footStart);
    return lines;
  }

  /** Ctrl-L: clear the live rows on screen, to draw them again. */
  private clearIfAsked(w: Work): void {
    if (!this.repaint) return;
    this.repaint = false;
    this.scene.stats.fullRepaints++;
    let first = this.region.frozen;
    while (first < w.prev.length && !this.region.onScreen(first)) first++;
    if (first < w.prev.length) {
      w.out += this.moveTo(first, 0) + this.cursor.plain() + eraseDown(this.region.top + first);
      w.prev = w.prev.slice(0, first);
      w.prevLines = w.prevLines.slice(0, first);
    }
    this.cursor.shown = null;
  }

  /**
   * Growth or shrinkage above the footer (or another unchanged tail): insert or delete rows right
   * above it, so it moves with the terminal's help and only its changed cells are drawn.
   */
  private moveTail(w: Work, footLen: number, W: number, H: number): void {
    const k = w.lines.length - w.prev.length;
    if (k === 0 || w.prev.length === 0 || Math.abs(k) >= H) return;
    const s = this.unchangedTail(w, footLen);
    if (s === 0) return;
    if (k > 0) this.insertAbove(w, k, w.prev.length - s, W, H);
    else this.deleteAbove(w, -k, w.lines.length - s);
  }

  /** How many rows at the end of the frame are the same as before (the footer, when it is). */
  private unchangedTail(w: Work, footLen: number): number {
    const maxS = Math.min(w.prev.length, w.lines.length) - this.region.frozen;
    if (footLen > 0 && footLen === this.prevFooterLen && footLen <= maxS) return footLen;
    let s = 0;
    while (s < maxS && w.prevLines[w.prev.length - 1 - s] === w.lines[w.lines.length - 1 - s]) s++;
    return s;
  }

  /** `k` new rows at frame row `p`: line feeds at the region's bottom make room, an insert-line opens it. */
  private insertAbove(w: Work, k: number, p: number, W: number, H: number): void {
    const r = this.region;
    const last = w.prev.length - 1;
    const scrolled = Math.max(0, r.top + last + k - (H - 1));
    if (r.top - scrolled + p < 0 || p < r.frozen || !r.onScreen(last)) return;
    // Rows this growth pushes off the top are never drawn again: what changed in them (the end of
    // a half-streamed line) is written first, while they are on screen.
    for (let i = Math.max(r.frozen, -r.top); i < p && r.top - scrolled + i < 0; i++) this.drawRow(w, i, W);
    // The column does not matter for the line feeds (vertical tabs: one byte each, the column
    // kept), nor after IL (it homes the cursor).
    const c = this.cursor;
    w.out += (c.row === last ? '' : this.moveTo(last, Math.max(0, c.col))) + c.plain() + lineFeeds(k);
    c.row += k;
    r.top -= scrolled;
    const q = p - 1;
    if (r.onScreen(q) && w.lines[q] !== w.prevLines[q]) {
      // The row above the new ones changed (the end of the growing line): written on the way up,
      // and the rows inserted from the start of the next, where that leaves the cursor.
      this.drawRow(w, q, W);
      w.out += this.moveTo(p, 0) + c.plain() + insertLines(k);
      c.at(p, 0);
    } else {
      w.out += cursorUp(c.row - p) + insertLines(k);
      c.at(p, -1);
    }
    this.scene.stats.scrolls++;
    w.prev.splice(p, 0, ...Array.from({ length: k }, () => EMPTY_ROW));
    w.prevLines.splice(p, 0, ...new Array<string>(k).fill(''));
  }

  /** `n` rows fewer at frame row `p`: a delete-line there. */
  private deleteAbove(w: Work, n: number, p: number): void {
    if (p < this.region.frozen || !this.region.onScreen(p)) return;
    w.out += this.moveTo(p, 0) + this.cursor.plain() + deleteLines(n);
    this.scene.stats.scrolls++;
    w.prev.splice(p, n);
    w.prevLines.splice(p, n);
  }

  /** Row i of the terminal brought up to date with the frame (a row of the work's `prev`). */
  private drawRow(w: Work, i: number, W: number): void {
    if (w.lines[i] === w.prevLines[i]) return;
    const row = this.scene.row(w.lines[i]!, W);
    w.out += this.cursor.change(w.prev[i]!, row, W, (c) => this.moveTo(i, c));
    w.prev[i] = row;
    w.prevLines[i] = w.lines[i]!;
  }

  /** Every row of the frame drawn: changed rows, new rows below, rows no longer there erased. */
  private drawLines(w: Work, W: number, H: number): Row[] {
    const rows: Row[] = new Array(w.lines.length);
    const common = Math.min(w.prev.length, w.lines.length);
    for (let i = 0; i < common; i++) rows[i] = this.updateRow(w, i, W);
    for (let i = w.prev.length; i < w.lines.length; i++) rows[i] = this.addRow(w, i, W, H);
    if (w.lines.length < w.prev.length) this.eraseBelow(w);
    return rows;
  }

  private updateRow(w: Work, i: number, W: number): Row {
    if (w.lines[i] === w.prevLines[i]) return w.prev[i]!;
    if (!this.region.onScreen(i)) {
      // Off screen: the terminal keeps what it shows, and so does the frame.
      w.lines[i] = w.prevLines[i]!;
      return w.prev[i]!;
    }
    const row = this.scene.row(w.lines[i]!, W);
    w.out += this.cursor.change(w.prev[i]!, row, W, (c) => this.moveTo(i, c));
    return row;
  }

  /** A new row below the region: a line feed from its last row (the terminal scrolls at the bottom). */
  private addRow(w: Work, i: number, W: number, H: number): Row {
    const row = this.scene.row(w.lines[i]!, W);
    const c = this.cursor;
    if (c.row === i) w.out += this.moveTo(i, 0);
    else {
      const onRow = this.scene.terminal.lineFeedReturns && c.row === i - 1;
      w.out += (onRow ? '' : this.moveTo(i - 1, 0)) + c.blankSafe() + '\n';
      c.at(i, c.col);
      if (this.region.top + i > H - 1) this.region.top = H - 1 - i;
    }
    w.out += c.cells(row, 0, row.cells.length, W);
    return row;
  }

  private eraseBelow(w: Work): void {
    let at = Math.max(w.lines.length, this.region.frozen);
    while (at < w.prev.length && !this.region.onScreen(at)) at++;
    if (at < w.prev.length) w.out += this.moveTo(at, 0) + this.cursor.plain() + eraseDown(this.region.top + at);
  }

  /** The hardware cursor where the frame has its marker; else hidden, parked on the frame's last row. */
  private placeCursor(rows: readonly Row[], n: number): string {
    const r = this.region;
    const at = cursorRow(rows, r.frozen, (i) => r.onScreen(i));
    if (at >= 0) return this.moveTo(at, rows[at]!.cursor) + this.cursor.show();
    const out = this.cursor.hide();
    // Park on the last row, so the cursor is always inside the region.
    return n > 0 && this.cursor.row >= n ? out + this.moveTo(n - 1, 0) : out;
  }

  /** What the terminal shows now is kept; blocks written for good leave it; rows scrolled off freeze. */
  private keep(doc: Doc, rows: Row[], lines: string[], W: number): void {
    const t = this.scene.transcript;
    let drop = 0;
    if (doc.commitCount > 0) {
      const ink = () => doc.lines.slice(0, doc.commitCount).reduce((n, l) => n + countInk(parseRow(l, W)), 0);
      drop = this.region.commit(doc.commitCount, ink);
      for (let b = this.committed; b < doc.commitEnd; b++) this.committedSet.add(t.blockAt(b));
      this.committed = doc.commitEnd;
      t.release(doc.commitEnd);
    }
    this.prevRows = drop > 0 ? rows.slice(drop) : rows;
    this.prevLines = drop > 0 ? lines.slice(drop) : lines;
    this.cursor.row -= drop;
    this.footerStart -= drop;
    // Rows that scrolled off the top are frozen: the terminal owns them now.
    this.region.freezeScrolledOff(this.prevRows, this.prevLines);
  }

  /** Relative move to frame row `row`, column `col` (both on screen). */
  private moveTo(row: number, col: number): string {
    // Rows below on screen: line feeds cannot scroll.
    return this.cursor.moveTo(row, col, { lineFeedsSafe: true, rowsSafe: true, absolute: false });
  }
}
