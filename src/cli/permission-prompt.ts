// The permission question of the line REPL and one-shot runs on a terminal, worded as the UI asks it:
//
//   allow tool shell_exec: echo hi
//   (y) once  (n) deny  (a) always  (d) never  [esc = deny+cancel]
//
// answered by one keypress. Requests of parallel calls queue and are asked one at a time;
// always/never are remembered for the session per tool name and answer the queued requests of
// that tool; Esc denies the current and every queued request and cancels the turn; other keys
// are ignored while asking. What is still queued when the turn ends is dropped (the agent has
// resolved those calls itself).

import type { PermissionDecision, PermissionRequest } from '../core/types.js';

export const QUESTION = '(y) once  (n) deny  (a) always  (d) never  [esc = deny+cancel]';

/** A keypress as node:readline's emitKeypressEvents reports it. */
export interface Key {
  sequence?: string;
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
}

export interface PromptIo {
  write(text: string): void;
  /** Deliver single keypresses to `onKey` until unlisten(), none typed before this call. */
  listen(onKey: (k: Key) => void): void;
  unlisten(): void;
  /** Esc: cancel the running turn. */
  cancelTurn(): void;
  /** Ctrl-C while asking: what Ctrl-C does anywhere else. */
  interrupt(): void;
}

const ANSWERS: Record<string, [PermissionDecision, string]> = {
  y: ['allow_once', '-> allowed'],
  n: ['deny_once', '-> denied'],
  a: ['allow_always', '-> always allowed'],
  d: ['deny_always', '-> always denied'],
};

/**
 * Control characters shown, not obeyed: a `\r` or an escape sequence cannot redraw the question,
 * and a bidirectional override (U+202E) cannot hide or turn around part of the command allowed.
 */
function visible(s: string): string {
  return s.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const n = c.charCodeAt(0);
    if (c === '\r') return '\\r';
    return n > 0xff ? `<U+${n.toString(16).toUpperCase()}>` : `\\x${n.toString(16).padStart(2, '0')}`;
  });
}

/** The arguments as the question shows them: one field's value, `key: value` pairs, or the raw text. Never shortened. */
export function argsSummary(args: string): string {
  let v: unknown;
  try {
    v = JSON.parse(args);
  } catch {
    return visible(args.trim());
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return visible(args.trim());
  const entries = Object.entries(v as Record<string, unknown>);
  const text = (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x));
  if (entries.length === 1) return visible(text(entries[0]![1]));
  return visible(entries.map(([k, x]) => `${k}: ${text(x)}`).join('  '));
}

export class PermissionPrompt {
  private readonly queue: PermissionRequest[] = [];
  private current: PermissionRequest | null = null;
  private listening = false;
  /** always/never answers, by tool name, for the rest of the session. */
  private readonly remembered = new Map<string, PermissionDecision>();

  constructor(private readonly io: PromptIo) {}

  /** The agent's onPermission. */
  request(req: PermissionRequest): void {
    const known = this.remembered.get(req.name);
    if (known) {
      req.respond(known);
      return;
    }
    this.queue.push(req);
    if (!this.current) this.next();
  }

  /** The turn ended: nothing more is asked for it. */
  turnEnded(): void {
    this.queue.length = 0;
    this.current = null;
    this.stopListening();
  }

  private next(): void {
    const req = this.queue.shift();
    if (!req) {
      this.current = null;
      this.stopListening();
      return;
    }
    this.current = req;
    const args = argsSummary(req.args);
    // Listening starts before the question is written: it drops what was typed before (a key
    // typed without having seen the question is no answer), and keys arrive only after this.
    if (!this.listening) {
      this.listening = true;
      this.io.listen((k) => this.key(k));
    }
    this.io.write(`allow tool ${visible(req.name)}${args ? `: ${args}` : ''}\n${QUESTION}\n`);
  }

  private key(k: Key): void {
    const req = this.current;
    if (!req) return;
    if (k.ctrl && k.name === 'c') {
      this.io.interrupt();
      return;
    }
    if (k.name === 'escape' || k.sequence === '\x1b') {
      const all = [req, ...this.queue];
      this.queue.length = 0;
      this.current = null;
      this.io.write('-> denied (cancelled)\n');
      this.stopListening();
      // Cancel first: the denials then find their calls resolved, and no next request starts.
      this.io.cancelTurn();
      for (const r of all) r.respond('deny_once');
      return;
    }
    const answer = k.ctrl || k.meta ? undefined : ANSWERS[(k.sequence ?? '').toLowerCase()];
    if (!answer) return;
    const [decision, echo] = answer;
    this.current = null;
    this.io.write(`${echo}\n`);
    const same: PermissionRequest[] = [];
    if (decision === 'allow_always' || decision === 'deny_always') {
      this.remembered.set(req.name, decision);
      for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.name === req.name) same.unshift(...this.queue.splice(i, 1));
    }
    req.respond(decision);
    for (const r of same) r.respond(decision);
    // Answering may have ended the turn (the queue is cleared) or asked the next question already.
    if (!this.current) this.next();
  }

  private stopListening(): void {
    if (!this.listening) return;
    this.listening = false;
    this.io.unlisten();
  }
}
