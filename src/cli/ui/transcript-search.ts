// Search in the full-screen transcript (Ctrl-S): a search line below the transcript takes the
// text; Enter finds it from the end up, shows every occurrence in reverse video and brings the
// nearest into view; then n goes on to the next one up (older), N back down (newer), as `?` does
// in less. Esc closes it; any other key closes it and does what it does.

import { type InputEvent, keyId } from '../../tui/keys.js';
import type { Renderer } from '../../tui/renderer.js';
import { matchingLines } from '../../tui/search.js';
import { sanitize } from '../../tui/sanitize.js';
import { paint } from '../../tui/style.js';
import type { Component } from '../../tui/transcript.js';
import { truncate } from '../../tui/wrap.js';
import { THEME } from './theme.js';

/** What a key did: the search used it, or passes it on to the screen (scrolling keeps the search open, any other key closes it). */
export type SearchKey = 'used' | 'pass';

export class TranscriptSearch implements Component {
  private open = false;
  /** Typing the text (before Enter); after it, moving between matches. */
  private typing = false;
  private query = '';
  private matches: number[] = [];
  /** Index into `matches` of the one in view. */
  private current = -1;

  constructor(
    private readonly screen: () => Renderer | null,
    private readonly width: () => number,
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
    this.screen()?.setHighlight('');
  }

  close(): void {
    this.open = false;
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
    this.matches = matchingLines(screen.transcript, this.width(), this.query);
    this.current = this.matches.length;
    screen.setHighlight(this.query);
    this.move(-1);
  }

  /** To the next match up (-1) or down (+1); at either end it stays. */
  private move(d: number): void {
    if (!this.matches.length) return;
    this.current = Math.max(0, Math.min(this.matches.length - 1, this.current + d));
    this.screen()?.showLine(this.matches[this.current]!);
  }

  render(width: number): string[] {
    if (!this.open) return [];
    const q = sanitize(this.query);
    const where = this.typing
      ? '(Enter find, Esc close)'
      : this.matches.length
        ? `${this.current + 1}/${this.matches.length} (n up, N down, Esc close)`
        : 'no match (Esc close)';
    return [paint(truncate(`search: ${q}${this.typing ? '\u2588' : ''}  ${where}`, width), THEME.queued)];
  }
}
