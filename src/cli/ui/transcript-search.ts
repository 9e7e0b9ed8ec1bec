// Search in the full-screen transcript (Ctrl-S): a search line below the transcript takes the
// text; Enter finds it from the end up, shows every occurrence in reverse video and brings the
// nearest into view; then n goes on to the next one up (older), N back down (newer), as `?` does
// in less. Esc closes it; any other key closes it and does what it does.
//
// The blocks are searched from the end up, a few milliseconds a task, each rendered as it is
// passed: the nearest match is shown as soon as it is found, keys are read between the tasks,
// and a transcript laid out again after a resize is not waited for. Until the search has reached
// the top, the count says it is still going (`3/3…`).

import { nextTask } from '../../tui/next-task.js';
import { type InputEvent, keyId } from '../../tui/keys.js';
import type { Renderer } from '../../tui/renderer.js';
import { matchesInBlock } from '../../tui/search.js';
import { sanitize } from '../../tui/sanitize.js';
import { paint } from '../../tui/style.js';
import type { Block, Component } from '../../tui/transcript.js';
import { truncate } from '../../tui/wrap.js';
import { THEME } from './theme.js';

/** How long the search goes on in one task before keys get their turn. */
const SLICE_MS = 8;

/** A line that holds the text: its block, and its place in the block. */
interface Match {
  block: Block;
  offset: number;
}

/** What a key did: the search used it, or passes it on to the screen (scrolling keeps the search open, any other key closes it). */
export type SearchKey = 'used' | 'pass';

export class TranscriptSearch implements Component {
  private open = false;
  /** Typing the text (before Enter); after it, moving between matches. */
  private typing = false;
  private query = '';
  private matches: Match[] = [];
  /** Index into `matches` of the one in view. */
  private current = -1;
  /** The blocks are still being searched (from the end up). */
  private scanning = false;
  /** Bumped by each search and each close: a scan of an earlier one stops. */
  private generation = 0;

  constructor(
    private readonly screen: () => Renderer | null,
    private readonly width: () => number,
    /** The count or the place changed while nothing was typed (the search went on). */
    private readonly changed: () => void = () => {},
    /** How long the search goes on in one task before keys get their turn (at least a block). */
    private readonly sliceMs = SLICE_MS,
  ) {}

  get active(): boolean {
    return this.open;
  }

  start(): void {
    this.open = true;
    this.typing = true;
    this.query = '';
    this.matches = [];
    this.current = -1;
    this.scanning = false;
    this.generation++;
    this.screen()?.setHighlight('');
  }

  close(): void {
    this.open = false;
    this.scanning = false;
    this.generation++;
    this.screen()?.setHighlight('');
  }

  /** A key while the search is open. */
  key(ev: InputEvent): SearchKey {
    const id = ev.type === 'key' ? keyId(ev.key) : '';
    if (id === 'escape' || id === 'ctrl+c') {
      this.close();
      return 'used';
    }
    if (id === 'ctrl+s') {
      this.start();
      return 'used';
    }
    return this.typing ? this.typed(ev, id) : this.browsing(ev, id);
  }

  /** A key while the text is typed. */
  private typed(ev: InputEvent, id: string): SearchKey {
    if (ev.type === 'text' || ev.type === 'paste') this.query += sanitize(ev.text).replace(/\s+/g, ' ');
    else if (id === 'backspace' || id === 'ctrl+h') this.query = [...this.query].slice(0, -1).join('');
    else if (id === 'enter') this.find();
    return 'used';
  }

  /** A key while moving between matches. */
  private browsing(ev: InputEvent, id: string): SearchKey {
    // Keys pressed fast arrive as one piece of text: `nnn` is three steps.
    if (ev.type === 'text' && /^[nN]+$/.test(ev.text)) {
      for (const ch of ev.text) this.move(ch === 'n' ? -1 : 1);
      return 'used';
    }
    if (id === 'enter') {
      this.close();
      return 'used';
    }
    if (id !== 'pageup' && id !== 'pagedown' && ev.type !== 'wheel') this.close();
    return 'pass';
  }

  private find(): void {
    const screen = this.screen();
    if (!this.query || !screen) {
      this.close();
      return;
    }
    this.typing = false;
    this.matches = [];
    this.current = -1;
    this.scanning = true;
    screen.setHighlight(this.query);
    void this.scan(screen, ++this.generation);
  }

  /** Search the blocks from the last one up, a slice a task; the first match found is shown. */
  private async scan(screen: Renderer, generation: number): Promise<void> {
    const t = screen.transcript;
    let next = t.length - 1;
    while (next >= 0) {
      // At the width of the moment: a resize meanwhile does not have the blocks drawn at two.
      const width = this.width();
      const until = performance.now() + this.sliceMs;
      const found: Match[] = [];
      do {
        const block = t.blockAt(next);
        const offsets = matchesInBlock(t, next, width, this.query);
        for (let k = offsets.length - 1; k >= 0; k--) found.push({ block, offset: offsets[k]! });
        next--;
      } while (next >= 0 && performance.now() < until);
      this.take(found.reverse());
      if (next < 0) break;
      const below = t.blockAt(next + 1);
      await nextTask();
      if (generation !== this.generation) return;
      // Blocks may have come or gone meanwhile: go on above the last one searched.
      const at = t.indexOf(below);
      if (at < 0) break;
      next = at - 1;
    }
    this.scanning = false;
    this.changed();
  }

  /** Matches found above those found before (in order); the first ones found, the nearest, shown. */
  private take(found: Match[]): void {
    if (!found.length) return;
    this.matches = found.concat(this.matches);
    if (this.current < 0) {
      this.current = this.matches.length - 1;
      this.show();
    } else this.current += found.length;
    this.changed();
  }

  /** To the next match up (-1) or down (+1); at either end it stays. */
  private move(d: number): void {
    if (!this.matches.length) return;
    this.current = Math.max(0, Math.min(this.matches.length - 1, this.current + d));
    this.show();
  }

  private show(): void {
    const m = this.matches[this.current];
    if (m) this.screen()?.showAt(m.block, m.offset);
  }

  render(width: number): string[] {
    if (!this.open) return [];
    const q = sanitize(this.query);
    const more = this.scanning ? '\u2026' : '';
    const where = this.typing
      ? '(Enter find, Esc close)'
      : this.matches.length
        ? `${this.current + 1}/${this.matches.length}${more} (n up, N down, Esc close)`
        : this.scanning
          ? 'searching\u2026 (Esc close)'
          : 'no match (Esc close)';
    return [paint(truncate(`search: ${q}${this.typing ? '\u2588' : ''}  ${where}`, width), THEME.queued)];
  }
}
