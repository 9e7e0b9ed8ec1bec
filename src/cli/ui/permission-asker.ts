// The permission desk on the screen: the question the desk asks now, drawn above the status bar
// (permission-question.ts: the whole question, a long one in a window PgUp/PgDn move), and the
// rule an answer adds, edited on the line of the answer keys. The desk (permission-desk.ts)
// decides, queues and remembers; this only draws and hands it the keys.

import type { Component } from '../../tui/transcript.js';
import { DESK_KEY_NAMES, editHead, type DeskFront, type DeskKey, type PermissionDesk, type Question } from '../permission-desk.js';
import { QuestionView } from './permission-question.js';

export interface AskerIo {
  /** Record a question and its answer in the transcript. */
  answered(question: string, echo: string): void;
  /** Esc: cancel the running turn. */
  cancelTurn(): void;
  /** Draw again. */
  changed(): void;
  /** Screen rows, to keep a long question to half the screen. */
  rows(): number;
}

/** A key of the screen (its keyId, or typed text) as the desk reads it. */
export function deskKeyOf(id: string, text: string): DeskKey | null {
  if (text) return { ch: text };
  const named = DESK_KEY_NAMES[id];
  if (named) return { name: named };
  const letter = /^(?:shift\+)?([a-z])$/.exec(id)?.[1];
  return letter ? { ch: letter } : null;
}

export class ScreenAsker implements DeskFront, Component {
  readonly asksOutside = true;
  private readonly view: QuestionView;
  private shown: Question | null = null;

  constructor(
    private readonly desk: () => PermissionDesk | null,
    private readonly io: AskerIo,
  ) {
    this.view = new QuestionView(() => io.rows());
  }

  changed(): void {
    this.io.changed();
  }

  answered(question: string, echo: string): void {
    this.io.answered(question, echo);
  }

  cancelTurn(): void {
    this.io.cancelTurn();
  }

  /** PgDn (+1) / PgUp (−1) on a question taller than its window; false when the key is not for it. */
  scroll(pages: number): boolean {
    return !!this.desk()?.active && this.view.scroll(pages);
  }

  render(width: number): string[] {
    const desk = this.desk();
    const q = desk?.current;
    if (!desk || !q) {
      this.shown = null;
      return [];
    }
    if (this.shown !== q) {
      this.shown = q;
      this.view.show(q.text, q.keys);
    }
    const e = desk.editing;
    const edit = e
      ? {
          head: editHead(e),
          draft: e.draft,
          cursor: e.cursor,
        }
      : undefined;
    return this.view.render(width, desk.waiting, edit);
  }
}
