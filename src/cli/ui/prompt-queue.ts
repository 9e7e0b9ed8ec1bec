// Prompts typed while a turn runs. They wait below the transcript as `you> <text>  (queued)`; at
// each of the original's decision points (a tool round starts or ends, the reply completes) one
// of them is taken — echoed into the transcript as `you> <text>` — and the taken ones become the
// next turn once the agent is idle (joined by a blank line, as the agent joins notifications).
// None taken by then (the turn failed, say): the first waiting one is.

import { type Component, paint, sanitize, truncate } from '../../tui/index.js';
import { THEME } from './theme.js';

export class PromptQueue implements Component {
  private waiting: string[] = [];
  private taken: string[] = [];
  /** The one-line form of each waiting prompt (masked once, not on every frame). */
  private shown = new Map<string, string>();

  constructor(private readonly mask: (s: string) => string) {}

  get size(): number {
    return this.waiting.length;
  }

  get isEmpty(): boolean {
    return !this.waiting.length && !this.taken.length;
  }

  add(text: string): void {
    this.waiting.push(text);
  }

  /** A decision point: take the first waiting prompt (returned for the echo), if any. */
  take(): string | null {
    const t = this.waiting.shift();
    if (t === undefined) return null;
    this.taken.push(t);
    return t;
  }

  /**
   * The agent is idle: the next turn's prompt, and whether it still needs its echo (it was not
   * taken at a decision point). Null when nothing waits.
   */
  next(): { text: string; echoed: boolean } | null {
    if (this.taken.length) {
      const text = this.taken.join('\n\n');
      this.taken = [];
      return { text, echoed: true };
    }
    const t = this.waiting.shift();
    return t === undefined ? null : { text: t, echoed: false };
  }

  /** Put a prompt back at the front (its turn could not start). */
  unshift(text: string, echoed: boolean): void {
    if (echoed) this.taken.unshift(text);
    else this.waiting.unshift(text);
  }

  clear(): void {
    this.waiting = [];
    this.taken = [];
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
      const one = this.oneLine(t);
      const tail = '  (queued)';
      out.push(paint(truncate(`you> ${one}`, Math.max(1, width - tail.length)) + tail, THEME.queued));
    }
    return out;
  }
}
