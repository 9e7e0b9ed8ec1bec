// What a one-shot run adds up (the reply, usage, tool calls) and the `result` object the json and
// stream-json formats end with.

import type { AgentEvent } from '../core/events.js';
import type { ToolOutcome } from '../core/types.js';
import type { Decided } from './permission-desk.js';
import type { EndSignal } from './signal-handlers.js';

export const STREAM_JSON_VERSION = 1;

export interface ToolCallRecord {
  /** The model's id for the call. */
  id: string;
  name: string;
  args: string;
  outcome?: ToolOutcome;
  outputBytes?: number;
  /** How the call was decided (a rule, the person, the default). */
  permission?: Decided;
  /** How it ran in the sandbox (absent: it did not run — denied, refused by the policy). */
  sandbox?: string;
}

export interface RunSummary {
  status: 'ok' | 'error' | 'cancelled';
  exitCode: number;
  result: string;
  error?: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  toolCalls: ToolCallRecord[];
  /** Repairs of what the model wrote (tool calls written as text, broken arguments, misspelt tool names). */
  repairs: number;
  sessionId?: string;
  /** The turn's checkpoint (`clm undo <session>` takes it back), when its tools may have changed files. */
  checkpoint?: { turn: number; files: number };
  model: string;
  provider: string;
  durationMs: number;
}

export class Tally {
  usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  toolCalls: ToolCallRecord[] = [];
  repairs = 0;
  /** The reply: the assistant text after the last tool round (the json format's `result`). */
  text = '';
  // Pending calls by call id (a server may reuse ids across rounds, hence a queue).
  private open = new Map<string, ToolCallRecord[]>();

  /** How the open call `id` was decided. */
  decided(id: string, d: Decided): void {
    const q = this.open.get(id);
    const r = q?.[q.length - 1];
    if (r) r.permission = d;
  }

  event(e: AgentEvent): void {
    switch (e.type) {
      case 'text':
        this.text += e.text;
        return;
      case 'tool_begin': {
        const r: ToolCallRecord = { id: e.id, name: e.name, args: e.args };
        this.toolCalls.push(r);
        const q = this.open.get(e.id) ?? [];
        q.push(r);
        this.open.set(e.id, q);
        this.text = '';
        return;
      }
      case 'tool_result': {
        const r = this.open.get(e.id)?.shift();
        if (r) {
          r.outcome = e.outcome;
          r.outputBytes = Buffer.byteLength(e.content);
        }
        return;
      }
      case 'repair':
        this.repairs++;
        return;
      case 'usage':
        this.usage.prompt_tokens += e.usage.promptTokens;
        this.usage.completion_tokens += e.usage.completionTokens;
        this.usage.total_tokens += e.usage.totalTokens;
        return;
      default:
    }
  }

  /** How the call `id` ran (the latest call of that id). */
  ran(id: string, mode: string): void {
    for (let i = this.toolCalls.length - 1; i >= 0; i--) {
      if (this.toolCalls[i]!.id !== id) continue;
      this.toolCalls[i]!.sandbox = mode;
      return;
    }
  }
}

export function summaryJson(s: RunSummary): Record<string, unknown> {
  return {
    type: 'result',
    version: STREAM_JSON_VERSION,
    status: s.status,
    exit_code: s.exitCode,
    result: s.result,
    ...(s.error ? { error: s.error } : {}),
    usage: s.usage,
    tool_calls: s.toolCalls.map((t) => ({
      id: t.id,
      name: t.name,
      args: t.args,
      outcome: t.outcome ?? null,
      output_bytes: t.outputBytes ?? 0,
      permission: t.permission ? permissionJson(t.permission) : null,
      sandbox: t.sandbox ?? null,
    })),
    repairs: s.repairs,
    session_id: s.sessionId ?? null,
    checkpoint: s.checkpoint && s.sessionId ? { session_id: s.sessionId, turn: s.checkpoint.turn, files: s.checkpoint.files } : null,
    model: s.model,
    provider: s.provider,
    duration_ms: s.durationMs,
  };
}

/** How a call was decided, as json and stream-json say it: `{decision, by, rule?, source?, answer?}`. */
export function permissionJson(d: Decided): Record<string, unknown> {
  return {
    decision: d.allow ? 'allow' : 'deny',
    by: d.by,
    ...(d.rule ? { rule: d.rule, source: d.source } : {}),
    ...(d.answer ? { answer: d.answer } : {}),
  };
}

/** The result of a run a signal ended, with what the run had done by then. */
export function signalSummary(
  signal: EndSignal,
  exitCode: number,
  tally: Tally,
  known: Pick<RunSummary, 'sessionId' | 'model' | 'provider' | 'durationMs'>,
): RunSummary {
  return {
    status: 'cancelled',
    exitCode,
    result: tally.text,
    repairs: tally.repairs,
    // Ctrl-C is the user's own doing; SIGTERM and SIGHUP came from elsewhere and are named.
    error: signal === 'SIGINT' ? undefined : `ended by ${signal}`,
    usage: tally.usage,
    toolCalls: tally.toolCalls,
    ...known,
  };
}

/** The exit status the printed result object names, once it is out. */
let printed: number | null = null;

/** Print the result object as the run's last line, once per process (a second one is dropped). */
export function printResult(out: { write(s: string, cb?: () => void): unknown }, s: RunSummary, then?: () => void): void {
  if (printed !== null) return;
  printed = s.exitCode;
  out.write(`${JSON.stringify(summaryJson(s))}\n`, then);
}

/**
 * End the process on a signal with its result object, once it is written (or 2 s later, for a
 * reader that does not read). A result printed before (the run ended meanwhile) stands: the
 * process then exits with the status that one names.
 */
export function exitWithResult(out: { write(s: string, cb?: () => void): unknown }, s: RunSummary): void {
  const code = printed ?? s.exitCode;
  const exit = () => process.exit(code);
  if (printed !== null) return exit();
  printResult(out, s, exit);
  setTimeout(exit, 2000).unref();
}
