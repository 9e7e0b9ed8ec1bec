// The permission desk on a line terminal (the REPL, a one-shot run): the question written as
// the desk composes it, then the answer keys,
//
//   allow tool shell_exec: npm test
//     ask    npm test  no rule (default)
//   (y) once  (s) session  (a) always  (n) deny  (d) never  [esc = deny+cancel]
//
// one keypress read in raw mode (what was typed before the question is dropped first, and counts
// as a run of typing that was going on), and the rule an answer adds edited on its own line.

import type { DeskFront, DeskKey, PermissionDesk } from './permission-desk.js';
import { DESK_KEY_NAMES, editHead } from './permission-desk.js';
import { monotonicMs } from '../host/monotonic.js';

/** A keypress as node:readline's emitKeypressEvents reports it. */
export interface Key {
  sequence?: string;
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
}

export interface TerminalIo {
  write(text: string): void;
  /** Deliver single keypresses to `onKey` until unlisten(); returns how many bytes typed before were dropped. */
  listen(onKey: (k: Key) => void): number;
  unlisten(): void;
  /** Esc: cancel the running turn. */
  cancelTurn(): void;
  /** Ctrl-C while asking: what Ctrl-C does anywhere else. */
  interrupt(): void;
}

function deskKey(k: Key): DeskKey | null {
  if (k.ctrl && k.name === 'u') return { name: 'ctrl+u' };
  // node:readline reports Esc with meta set.
  if (k.sequence === '\x1b' || k.name === 'escape') return { name: 'escape' };
  if (k.ctrl || k.meta) return null;
  const named = k.name ? DESK_KEY_NAMES[k.name] : undefined;
  if (named) return { name: named };
  return k.sequence ? { ch: k.sequence } : null;
}

export class TerminalAsker implements DeskFront {
  private listening = false;
  /** The question written last (a question is written once). */
  private shown: { text: string } | null = null;
  private editLine = '';

  constructor(
    private readonly desk: () => PermissionDesk | null,
    private readonly io: TerminalIo,
    /** Whether to ask to run a call the sandbox refused outside it (the REPL: yes; a one-shot run: no). */
    readonly asksOutside = true,
  ) {}

  changed(): void {
    const desk = this.desk();
    const q = desk?.current ?? null;
    if (!desk || !q) {
      this.endEdit();
      this.shown = null;
      if (this.listening) {
        this.listening = false;
        this.io.unlisten();
      }
      return;
    }
    // Listening starts before the question is written: what was typed before is dropped (a key
    // typed without having seen the question is no answer), and keys arrive only after this.
    if (!this.listening) {
      this.listening = true;
      // Keys between questions went to the line editor, unseen here: a run of typing counts
      // from now, begun by what was typed and dropped, if anything.
      desk.endRun();
      const dropped = this.io.listen((k) => this.key(k));
      if (dropped > 0) desk.press(monotonicMs());
    }
    if (this.shown !== q) {
      this.endEdit();
      this.shown = q;
      this.io.write(`${q.text}\n${q.keys}${desk.waiting ? `  (${desk.waiting} more waiting)` : ''}\n`);
    }
    this.drawEdit(desk);
  }

  /** The rule being edited on its own line, the cursor where the person edits; or that line ended. */
  private drawEdit(desk: PermissionDesk): void {
    const e = desk.editing;
    if (!e) return this.endEdit();
    const line = `${editHead(e)}${e.draft}`;
    this.io.write(`\r\x1b[K${line}${e.cursor < e.draft.length ? `\x1b[${e.draft.length - e.cursor}D` : ''}`);
    this.editLine = line;
  }

  private endEdit(): void {
    if (!this.editLine) return;
    this.editLine = '';
    this.io.write('\n');
  }

  answered(question: string, echo: string): void {
    this.endEdit();
    // A queued question settled without being shown is named by its first line.
    const shown = this.shown?.text;
    this.io.write(question === shown ? `${echo}\n` : `${question.split('\n', 1)[0]} ${echo}\n`);
  }

  cancelTurn(): void {
    this.io.cancelTurn();
  }

  private key(k: Key): void {
    const desk = this.desk();
    if (!desk?.active) return;
    if (k.ctrl && k.name === 'c') {
      this.io.interrupt();
      return;
    }
    desk.press(monotonicMs());
    const dk = deskKey(k);
    if (dk && desk.key(dk)) return;
    // A key that answers nothing makes its run typing: the keys after it do not answer either.
    desk.typed();
    if (dk?.name === 'enter') desk.endRun();
  }
}
