// The terminal the renderer draws on: size, output, parsed input, and the modes a screen turns on
// (raw input, alternate screen, bracketed paste, mouse wheel, hidden cursor, modifyOtherKeys).
// Every mode turned on is turned off again by restore(), which is synchronous and idempotent so it
// can run from an 'exit' handler, a signal handler and an uncaught-exception path alike.

import { writeSync } from 'node:fs';
import type { ReadStream, WriteStream } from 'node:tty';
import {
  ALT_SCREEN_OFF,
  ALT_SCREEN_ON,
  CURSOR_SHOW,
  KITTY_KEYS_OFF,
  KITTY_KEYS_ON,
  MODIFY_OTHER_KEYS_OFF,
  MODIFY_OTHER_KEYS_ON,
  MOUSE_OFF,
  MOUSE_ON,
  PASTE_OFF,
  PASTE_ON,
  QUERY_CURSOR,
  RESET_MARGINS,
  SGR_RESET,
} from './escapes.js';
import { type InputEvent, KeyParser, type KeyParserOptions } from './keys.js';

export interface TerminalModes {
  /** Raw input: no line editing, no echo, Ctrl-C as a key (default true). */
  raw?: boolean;
  altScreen?: boolean;
  bracketedPaste?: boolean;
  /** Wheel reports (captures the mouse: the terminal's own selection needs Shift while on). */
  mouse?: boolean;
  /** Distinct sequences for Shift/Alt+Enter and the like: xterm modifyOtherKeys 2, and the kitty
   * keyboard protocol's "disambiguate" level where the terminal has it (Esc then needs no wait). */
  modifyOtherKeys?: boolean;
}

export interface Terminal {
  readonly columns: number;
  readonly rows: number;
  write(data: string): void;
  /** Parsed input; returns a function that stops listening. */
  onInput(listener: (ev: InputEvent) => void): () => void;
  onResize(listener: () => void): () => void;
  /** Turn modes on (and remember them for restore). */
  enter(modes: TerminalModes): void;
  /** Bytes to write first when restoring (an inline screen clears its live rows). */
  setRestorePreamble(fn: (() => string) | null): void;
  /** Turn every mode back off; safe to call any number of times, from anywhere. */
  restore(): void;
  /** Modes are on (entered, and not restored since): a screen may draw. */
  readonly isActive: boolean;
  /**
   * A line feed written also returns the cursor to column 0 (the tty's ONLCR, which Node's raw
   * mode keeps on), so "next row, column 0" costs one byte instead of CR LF's two (three on the wire).
   */
  readonly lineFeedReturns?: boolean;
  /** Ask where the cursor is (1-based); null when the terminal does not answer in time. */
  queryCursorPosition(timeoutMs?: number): Promise<{ row: number; col: number } | null>;
}

/** Shared by the Node and the virtual terminal: input parsing, listeners, mode bookkeeping. */
export abstract class TerminalBase implements Terminal {
  protected readonly parser: KeyParser;
  private inputListeners = new Set<(ev: InputEvent) => void>();
  private resizeListeners = new Set<() => void>();
  private cprWaiters: ((p: { row: number; col: number } | null) => void)[] = [];
  protected active: TerminalModes = {};
  protected preamble: (() => string) | null = null;
  protected restored = true;

  constructor(parserOptions?: KeyParserOptions) {
    this.parser = new KeyParser((ev) => this.dispatch(ev), parserOptions);
  }

  abstract get columns(): number;
  abstract get rows(): number;

  get isActive(): boolean {
    return !this.restored;
  }
  abstract write(data: string): void;
  /** Write synchronously (restore paths, where nothing asynchronous runs any more). */
  protected abstract writeNow(data: string): void;
  protected abstract setRaw(on: boolean): void;

  private dispatch(ev: InputEvent): void {
    if (ev.type === 'cursor') {
      const w = this.cprWaiters.shift();
      if (w) {
        w({ row: ev.row, col: ev.col });
        return;
      }
    }
    for (const l of [...this.inputListeners]) l(ev);
  }

  protected emitResize(): void {
    for (const l of [...this.resizeListeners]) l();
  }

  onInput(listener: (ev: InputEvent) => void): () => void {
    this.inputListeners.add(listener);
    return () => this.inputListeners.delete(listener);
  }

  onResize(listener: () => void): () => void {
    this.resizeListeners.add(listener);
    return () => this.resizeListeners.delete(listener);
  }

  enter(modes: TerminalModes): void {
    const m = { raw: true, ...modes };
    let out = '';
    if (m.raw && !this.active.raw) this.setRaw(true);
    if (m.altScreen && !this.active.altScreen) out += ALT_SCREEN_ON;
    if (m.bracketedPaste && !this.active.bracketedPaste) out += PASTE_ON;
    if (m.mouse && !this.active.mouse) out += MOUSE_ON;
    if (m.modifyOtherKeys && !this.active.modifyOtherKeys) out += MODIFY_OTHER_KEYS_ON + KITTY_KEYS_ON;
    this.active = { ...this.active, ...Object.fromEntries(Object.entries(m).filter(([, v]) => v)) };
    this.restored = false;
    if (out) this.write(out);
  }

  setRestorePreamble(fn: (() => string) | null): void {
    this.preamble = fn;
  }

  /** The bytes that undo the active modes. */
  protected restoreBytes(): string {
    let out = '';
    try {
      out += this.preamble?.() ?? '';
    } catch {
      /* restoring matters more than the preamble */
    }
    out += SGR_RESET;
    if (this.active.altScreen) out += RESET_MARGINS + ALT_SCREEN_OFF;
    if (this.active.mouse) out += MOUSE_OFF;
    if (this.active.modifyOtherKeys) out += MODIFY_OTHER_KEYS_OFF + KITTY_KEYS_OFF;
    if (this.active.bracketedPaste) out += PASTE_OFF;
    out += CURSOR_SHOW;
    return out;
  }

  restore(): void {
    if (this.restored) return;
    this.restored = true;
    const bytes = this.restoreBytes();
    const wasRaw = this.active.raw;
    this.active = {};
    this.preamble = null;
    try {
      this.writeNow(bytes);
    } catch {
      /* the terminal may be gone (SIGHUP) */
    }
    if (wasRaw) {
      try {
        this.setRaw(false);
      } catch {
        /* as above */
      }
    }
    for (const w of this.cprWaiters.splice(0)) w(null);
  }

  queryCursorPosition(timeoutMs = 300): Promise<{ row: number; col: number } | null> {
    return new Promise((resolve) => {
      let done = false;
      const waiter = (p: { row: number; col: number } | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(p);
      };
      const timer = setTimeout(() => {
        const i = this.cprWaiters.indexOf(waiter);
        if (i >= 0) {
          this.cprWaiters.splice(i, 1);
          this.parser.cancelCursorReport();
        }
        waiter(null);
      }, timeoutMs);
      this.cprWaiters.push(waiter);
      this.parser.expectCursorReport();
      this.write(QUERY_CURSOR);
    });
  }
}

export interface NodeTerminalOptions extends KeyParserOptions {
  stdin?: ReadStream;
  stdout?: WriteStream;
  /** Restore on process exit, uncaught exceptions, SIGTERM and SIGHUP (default true). */
  guardProcess?: boolean;
}

/** How long after SIGTSTP a terminal is taken back without SIGCONT (the stop was ignored). */
const SUSPEND_FALLBACK_MS = 100;

/** The process's own terminal (stdin/stdout must be TTYs). */
export class NodeTerminal extends TerminalBase {
  private readonly stdin: ReadStream;
  private readonly stdout: WriteStream;
  /**
   * Bytes typed before raw mode was first on (while the program started) went through the cooked
   * line discipline, whose ICRNL made Enter a line feed: in the first read, a line feed is Enter.
   */
  private typedAhead = false;
  private entered = false;
  private readonly onData = (d: Buffer) => {
    if (this.typedAhead) {
      this.typedAhead = false;
      if (d.includes(0x0a)) {
        this.parser.feed(d.map((b) => (b === 0x0a ? 0x0d : b)));
        return;
      }
    }
    this.parser.feed(d);
  };
  private readonly onStdoutResize = () => this.emitResize();
  private readonly guard: boolean;
  private guardsOn = false;
  private readonly restoreNow = () => this.restore();
  private readonly onSignal = (sig: NodeJS.Signals) => {
    this.restore();
    // Alone on this signal, keep its default meaning: end the process.
    if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
  };
  private readonly onHup = () => this.onSignal('SIGHUP');
  private readonly onTerm = () => this.onSignal('SIGTERM');

  constructor(opts: NodeTerminalOptions = {}) {
    super(opts);
    this.stdin = opts.stdin ?? (process.stdin as ReadStream);
    this.stdout = opts.stdout ?? (process.stdout as WriteStream);
    this.guard = opts.guardProcess ?? true;
  }

  /** libuv's raw mode (uv_tty_set_mode RAW) sets ONLCR on the tty: LF goes out as CR LF. */
  get lineFeedReturns(): boolean {
    return !!this.stdout.isTTY;
  }

  get columns(): number {
    return this.stdout.columns || 80;
  }

  get rows(): number {
    return this.stdout.rows || 24;
  }

  write(data: string): void {
    if (data) this.stdout.write(data);
  }

  protected writeNow(data: string): void {
    const fd = (this.stdout as unknown as { fd?: number }).fd;
    if (typeof fd === 'number') writeSync(fd, data);
    else this.stdout.write(data);
  }

  protected setRaw(on: boolean): void {
    if (typeof this.stdin.setRawMode === 'function' && this.stdin.isTTY) this.stdin.setRawMode(on);
  }

  override enter(modes: TerminalModes): void {
    if (this.restored) {
      if (!this.entered) this.typedAhead = this.entered = true;
      this.stdin.on('data', this.onData);
      this.stdin.resume();
      this.stdout.on('resize', this.onStdoutResize);
      if (this.guard && !this.guardsOn) {
        this.guardsOn = true;
        process.on('exit', this.restoreNow);
        // Restore before Node prints the error, so it lands on the normal screen.
        process.on('uncaughtExceptionMonitor', this.restoreNow);
        process.on('SIGTERM', this.onTerm);
        process.on('SIGHUP', this.onHup);
      }
    }
    super.enter(modes);
  }

  override restore(): void {
    if (this.restored) return;
    super.restore();
    this.stdin.off('data', this.onData);
    this.stdout.off('resize', this.onStdoutResize);
    this.stdin.pause();
    if (this.guardsOn) {
      this.guardsOn = false;
      process.off('exit', this.restoreNow);
      process.off('uncaughtExceptionMonitor', this.restoreNow);
      process.off('SIGTERM', this.onTerm);
      process.off('SIGHUP', this.onHup);
    }
  }

  /**
   * Ctrl-Z: give the terminal back, stop the process, and on SIGCONT take the terminal again with
   * the same modes, then call `resumed` (Renderer.resume() draws again).
   */
  suspend(resumed?: () => void): void {
    const modes = { ...this.active };
    const preamble = this.preamble;
    this.restore();
    let back = false;
    const takeBack = () => {
      if (back) return;
      back = true;
      clearTimeout(timer);
      process.off('SIGCONT', takeBack);
      this.enter(modes);
      this.setRestorePreamble(preamble);
      resumed?.();
    };
    process.on('SIGCONT', takeBack);
    process.kill(process.pid, 'SIGTSTP');
    // The stop happens inside kill(), so this timer runs after fg at the earliest. It also keeps
    // the event loop alive (stdin is paused and signal handlers do not count), and takes the
    // terminal back when the stop never came: a process group without a job-control shell
    // (orphaned) ignores SIGTSTP.
    const timer = setTimeout(takeBack, SUSPEND_FALLBACK_MS);
  }
}
