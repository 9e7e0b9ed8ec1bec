// Output of headless runs. text: the reply on stdout, progress lines on stderr (so `clm -o … > f`
// captures just the answer); json: one object at the end; stream-json: one event per line.

import type { AgentState, FinishReason, ToolOutcome, Usage } from '../core/types.js';
import { STREAM_JSON_VERSION, type RunEvents, type RunSummary, type ToolCallRecord } from './events.js';

export interface Out { write(s: string): unknown }

const DIM = '\x1b[2m', RED = '\x1b[31m', YELLOW = '\x1b[33m', RESET = '\x1b[0m';

/** One line of tool arguments, clamped for display. */
export function oneLine(s: string, max = 200): string {
  const t = s.replace(/[\r\n\t]+/g, ' ');
  return t.length > max ? `${t.slice(0, max - 3)}...` : t;
}

export class Tally {
  usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  toolCalls: ToolCallRecord[] = [];
  /** The reply: the assistant text after the last tool round (the json format's `result`). */
  text = '';
  // Pending calls by call id (a server may reuse ids across rounds, hence a queue).
  private open = new Map<string, ToolCallRecord[]>();
  begin(name: string, args: string, id: string) {
    const r: ToolCallRecord = { id, name, args };
    this.toolCalls.push(r);
    const q = this.open.get(id) ?? [];
    q.push(r);
    this.open.set(id, q);
    this.text = '';
  }
  result(id: string, content: string, outcome: ToolOutcome) {
    const r = this.open.get(id)?.shift();
    if (r) { r.outcome = outcome; r.outputBytes = Buffer.byteLength(content); }
  }
  addUsage(u: Usage) {
    this.usage.prompt_tokens += u.promptTokens;
    this.usage.completion_tokens += u.completionTokens;
    this.usage.total_tokens += u.totalTokens;
  }
}

export function textRenderer(stdout: Out, stderr: Out, color: boolean): RunEvents & { endText(): void } {
  const c = (code: string, s: string) => (color ? `${code}${s}${RESET}` : s);
  let last = '\n';
  let reasoningOpen = false;
  const closeReasoning = () => { if (reasoningOpen) { stderr.write('\n'); reasoningOpen = false; } };
  // Progress lines go to stderr; end an open reply line first so a terminal shows them apart.
  const err = (s: string) => { if (!last.endsWith('\n')) { stdout.write('\n'); last = '\n'; } stderr.write(s); };
  return {
    text(t) { closeReasoning(); stdout.write(t); last = t; },
    reasoning(t) { if (!reasoningOpen) reasoningOpen = true; stderr.write(c(DIM, t)); },
    toolBegin(name, args) { closeReasoning(); err(`[tool: ${name} ${oneLine(args)}]\n`); },
    toolResult(name, content, outcome) {
      const bytes = Buffer.byteLength(content);
      if (outcome === 'ok') err(`[result: ${name}, ${bytes} bytes]\n`);
      else err(c(outcome === 'timedout' ? YELLOW : RED, `[${outcome === 'timedout' ? 'timeout' : 'x'} ${name}] ${oneLine(content)}`) + '\n');
    },
    toolBatch() {},
    usage(u) { err(c(DIM, `[${u.promptTokens}+${u.completionTokens} tok${u.tokensPerSec ? `, ${u.tokensPerSec.toFixed(1)} tok/s` : ''}]`) + '\n'); },
    finish(r: FinishReason) {
      if (r === 'length') err(c(YELLOW, '[truncated: hit token limit]') + '\n');
      else if (r === 'content_filter') err(c(RED, '[stopped: content filter]') + '\n');
    },
    state(_s: AgentState) {},
    notice(t) { err(`notice: ${t}\n`); },
    turnDone(status, error) {
      closeReasoning();
      if (status !== 0 && error) err(c(RED, `error: ${error}`) + '\n');
    },
    endText() { if (!last.endsWith('\n')) stdout.write('\n'); },
  };
}

export function summaryJson(s: RunSummary): Record<string, unknown> {
  return {
    type: 'result', version: STREAM_JSON_VERSION, status: s.status, exit_code: s.exitCode, result: s.result,
    ...(s.error ? { error: s.error } : {}),
    usage: s.usage,
    tool_calls: s.toolCalls.map((t) => ({ id: t.id, name: t.name, args: t.args, outcome: t.outcome ?? null, output_bytes: t.outputBytes ?? 0 })),
    session_id: s.sessionId ?? null, model: s.model, provider: s.provider, duration_ms: s.durationMs,
  };
}

export function streamJsonRenderer(stdout: Out): RunEvents & { event(o: Record<string, unknown>): void } {
  const event = (o: Record<string, unknown>) => { stdout.write(JSON.stringify({ version: STREAM_JSON_VERSION, ...o }) + '\n'); };
  return {
    event,
    text: (t) => event({ type: 'text', text: t }),
    reasoning: (t) => event({ type: 'reasoning', text: t }),
    toolBegin: (name, args, id) => event({ type: 'tool_begin', id, name, args }),
    toolResult: (name, content, outcome, id) => event({ type: 'tool_result', id, name, outcome, content }),
    toolBatch: (done, total) => event({ type: 'tool_batch', done, total }),
    usage: (u) => event({ type: 'usage', prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens, tokens_per_sec: u.tokensPerSec > 0 ? u.tokensPerSec : null }),
    finish: (r) => event({ type: 'finish', reason: r }),
    state: (s) => event({ type: 'state', state: s }),
    notice: (t) => event({ type: 'notice', text: t }),
    turnDone: () => {},
  };
}

/** json: nothing until the end. */
export function silentRenderer(): RunEvents {
  const nop = () => {};
  return { text: nop, reasoning: nop, toolBegin: nop, toolResult: nop, toolBatch: nop, usage: nop, finish: nop, state: nop, notice: nop, turnDone: nop };
}
