// The candidates of a TAB completion, in columns above the status bar until the next key.

import { paint } from '../../tui/style.js';
import type { Component } from '../../tui/transcript.js';
import { textWidth } from '../../tui/width.js';
import { padEnd, truncate } from '../../tui/wrap.js';
import { THEME } from './theme.js';

export class CompletionList implements Component {
  private items: string[] = [];
  private heading: string | undefined;
  private note: string | undefined;

  constructor(private readonly screenRows: () => number) {}

  get shown(): boolean {
    return this.items.length > 0 || this.note !== undefined;
  }

  show(items: readonly string[], heading?: string): void {
    this.items = [...items];
    this.heading = heading;
    this.note = undefined;
  }

  /** One line instead of candidates (`(live model fetch failed: …)`). */
  say(note: string): void {
    this.items = [];
    this.heading = undefined;
    this.note = note;
  }

  clear(): boolean {
    if (!this.shown) return false;
    this.items = [];
    this.heading = undefined;
    this.note = undefined;
    return true;
  }

  render(width: number): string[] {
    if (!this.shown) return [];
    const out = [''];
    if (this.note !== undefined) {
      out.push(paint(truncate(this.note, width), THEME.meta));
      return out;
    }
    if (this.heading) out.push(paint(truncate(this.heading, width), THEME.meta));
    const maxRows = Math.max(1, Math.floor(this.screenRows() / 3));
    const colW = Math.min(width, Math.max(...this.items.map((s) => textWidth(s))) + 4);
    const cols = Math.max(1, Math.floor(width / colW));
    const rows = Math.ceil(this.items.length / cols);
    const shownRows = Math.min(rows, maxRows);
    for (let r = 0; r < shownRows; r++) {
      let line = '';
      for (let c = 0; c < cols; c++) {
        const it = this.items[r + c * rows];
        if (it !== undefined) line += padEnd(truncate(`  ${it}`, colW), colW);
      }
      out.push(truncate(line.trimEnd(), width));
    }
    if (rows > shownRows) out.push(paint(`  (+${(rows - shownRows) * cols} more)`, THEME.meta));
    return out;
  }
}
