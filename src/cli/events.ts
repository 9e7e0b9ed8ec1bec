// What a run reports, independent of how it is shown: the renderers (text, json, stream-json,
// REPL) receive these and the runtime produces them from the agent's callbacks.

import type { AgentState, FinishReason, ToolOutcome, Usage } from '../core/types.js';

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

export interface RunEvents {
  text(t: string): void;
  reasoning(t: string): void;
  toolBegin(name: string, args: string, id: string): void;
  toolResult(name: string, content: string, outcome: ToolOutcome, id: string): void;
  toolBatch(done: number, total: number): void;
  usage(u: Usage): void;
  finish(r: FinishReason): void;
  state(s: AgentState): void;
  notice(text: string): void;
  /** A turn ended (status as onTurnDone). */
  turnDone(status: number, error: string): void;
}
