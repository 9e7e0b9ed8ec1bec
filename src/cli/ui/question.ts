// A question a slash command asks above the status bar, answered by one key:
//
//   undo turn 3? files and conversation go back to before it
//   (y) yes  (n) no  [esc = no]
//
// Esc (or Ctrl-C) answers null; other keys are ignored while it is asked. The question and its
// answer stay in the transcript.

import { paint } from '../../tui/style.js';
import type { Component } from '../../tui/transcript.js';
import { wrapText } from '../../tui/wrap.js';
import type { Answer } from './command-context.js';
import { THEME } from './theme.js';

interface Asking {
  question: string;
  answers: readonly Answer[];
  resolve(key: string | null): void;
}

export class QuestionBox implements Component {
  #asking: Asking | null = null;

  constructor(
    private readonly io: {
      changed(): void;
      /** The question and what was answered (`-> yes`), into the transcript. */
      answered(question: string, echo: string): void;
    },
  ) {}

  get active(): boolean {
    return this.#asking !== null;
  }

  ask(question: string, answers: readonly Answer[]): Promise<string | null> {
    this.#asking?.resolve(null);
    return new Promise((resolve) => {
      this.#asking = { question, answers, resolve };
      this.io.changed();
    });
  }

  /** A key while asking: an answer's key answers; returns whether it did. */
  key(ch: string): boolean {
    const a = this.#asking;
    const hit = a?.answers.find((x) => x.key === ch.toLowerCase());
    if (!a || !hit) return false;
    this.#end(hit.key, `-> ${hit.label}`);
    return true;
  }

  /** Esc, Ctrl-C: no answer. */
  cancel(): void {
    if (this.#asking) this.#end(null, '-> cancelled');
  }

  #end(key: string | null, echo: string): void {
    const a = this.#asking!;
    this.#asking = null;
    this.io.answered(a.question, echo);
    this.io.changed();
    a.resolve(key);
  }

  render(width: number): string[] {
    const a = this.#asking;
    if (!a) return [];
    const keys = `${a.answers.map((x) => `(${x.key}) ${x.label}`).join('  ')}  [esc = cancel]`;
    return ['', ...wrapText(paint(`${a.question}\n${keys}`, THEME.permission), width)];
  }
}
