// The permission prompt of the screen: gated tool calls queue and are asked one at a time above
// the status bar,
//
//   allow tool shell_exec: echo hi
//   (y) once  (n) deny  (a) always  (d) never  [esc = deny+cancel]
//
// answered by one key (y/n/a/d, either case, or Esc). The answer is written into the transcript
// with its echo (`-> allowed`). always/never answer the queued requests of the same tool and
// every later one; Esc denies the current and every queued request and cancels the turn. A
// request the agent withdraws (the turn was cancelled or ended) leaves the queue by itself.

import { forTerminal } from '../../core/terminal-text.js';
import type { PermissionDecision, PermissionRequest } from '../../core/types.js';
import { paint } from '../../tui/style.js';
import type { Component } from '../../tui/transcript.js';
import { wrapText } from '../../tui/wrap.js';
import { argsSummary, QUESTION } from '../permission-prompt.js';
import { headLines } from './head-lines.js';
import { THEME } from './theme.js';

/**
 * Keys less than this apart are one run of typing. A question is answered only by a run that
 * began after it showed: typing a prompt for later as a question appears would otherwise answer
 * it (`hello again`: (a) always at its seventh key).
 */
export const TYPING_GAP_MS = 500;

const ANSWERS: Record<string, [PermissionDecision, string]> = {
  y: ['allow_once', '-> allowed'],
  n: ['deny_once', '-> denied'],
  a: ['allow_always', '-> always allowed'],
  d: ['deny_always', '-> always denied'],
};

export interface PermissionIo {
  /** Record a question and its answer in the transcript. */
  answered(question: string, echo: string): void;
  /** Esc: cancel the running turn. */
  cancelTurn(): void;
  /** The prompt changed: draw again. */
  changed(): void;
  /** Secrets masked in what is shown. */
  mask(text: string): string;
  /** Screen rows, to keep a long question to a part of the screen. */
  rows(): number;
}

export class PermissionQueue implements Component {
  private readonly queue: PermissionRequest[] = [];
  private readonly remembered = new Map<string, PermissionDecision>();

  constructor(private readonly io: PermissionIo) {}

  /** A question is on screen (it takes y/n/a/d/Esc; other printable keys are ignored). */
  get active(): boolean {
    return this.queue.length > 0;
  }

  get pending(): number {
    return this.queue.length;
  }

  /** When the questions now on screen began to show (performance.now()); a queue answered one by one keeps it. */
  shownAt = Infinity;

  /** The agent's onPermission. */
  request(req: PermissionRequest): void {
    const known = this.remembered.get(req.name);
    if (known) {
      req.respond(known);
      return;
    }
    if (req.signal.aborted) return;
    if (!this.queue.length) this.shownAt = performance.now();
    this.queue.push(req);
    req.signal.addEventListener('abort', () => this.withdraw(req), { once: true });
    this.io.changed();
  }

  private withdraw(req: PermissionRequest): void {
    const i = this.queue.indexOf(req);
    if (i < 0) return;
    this.queue.splice(i, 1);
    this.io.changed();
  }

  /** The turn ended: nothing more is asked for it. */
  turnEnded(): void {
    if (!this.queue.length) return;
    this.queue.length = 0;
    this.io.changed();
  }

  private question(req: PermissionRequest): string {
    // Bidi controls shown by their code: invisible, or turning text around, they would make the
    // command allowed differ from the one read.
    const args = this.io.mask(forTerminal(argsSummary(req.args)));
    return `allow tool ${req.name}${args ? `: ${args}` : ''}`;
  }

  /** Esc: deny this and every queued request, and cancel the turn. */
  cancel(): void {
    const all = this.queue.splice(0);
    if (!all.length) return;
    this.io.answered(this.question(all[0]!), '-> denied (cancelled)');
    this.io.changed();
    // Cancel first: the denials then find their calls resolved, and nothing more is asked.
    this.io.cancelTurn();
    for (const r of all) r.respond('deny_once');
  }

  /** A typed character while asking; returns whether it answered. */
  answer(ch: string): boolean {
    const req = this.queue[0];
    const a = ANSWERS[ch.toLowerCase()];
    if (!req || !a || ch.length !== 1) return false;
    const [decision, echo] = a;
    this.queue.shift();
    this.io.answered(this.question(req), echo);
    const same: PermissionRequest[] = [];
    if (decision === 'allow_always' || decision === 'deny_always') {
      this.remembered.set(req.name, decision);
      for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.name === req.name) same.unshift(...this.queue.splice(i, 1));
    }
    this.io.changed();
    req.respond(decision);
    for (const r of same) r.respond(decision);
    return true;
  }

  private cache: { req: PermissionRequest; key: string; lines: string[] } | null = null;

  render(width: number): string[] {
    const req = this.queue[0];
    if (!req) return [];
    const max = Math.max(2, Math.floor(this.io.rows() / 3));
    const key = `${width}:${max}:${this.queue.length}`;
    if (this.cache?.req === req && this.cache.key === key) return this.cache.lines;
    const q = headLines(this.question(req), max);
    // A line of megabytes is cut before wrapping: only what fits can be shown.
    const text = q.lines.map((l) => (l.length > max * width * 2 ? l.slice(0, max * width * 2) : l)).join('\n');
    let lines = wrapText(paint(text, THEME.permission), width);
    let more = q.more;
    if (lines.length > max) {
      more += lines.length - max;
      lines = lines.slice(0, max);
    }
    const out = [''].concat(lines);
    if (more) out.push(paint(`  (+${more} more line${more === 1 ? '' : 's'})`, THEME.meta));
    const waiting = this.queue.length - 1;
    out.push(paint(QUESTION + (waiting ? `  (${waiting} more waiting)` : ''), THEME.permission));
    this.cache = { req, key, lines: out };
    return out;
  }
}
