// What every output path of a run passes through before it is shown: the run's secrets (API
// keys, secrets.lua values) masked in everything — replies, reasoning, tool arguments and
// output, notices, errors — and, for a person's terminal (text output, the REPL), control
// characters shown instead of obeyed. json and stream-json keep their values' bytes; only the
// secrets are masked there.

import { forTerminal } from '../core/terminal-text.js';
import { maskSecrets, SecretStream } from '../host/redact.js';
import type { RunEvents, RunSummary } from './events.js';

/** The run's secrets, known once the configuration is loaded (empty until then). */
export class Masker {
  private list: readonly string[] = [];
  set(secrets: readonly string[]): void { this.list = [...secrets]; }
  get secrets(): readonly string[] { return this.list; }
  mask(text: string): string { return this.list.length ? maskSecrets(text, this.list) : text; }
  stream(): SecretStream { return new SecretStream(() => this.list); }
}

export interface GuardOptions {
  masker: Masker;
  /** Output for a person's terminal: control characters are escaped. */
  terminal: boolean;
}

/**
 * `ev` behind the guard. Streamed text is masked across pieces; what a piece holds back is let
 * out before any other event, so the order of what is shown stays the order of events.
 */
export function guardEvents(ev: RunEvents, o: GuardOptions): RunEvents {
  const show = (t: string) => (o.terminal ? forTerminal(t) : t);
  const clean = (t: string) => show(o.masker.mask(t));
  let text = o.masker.stream();
  let reasoning = o.masker.stream();
  const settle = () => {
    const t = text.flush();
    if (t) ev.text(show(t));
    const r = reasoning.flush();
    if (r) ev.reasoning(show(r));
  };
  return {
    text(t) { const r = reasoning.flush(); if (r) ev.reasoning(show(r)); const out = text.push(t); if (out) ev.text(show(out)); },
    reasoning(t) { const x = text.flush(); if (x) ev.text(show(x)); const out = reasoning.push(t); if (out) ev.reasoning(show(out)); },
    toolBegin(name, args, id) { settle(); ev.toolBegin(clean(name), clean(args), id); },
    toolResult(name, content, outcome, id) { settle(); ev.toolResult(clean(name), clean(content), outcome, id); },
    toolBatch(done, total) { settle(); ev.toolBatch(done, total); },
    usage(u) { settle(); ev.usage(u); },
    finish(r) { settle(); ev.finish(r); },
    state(s) { settle(); ev.state(s); },
    notice(t) { settle(); ev.notice(clean(t)); },
    turnDone(status, error) {
      settle();
      text = o.masker.stream();
      reasoning = o.masker.stream();
      ev.turnDone(status, clean(error));
    },
  };
}

/** The end-of-run summary with every secret masked (json, stream-json). */
export function guardSummary(s: RunSummary, masker: Masker): RunSummary {
  return {
    ...s,
    result: masker.mask(s.result),
    ...(s.error !== undefined ? { error: masker.mask(s.error) } : {}),
    toolCalls: s.toolCalls.map((c) => ({ ...c, args: masker.mask(c.args) })),
  };
}
