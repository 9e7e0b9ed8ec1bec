// A painter turns the renderer's transcript and footer into the bytes of a frame, in one screen
// mode, as Ink's log-update has one strategy per mode: full screen (fullscreen-painter.ts) or
// inline (inline-painter.ts). The renderer (renderer.ts) picks one, tells it when to draw, and
// writes what it returns.

import type { Row } from './row.js';
import type { Terminal } from './terminal.js';
import type { Transcript } from './transcript.js';

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

/** What a painter draws, and on what: given by the renderer. */
export interface Scene {
  readonly terminal: Terminal;
  readonly transcript: Transcript;
  readonly stats: RenderStats;
  /** Between start() and stop(). */
  readonly running: boolean;
  /** The footer's lines at `width`, its last `max` when it has more. */
  footerLines(width: number, max: number): string[];
  /** A line as the cells to draw (without colours when the renderer draws none). */
  row(line: string, width: number): Row;
  /** Text shown in reverse video wherever the transcript holds it (full screen; '' for none). */
  readonly highlight: string;
  /** Write bytes outside a frame. */
  emit(bytes: string): void;
  /** Lay the transcript out in the background, a step per task (a frame found too much of it to do). */
  layOutLater(): void;
  /** Lay the transcript out at `width` for a few milliseconds at most (a block at least); whether it is done. */
  layOutFor(width: number): boolean;
}

export interface Painter {
  /** The renderer took the terminal; resolves to false when it was stopped meanwhile. */
  start(): Promise<boolean>;
  /** The bytes of a frame ('' when nothing changed). `final`: inline, every block is committed. */
  frame(final: boolean): string;
  /** Forget what the screen shows: the next frame draws everything again (Ctrl-L). */
  redraw(): void;
  /** The terminal was taken back after a suspend; resolves to false when stopped meanwhile. */
  resume(): Promise<boolean>;
  /** Frames wait (inline: for a cursor position report). */
  readonly busy: boolean;
}
