// The full-screen painter (alternate screen): the transcript is a viewport above the footer,
// scrolled by the person (scrollBy, pages, ends) or following the transcript's end. A frame
// writes the cells that changed since the last one. When the viewport moves by fewer rows than
// it has, the terminal scrolls the transcript rows in place, with what every VT100 has (the
// margins set to them, then line feeds at the bottom margin, or reverse indexes / insert-line at
// the top), and only the rows that came in are written. Scrolled up, the viewport holds still
// while the transcript grows.

import { CursorTracker, cursorRow } from './cursor.js';
import { lineFeeds } from './cursor-move.js';
import { ERASE_LINE_RIGHT, insertLines, RESET_MARGINS, REVERSE_INDEX, SGR_RESET, setMargins } from './escapes.js';
import type { Painter, Scene } from './painter.js';
import { EMPTY_ROW, type Row } from './row.js';
import type { Block } from './transcript.js';
import { highlightMatches } from './search.js';
import { DEFAULT_STYLE } from './style.js';

/**
 * Following the end, a frame that finds more blocks than this to lay out (after a resize, a
 * change to every block, a long replay), or fewer that take longer than a few milliseconds (long
 * code, long tables), draws the view from the last blocks alone and leaves the rest to the
 * background: a long transcript takes a second to lay out again, and keys wait for the frame.
 */
const TAIL_AFTER_BLOCKS = 32;

export class FullscreenPainter implements Painter {
  readonly busy = false;
  private readonly cursor: CursorTracker;
  /** What the terminal shows, row by row (the lines and their cells). */
  private prevRows: Row[] = [];
  private prevLines: string[] = [];
  private width = 0;
  private height = 0;
  private repaint = true;
  private following = true;
  /** Transcript line at the top of the viewport while scrolled up, counted at `anchorWidth`. */
  private anchorTop = 0;
  private anchorWidth = 0;
  /**
   * The same place as a block and a line in it (of its `lines` at `width`), which a resize keeps
   * (as a share of the block's lines): the line numbers before it mean other text after it.
   */
  private anchor: { block: Block; offset: number; lines: number; width: number } | null = null;
  private prevTop = 0;
  private prevVh = 0;
  /** Rows in the scroll margins (from the top); 0: the whole screen; -1: not known. */
  private margins = -1;

  constructor(private readonly scene: Scene) {
    this.cursor = new CursorTracker(() => scene.terminal.lineFeedReturns === true);
  }

  async start(): Promise<boolean> {
    this.width = this.scene.terminal.columns;
    this.height = this.scene.terminal.rows;
    return true;
  }

  redraw(): void {
    this.repaint = true;
  }

  async resume(): Promise<boolean> {
    this.redraw();
    return true;
  }

  // ---- the viewport --------------------------------------------------------------------------

  get isFollowing(): boolean {
    return this.following;
  }

  /** Rows of the transcript viewport in the last frame. */
  get viewportHeight(): number {
    return this.prevVh;
  }

  /** Scrolled up: transcript lines below the view (0 while following the end; Infinity while not known yet). */
  get linesBelow(): number {
    if (this.following) return 0;
    const w = this.columns;
    if (this.anchorLine(w)) return Number.POSITIVE_INFINITY;
    const vh = this.prevVh || Math.max(1, this.scene.terminal.rows - 1);
    return Math.max(0, this.scene.transcript.lineCount(w) - this.topAt(w) - vh);
  }

  /** Move the viewport by n lines (negative: up, towards the start). */
  scrollBy(n: number): void {
    const w = this.columns;
    const vh = Math.max(1, this.prevVh || this.height - 1);
    if (!this.laidOut(w)) return this.scrollInBlocks(n, w, vh);
    const maxTop = Math.max(0, this.scene.transcript.lineCount(w) - vh);
    const top = this.following ? maxTop : Math.min(this.topAt(w), maxTop);
    const next = Math.max(0, Math.min(maxTop, top + n));
    this.following = next >= maxTop;
    this.anchorAt(next, w);
  }

  private get columns(): number {
    return Math.max(1, this.scene.terminal.columns);
  }

  /**
   * scrollBy over a transcript not laid out at `width` (after a resize): from the view's block,
   * through the blocks passed alone, so that a key does not wait for the whole lay-out.
   */
  private scrollInBlocks(n: number, width: number, vh: number): void {
    const t = this.scene.transcript;
    const last = t.length - 1;
    const from = (!this.following && this.anchorLine(width)) || t.moveLines(width, last, t.blockLines(last, width).length, -vh);
    const to = t.moveLines(width, from.index, from.offset, n);
    this.following = t.linesFrom(width, to.index, to.offset, vh + 1).length <= vh;
    this.anchorIn(to.index, to.offset, width);
  }

  /** Scrolled up to line `top` at `width`: noted as a line and as a place in a block. */
  private anchorAt(top: number, width: number): void {
    const t = this.scene.transcript;
    if (t.length > 0) {
      const { index, offset } = t.blockAtLine(width, top);
      this.anchorIn(index, offset, width);
    }
    this.anchorTop = top;
    this.anchorWidth = width;
  }

  /** Scrolled up to line `offset` of block `index` at `width`; its line number is counted when needed. */
  private anchorIn(index: number, offset: number, width: number): void {
    const t = this.scene.transcript;
    this.anchor = { block: t.blockAt(index), offset, lines: t.blockLines(index, width).length, width };
    this.anchorWidth = -1;
  }

  /** The line at the top of the view scrolled up, at `width`: found again where its block starts after a width change. */
  private topAt(width: number): number {
    if (this.anchorWidth === width) return this.anchorTop;
    const t = this.scene.transcript;
    const at = this.anchor ? t.indexOf(this.anchor.block) : -1;
    if (at >= 0) this.anchorTop = t.blockStart(at, width) + this.lineInAnchor(at, width);
    this.anchorWidth = width;
    return this.anchorTop;
  }

  /**
   * Scrolled up over a transcript not laid out at `width` yet (after a resize): the block and line
   * the view starts at, drawn from there without the lines above; null when laid out (or no block).
   */
  private anchorLine(width: number): { index: number; offset: number } | null {
    const t = this.scene.transcript;
    if (this.following || !this.anchor || this.laidOut(width)) return null;
    const index = t.indexOf(this.anchor.block);
    return index < 0 ? null : { index, offset: this.lineInAnchor(index, width) };
  }

  /** The line of the anchor's block (at `index`) at `width` that is as far down it as the anchor. */
  private lineInAnchor(index: number, width: number): number {
    const n = this.scene.transcript.blockLines(index, width).length;
    const a = this.anchor;
    if (!a) return 0;
    const line = a.width === width ? a.offset : Math.floor((a.offset / Math.max(1, a.lines)) * n);
    return Math.min(Math.max(0, n - 1), line);
  }

  /** Rows a page moves (the window height − 1). */
  get page(): number {
    return Math.max(1, (this.prevVh || this.height) - 1);
  }

  scrollToBottom(): void {
    this.following = true;
  }

  /**
   * Bring line `offset` of block `index` into the viewport, a third of the way down (or as far as
   * the ends allow), through the blocks passed alone: no line numbers needed (a transcript being
   * laid out again after a resize shows a search's match at once).
   */
  showAt(index: number, offset: number): void {
    const t = this.scene.transcript;
    const w = this.columns;
    const vh = Math.max(1, this.prevVh || this.height - 1);
    const at = Math.min(offset, Math.max(0, t.blockLines(index, w).length - 1));
    const top = t.moveLines(w, index, at, -Math.floor(vh / 3));
    this.following = t.linesFrom(w, top.index, top.offset, vh + 1).length <= vh;
    this.anchorIn(top.index, top.offset, w);
  }

  scrollToTop(): void {
    const t = this.scene.transcript;
    const vh = this.prevVh || this.height;
    this.following = t.linesFrom(this.columns, 0, 0, vh + 1).length <= vh;
    if (t.length > 0) this.anchorIn(0, 0, this.columns);
  }

  // ---- frames --------------------------------------------------------------------------------

  frame(): string {
    const W = Math.max(1, this.scene.terminal.columns);
    const H = Math.max(1, this.scene.terminal.rows);
    const foot = this.scene.footerLines(W, Math.max(0, H - 1));
    const vh = H - foot.length;
    const t = this.scene.transcript;
    // A transcript not laid out yet: the view drawn from the blocks it shows (following, the last
    // ones; scrolled up, from the block at its top on), at a place not known (no scroll in place).
    const tail = this.following && !this.laidOut(W);
    const from = this.anchorLine(W);
    if (tail || from) this.scene.layOutLater();
    const top = tail || from ? Number.NaN : this.viewTop(W, vh);
    const q = this.scene.highlight;
    const view = tail ? t.tail(W, vh) : from ? t.linesFrom(W, from.index, from.offset, vh) : t.lines(W, top, top + vh);
    const lines = view.map((l) => (q ? highlightMatches(l, q) : l));
    while (lines.length < vh) lines.push('');
    for (const l of foot) lines.push(l);
    let out: string;
    if (this.repaint || W !== this.width || H !== this.height || this.prevRows.length !== H) out = this.clear(W, H);
    else out = this.scrollTo(top, vh, lines, W);
    out += this.drawRows(lines, W, H);
    this.prevTop = top;
    this.prevVh = vh;
    const at = cursorRow(this.prevRows);
    if (at < 0) return out + this.cursor.hide();
    return out + this.moveTo(at, this.prevRows[at]!.cursor) + this.cursor.show();
  }

  /** Whether the transcript is laid out at `width`, after what a few milliseconds of this frame lay out. */
  private laidOut(width: number): boolean {
    const n = this.scene.transcript.notLaidOut(width);
    return n === 0 || (n <= TAIL_AFTER_BLOCKS && this.scene.layOutFor(width));
  }

  /** The transcript line at the top of the viewport. */
  private viewTop(width: number, vh: number): number {
    const maxTop = Math.max(0, this.scene.transcript.lineCount(width) - vh);
    if (!this.following && this.topAt(width) >= maxTop) this.following = true;
    return this.following ? maxTop : this.anchorTop;
  }

  /** Every row blank, the margins the whole screen; the screen is not known, so every row is drawn. */
  private clear(W: number, H: number): string {
    this.repaint = false;
    this.scene.stats.fullRepaints++;
    this.prevRows = Array.from({ length: H }, () => EMPTY_ROW);
    // Force every row to be written: an unknown screen is not a blank one.
    this.prevLines = new Array<string>(H).fill('\u0000');
    this.cursor.forget();
    this.width = W;
    this.height = H;
    // Margins back to the whole screen (a resize may have left old ones in force).
    let out = SGR_RESET + RESET_MARGINS;
    this.margins = 0;
    this.cursor.style = DEFAULT_STYLE;
    for (let r = 0; r < H; r++) out += this.moveTo(r, 0) + ERASE_LINE_RIGHT;
    return out;
  }

  /** The viewport moved from prevTop to `top`: scroll the rows in place when fewer than the region moved. */
  private scrollTo(top: number, vh: number, lines: readonly string[], width: number): string {
    const d = top - this.prevTop;
    const region = Math.min(vh, this.prevVh);
    // NaN: a frame drawn from the transcript's tail, whose place was not known.
    if (Number.isNaN(d) || d === 0 || Math.abs(d) >= region) return '';
    let out = '';
    if (this.margins !== region) {
      out += this.cursor.plain() + setMargins(0, region - 1);
      this.margins = region;
      // Setting the margins homes the cursor.
      this.cursor.at(0, 0);
    }
    out += d > 0 ? this.scrollUp(lines, d, region, width) : this.cursor.plain() + this.scrollDown(-d, region);
    this.scene.stats.scrolls++;
    return out;
  }

  /**
   * Scroll rows 0..region-1 (the margins) up by d rows the way a terminal's own output does: the
   * rows that stay are brought up to date where they are (the end of the growing line), then each
   * new row comes in with a line feed at the bottom margin and is written there. No SU (a VT100
   * has none), and no move between the new rows.
   */
  private scrollUp(lines: readonly string[], d: number, region: number, width: number): string {
    const rows = this.prevRows,
      ls = this.prevLines;
    let out = '';
    for (let r = d; r < region; r++) out += this.drawRow(r, lines[r - d]!, width);
    const bottom = region - 1;
    for (let k = region - d; k < region; k++) {
      out += this.moveTo(bottom, Math.max(0, this.cursor.col)) + this.cursor.blankSafe() + lineFeeds(1);
      rows.copyWithin(0, 1, region);
      ls.copyWithin(0, 1, region);
      rows[bottom] = EMPTY_ROW;
      ls[bottom] = '';
      out += this.drawRow(bottom, lines[k]!, width);
    }
    return out;
  }

  /**
   * Scroll rows 0..region-1 (the margins) down by n rows: reverse indexes or insert line at the
   * top margin, whichever is fewer bytes (no SD: a VT100 has none).
   */
  private scrollDown(n: number, region: number): string {
    const col = Math.max(0, this.cursor.col);
    const byIndex = this.movement(0, col) + REVERSE_INDEX.repeat(n);
    const byLines = this.movement(0, 0) + insertLines(n);
    const rows = this.prevRows,
      ls = this.prevLines;
    rows.copyWithin(n, 0, region - n);
    ls.copyWithin(n, 0, region - n);
    rows.fill(EMPTY_ROW, 0, n);
    ls.fill('', 0, n);
    const viaIndex = byIndex.length <= byLines.length;
    this.cursor.at(0, viaIndex ? col : 0);
    return viaIndex ? byIndex : byLines;
  }

  /** Every row that changed, written; the style back to the default after. */
  private drawRows(lines: readonly string[], W: number, H: number): string {
    let out = '';
    for (let r = 0; r < H; r++) out += this.drawRow(r, lines[r]!, W);
    return out + this.cursor.plain();
  }

  /** Row r shows `line` from now on: its changed cells, written. */
  private drawRow(r: number, line: string, width: number): string {
    if (line === this.prevLines[r]) return '';
    const row = this.scene.row(line, width);
    const out = this.cursor.change(this.prevRows[r]!, row, width, (c) => this.moveTo(r, c));
    this.prevRows[r] = row;
    this.prevLines[r] = line;
    return out;
  }

  private moveTo(row: number, col: number): string {
    const out = this.movement(row, col);
    this.cursor.at(row, col);
    return out;
  }

  /** The bytes that move the cursor to (row, col) (absolute moves allowed), the cursor left where it is. */
  private movement(row: number, col: number): string {
    // A line feed moves down without scrolling except on the bottom margin (or the last row).
    // (margins: 0 = the whole screen, -1 = not known, so no line feeds).
    // A move down stops at the bottom margin in some terminals (pyte) even from below it, so
    // moves down stay inside the margins; a move up stops at the top one, row 0.
    const c = this.cursor;
    const bottom = this.margins > 0 ? this.margins - 1 : this.height - 1;
    const rowsSafe = c.row >= 0 && this.margins >= 0 && (row <= c.row || row <= bottom);
    return c.movement(row, col, { lineFeedsSafe: rowsSafe && row < this.height, rowsSafe, absolute: true });
  }
}
