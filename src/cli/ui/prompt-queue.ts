// Prompts typed while a turn runs. They wait below the transcript as `you> <text>  (queued)`,
// and each becomes a turn of its own, in order, as soon as the agent is idle again (it is echoed
// into the transcript as that turn starts). Up on an empty input takes the last one back into the
// input, to edit and send again or to drop.

import { sanitize } from '../../tui/sanitize.js';
import { paint } from '../../tui/style.js';
import type { Component } from '../../tui/transcript.js';
import { truncate } from '../../tui/wrap.js';
import { THEME } from './theme.js';

export class PromptQueue implements Component {
  private waiting: string[] = [];
  /** The one-line form of each waiting prompt (masked once, not on every frame). */
  private shown = new Map<string, string>();

  constructor(private readonly mask: (s: string) => string) {}

  get size(): number {
    return this.waiting.length;
  }

  get isEmpty(): boolean {
    return !this.waiting.length;
  }

  add(text: string): void {
    this.waiting.push(text);
  }

  /** The next prompt to send, or null. */
  next(): string | null {
    return this.waiting.shift() ?? null;
  }

  /** Take the last prompt out again (Up on an empty input: to edit it, or to drop it), or null. */
  takeLast(): string | null {
    return this.waiting.pop() ?? null;
  }

  /** Put a prompt back at the front (its turn could not start). */
  unshift(text: string): void {
    this.waiting.unshift(text);
  }

  clear(): void {
    this.waiting = [];
  }

  private oneLine(t: string): string {
    let one = this.shown.get(t);
    if (one === undefined) {
      one = sanitize(this.mask(t))
        .replace(/\s*\n\s*/g, ' \u23ce ')
        .slice(0, 1000);
      if (this.shown.size > 64) this.shown.clear();
      this.shown.set(t, one);
    }
    return one;
  }

  render(width: number): string[] {
    if (!this.waiting.length) return [];
    const out = [''];
    for (const t of this.waiting) {
      const tail = '  (queued)';
      out.push(paint(truncate(`you> ${this.oneLine(t)}`, Math.max(1, width - tail.length)) + tail, THEME.queued));
    }
    return out;
  }
}
