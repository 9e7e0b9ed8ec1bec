// The renderer: a transcript of blocks and fixed rows below it (the footer), drawn on a terminal
// in one of two modes, writing only what changed since the last frame, inside synchronized output.
// It owns the terminal's modes, when frames are drawn (coalesced for streamed text, at once for
// keys), resizes and suspends; what a frame writes is its painter's: full screen
// (fullscreen-painter.ts: a scrollable viewport on the alternate screen) or inline
// (inline-painter.ts: finished blocks left to the terminal's scrollback, a live region redrawn in
// place).

import { SYNC_BEGIN, SYNC_END } from './escapes.js';
import { FullscreenPainter } from './fullscreen-painter.js';
import { InlinePainter } from './inline-painter.js';
import type { Painter, RenderStats, Scene } from './painter.js';
import { parseRow, rowWithoutColor } from './row.js';
import type { Terminal } from './terminal.js';
import { nextTask } from './next-task.js';
import { type Block, type Component, Transcript } from './transcript.js';

export type { RenderStats } from './painter.js';

export type ScreenMode = 'fullscreen' | 'inline';

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: Clock = {
  // process.hrtime, not the `performance` global: its first use loads Node's perf_hooks.
  now: () => Number(process.hrtime.bigint()) / 1e6,
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

/** Full screen: blocks are laid out for this long a task (in the background) or a frame. */
const LAY_OUT_SLICE_MS = 4;
/** Full screen: a resize reflows every block, so the frame waits for a storm (a dragged window) to pass. */
const RESIZE_SETTLE_MS = 30;
/** Inline, a resize is drawn once the size has held this long (a key repeats every ~35 ms). */
const INLINE_RESIZE_SETTLE_MS = 100;

export class Renderer {
  readonly transcript: Transcript;
  readonly mode: ScreenMode;
  readonly stats: RenderStats = { frames: 0, bytes: 0, fullRepaints: 0, scrolls: 0, renderMs: 0 };
  private footer: Component[] = [];
  private readonly opts: Required<Omit<RendererOptions, 'clock' | 'transcript' | 'mode'>>;
  private readonly clock: Clock;
  private readonly painter: Painter;
  /** The painter of the mode, by its kind (one of the two is null). */
  private readonly full: FullscreenPainter | null;
  private readonly inline: InlinePainter | null;
  private running = false;
  private highlight = '';
  private timer: unknown = null;
  private timerAt = Infinity;
  private lastFrameAt = -Infinity;
  private offResize: (() => void) | null = null;
  private resizeTimer: unknown = null;
  /** Inline: a resize is waiting for the size to hold (no frame meanwhile). */
  private resizePending = false;
  /** Full screen: the transcript is being laid out in the background. */
  private layingOut = false;

  constructor(
    private readonly terminal: Terminal,
    options: RendererOptions,
  ) {
    this.mode = options.mode;
    this.transcript = options.transcript ?? new Transcript();
    this.clock = options.clock ?? realClock;
    this.opts = {
      frameMs: options.frameMs ?? 50,
      mouse: options.mouse ?? true,
      bracketedPaste: options.bracketedPaste ?? true,
      modifyOtherKeys: options.modifyOtherKeys ?? true,
      color: options.color ?? true,
    };
    const scene = this.scene();
    this.full = this.mode === 'fullscreen' ? new FullscreenPainter(scene) : null;
    this.inline = this.full ? null : new InlinePainter(scene);
    this.painter = (this.full ?? this.inline)!;
  }

  /** What the painter draws and on what. */
  private scene(): Scene {
    const self = this;
    return {
      terminal: this.terminal,
      transcript: this.transcript,
      stats: this.stats,
      get running() {
        return self.running;
      },
      get highlight() {
        return self.highlight;
      },
      footerLines: (width, max) => this.footerLines(width, max),
      row: (line, width) => {
        const r = parseRow(line, width);
        return this.opts.color ? r : rowWithoutColor(r);
      },
      emit: (bytes) => this.emit(bytes),
      layOutLater: () => void this.layOutInBackground(),
      layOutFor: (width) => this.layOutSlice(width),
    };
  }

  /** The components drawn below the transcript, top to bottom (status bar, input box, ...). */
  setFooter(components: Component[]): void {
    this.footer = components;
    this.requestRender(true);
  }

  /** Inline mode: the block is in the scrollback for good (changing it shows nothing). */
  isCommitted(block: object): boolean {
    return this.inline?.isCommitted(block) ?? false;
  }

  get isFollowing(): boolean {
    return this.full?.isFollowing ?? true;
  }

  /** Full screen, scrolled up: transcript lines below the view (0 while following the end). */
  get linesBelow(): number {
    return this.full?.linesBelow ?? 0;
  }

  /** A resize is being taken in (inline: waiting for the size to hold, or for the cursor report); frames wait for it. */
  get resizeInProgress(): boolean {
    return this.resizePending || this.painter.busy;
  }

  /** Rows of the transcript viewport in the last frame (full screen). */
  get viewportHeight(): number {
    return this.full?.viewportHeight ?? 0;
  }

  /** Turn on the terminal modes and draw the first frame. */
  async start(): Promise<void> {
    const inline = this.inline !== null;
    this.terminal.enter({
      raw: true,
      altScreen: !inline,
      bracketedPaste: this.opts.bracketedPaste,
      mouse: !inline && this.opts.mouse,
      modifyOtherKeys: this.opts.modifyOtherKeys,
    });
    this.running = true;
    this.offResize = this.terminal.onResize(() => this.onResize());
    // Inline, no frame until the region's place is known (one asked for meanwhile is drawn after).
    if (await this.painter.start()) this.renderNow();
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
    if (this.inline && !this.inline.busy && !pending && this.terminal.isActive) {
      this.footer = [];
      this.renderNow(true);
      this.emit(this.inline.leave());
    }
    this.running = false;
    this.offResize?.();
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

  /**
   * Lay out what the transcript gained since the last frame, without drawing it: the work the next
   * frame would do, done where it suits the caller (between the slices of a long replay, so that a
   * key's frame finds it done). Full screen only: inline, finished blocks are not laid out again.
   */
  layOut(): void {
    if (this.full && this.running && !this.layingOut) this.transcript.lineCount(Math.max(1, this.terminal.columns));
  }

  /**
   * Inline: whether the last block, laid out now at the terminal's width, draws code plain until
   * its colours come. The inline painter keeps it live meanwhile; a block added after it would
   * send it into the scrollback plain, so whoever adds many (a replay) waits for this to end.
   */
  lastAwaitsColours(): boolean {
    const t = this.transcript;
    if (this.full || !this.running || t.length === 0) return false;
    t.blockLines(t.length - 1, Math.max(1, this.terminal.columns));
    return t.blockAt(t.length - 1).awaitsHighlighter?.() === true;
  }

  /** Lay the transcript out at `width` for LAY_OUT_SLICE_MS at most (a block at least); whether it is done. */
  private layOutSlice(width: number): boolean {
    const until = this.clock.now() + LAY_OUT_SLICE_MS;
    return this.transcript.layOutSome(width, () => this.clock.now() >= until);
  }

  /**
   * Full screen: lay the transcript out a few milliseconds a task until it is done (at whatever
   * width the terminal then has), keys drawn between the tasks; then a frame, which finds its place.
   */
  private async layOutInBackground(): Promise<void> {
    if (this.layingOut) return;
    this.layingOut = true;
    try {
      for (;;) {
        await nextTask();
        if (!this.running) return;
        if (this.layOutSlice(Math.max(1, this.terminal.columns))) break;
      }
    } finally {
      this.layingOut = false;
    }
    this.requestRender();
  }

  /** Forget what is on screen and draw everything again (Ctrl-L). */
  redraw(): void {
    this.painter.redraw();
    this.requestRender(true);
  }

  /**
   * The terminal was taken back after a suspend (Ctrl-Z, then fg): full screen draws everything
   * again; inline starts its live region afresh below whatever the shell printed meanwhile.
   */
  async resume(): Promise<void> {
    if (!this.running) return;
    if (this.full) {
      this.redraw();
      return;
    }
    if (await this.painter.resume()) this.renderNow();
  }

  // ---- scrolling (full screen) -------------------------------------------------------------

  /** Move the viewport by n lines (negative: up, towards the start). */
  scrollBy(n: number): void {
    if (!this.full || n === 0) return;
    this.full.scrollBy(n);
    this.requestRender(true);
  }

  pageUp(): void {
    if (this.full) this.scrollBy(-this.full.page);
  }

  pageDown(): void {
    if (this.full) this.scrollBy(this.full.page);
  }

  scrollToBottom(): void {
    this.full?.scrollToBottom();
    this.requestRender(true);
  }

  /** Full screen: bring line `offset` of `block` into view, with only the blocks passed laid out. */
  showAt(block: Block, offset: number): void {
    const index = this.transcript.indexOf(block);
    if (!this.full || index < 0) return;
    this.full.showAt(index, offset);
    this.requestRender(true);
  }

  /** Full screen: show `text` in reverse video wherever the transcript holds it ('' for none). */
  setHighlight(text: string): void {
    if (text === this.highlight) return;
    this.highlight = text;
    this.requestRender(true);
  }

  scrollToTop(): void {
    if (!this.full) return;
    this.full.scrollToTop();
    this.requestRender(true);
  }

  // ---- frames ------------------------------------------------------------------------------

  private onResize(): void {
    if (this.resizeTimer !== null) this.clock.clearTimeout(this.resizeTimer);
    if (this.inline) {
      // Nothing is drawn until the size has held for a moment: a frame drawn for a size the
      // terminal no longer has (a window being dragged, a pane resized with a key held down)
      // lands where its rows are not, and rows it pushes into the scrollback stay there.
      this.resizePending = true;
      this.resizeTimer = this.clock.setTimeout(() => {
        this.resizeTimer = null;
        this.resizePending = false;
        void this.resizeInline();
      }, INLINE_RESIZE_SETTLE_MS);
      return;
    }
    // A resize reflows every block: wait for the storm (a window being dragged) to pass.
    this.painter.redraw();
    this.resizeTimer = this.clock.setTimeout(() => {
      this.resizeTimer = null;
      this.requestRender(true);
    }, RESIZE_SETTLE_MS);
  }

  /** Inline: the size held; the painter finds where the region went, then the frame is drawn. */
  private async resizeInline(): Promise<void> {
    if (!this.running) return;
    this.cancelTimer();
    if (await this.inline!.resize()) this.renderNow();
  }

  /** Draw a frame now (tests, and the timer). `final`: inline, commit every block. */
  renderNow(final = false): void {
    // A terminal restored behind the renderer's back (a signal, a crash) is not drawn on again.
    if (!this.running || this.resizePending || this.painter.busy || !this.terminal.isActive) return;
    this.cancelTimer();
    const t0 = this.clock.now();
    const out = this.painter.frame(final);
    this.stats.renderMs += this.clock.now() - t0;
    this.lastFrameAt = this.clock.now();
    if (out) {
      this.emit(SYNC_BEGIN + out + SYNC_END);
      this.stats.frames++;
    }
  }

  private emit(s: string): void {
    if (!s) return;
    this.stats.bytes += s.length + (/[^\x00-\x7f]/.test(s) ? Buffer.byteLength(s) - s.length : 0);
    this.terminal.write(s);
  }

  private footerLines(width: number, max: number): string[] {
    const lines: string[] = [];
    for (const c of this.footer) for (const l of c.render(width)) lines.push(l);
    return lines.length > max ? lines.slice(lines.length - max) : lines;
  }
}
