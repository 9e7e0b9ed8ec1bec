// What a one-shot run adds up (the reply, usage, tool calls) and the `result` object the json and
// stream-json formats end with.

import type { AgentEvent } from '../core/events.js';
import type { ToolOutcome } from '../core/types.js';

export const STREAM_JSON_VERSION = 1;

export interface ToolCallRecord {
  /** The model's id for the call. */
  id: string;
  name: string;
  args: string;
  outcome?: ToolOutcome;
  outputBytes?: number;
}

export interface RunSummary {
  status: 'ok' | 'error' | 'cancelled';
  exitCode: number;
  result: string;
  error?: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  toolCalls: ToolCallRecord[];
  sessionId?: string;
  model: string;
  provider: string;
  durationMs: number;
}

export class Tally {
  usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  toolCalls: ToolCallRecord[] = [];
  /** The reply: the assistant text after the last tool round (the json format's `result`). */
  text = '';
  // Pending calls by call id (a server may reuse ids across rounds, hence a queue).
  private open = new Map<string, ToolCallRecord[]>();

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
      case 'usage':
        this.usage.prompt_tokens += e.usage.promptTokens;
        this.usage.completion_tokens += e.usage.completionTokens;
        this.usage.total_tokens += e.usage.totalTokens;
        return;
      default:
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
    })),
    session_id: s.sessionId ?? null,
    model: s.model,
    provider: s.provider,
    duration_ms: s.durationMs,
  };
}
