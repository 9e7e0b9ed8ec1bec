// What every output path of a run passes through before it is shown: the run's secrets (API
// keys, secrets.lua values) masked in everything — replies, reasoning, tool arguments and
// output, notices, errors — and, for a person's terminal (text output, the REPL), control
// characters shown instead of obeyed. json and stream-json keep their values' bytes; only the
// secrets are masked there.

import type { AgentEvent } from '../core/events.js';
import { forTerminal } from '../core/terminal-text.js';
import { maskSecrets, SecretStream } from '../host/redact.js';
import type { RunSummary } from './run-summary.js';

/** The run's secrets, known once the configuration is loaded (none until then). */
export class Masker {
  private list: string[] = [];
  /** More values to mask (a profile switch adds its own). */
  add(secrets: readonly string[]): void {
    for (const s of secrets) if (s && !this.list.includes(s)) this.list.push(s);
  }
  get secrets(): readonly string[] {
    return this.list;
  }
  mask(text: string): string {
    return this.list.length ? maskSecrets(text, this.list) : text;
  }
  stream(): SecretStream {
    return new SecretStream(() => this.list);
  }
}

export interface GuardOptions {
  masker: Masker;
  /** Output for a person's terminal: control characters are escaped. */
  terminal: boolean;
}

/**
 * `show` behind the guard. Streamed text is masked across pieces; what a piece holds back is let
 * out before any other event, so the order of what is shown stays the order of events.
 */
export function guardEvents<E extends { type: string }>(show: (e: E | AgentEvent) => void, o: GuardOptions): (e: E | AgentEvent) => void {
  const out = (t: string) => (o.terminal ? forTerminal(t) : t);
  const clean = (t: string) => out(o.masker.mask(t));
  let text = o.masker.stream();
  let reasoning = o.masker.stream();
  const flushText = () => {
    const t = text.flush();
    if (t) show({ type: 'text', text: out(t) });
  };
  const flushReasoning = () => {
    const r = reasoning.flush();
    if (r) show({ type: 'reasoning', text: out(r) });
  };
  return (ev) => {
    const e = ev as AgentEvent;
    if (e.type === 'text') {
      flushReasoning();
      const t = text.push(e.text);
      if (t) show({ type: 'text', text: out(t) });
      return;
    }
    if (e.type === 'reasoning') {
      flushText();
      const r = reasoning.push(e.text);
      if (r) show({ type: 'reasoning', text: out(r) });
      return;
    }
    flushText();
    flushReasoning();
    switch (e.type) {
      case 'tool_begin':
        show({ ...e, name: clean(e.name), args: clean(e.args) });
        return;
      case 'tool_result':
        show({ ...e, name: clean(e.name), content: clean(e.content) });
        return;
      case 'notice':
        show({ ...e, text: clean(e.text) });
        return;
      case 'connection':
        show(e.detail ? { ...e, detail: clean(e.detail) } : e);
        return;
      case 'compaction':
        show(e.phase === 'failed' ? { ...e, error: clean(e.error) } : e);
        return;
      case 'turn_done':
        text = o.masker.stream();
        reasoning = o.masker.stream();
        show(e.error !== undefined ? { ...e, error: clean(e.error) } : e);
        return;
      default:
        show(ev);
    }
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
