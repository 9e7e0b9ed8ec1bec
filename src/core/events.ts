// The one event vocabulary of the engine: everything an agent reports, as values. Subscribers
// (agent.subscribe, stream(), run()) receive these; the clm_agent(3) callbacks are derived from
// them in callbacks.ts.

import type { AgentState, CompactionRecord, ConnStatus, FinishReason, Message, NotRun, ToolOutcome, TurnStatus, Usage } from './types.js';

/**
 * Why a turn started: `submit`; `notify` (queued notifications, bg_exec results); `compact` (an
 * explicit compact()); `resume` (the compaction of a resumed conversation before its first
 * prompt); `autocompact` (the end-of-turn compaction of `autocompactAtTurnEnd`).
 */
export type TurnOrigin = 'submit' | 'notify' | 'compact' | 'resume' | 'autocompact';

/** Which compaction: compact() (also for a resumed conversation), between tool rounds, or after a turn. */
export type CompactionKind = 'manual' | 'mid_chain' | 'end_of_turn';

export type CompactionEvent =
  | { type: 'compaction'; kind: CompactionKind; phase: 'started' }
  | {
      type: 'compaction';
      kind: CompactionKind;
      phase: 'succeeded';
      record: CompactionRecord;
      /** The history before and after the fold: messages, and an estimate of its tokens (characters / 4). */
      messagesBefore: number;
      messagesAfter: number;
      tokensBefore: number;
      tokensAfter: number;
    }
  | { type: 'compaction'; kind: CompactionKind; phase: 'failed'; error: string };

export type AgentEvent =
  /** First event of every turn; `prompt` for submit and notify turns. */
  | { type: 'turn_start'; origin: TurnOrigin; prompt?: string }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_begin'; id: string; name: string; args: string }
  /**
   * A running call's progress, for display only (the model never sees it): the tool's latest
   * report (shell_exec: the tail of its output so far), which replaces the one before.
   */
  | { type: 'tool_progress'; id: string; name: string; text: string }
  /** `notRun`: the call never ran (denied, cancelled before it started, no such tool). */
  | { type: 'tool_result'; id: string; name: string; content: string; outcome: ToolOutcome; notRun?: NotRun }
  /** (0, n) when a round of n calls starts, then after each result. */
  | { type: 'tool_batch'; completed: number; total: number }
  /**
   * Per model reply that reports usage. `tokensPerSec`: the server's figure (llama.cpp timings)
   * when it gives one, else measured from the stream (`measured`), else 0.
   */
  | { type: 'usage'; usage: Usage; tokensPerSec: number; measured: boolean }
  | { type: 'finish'; reason: FinishReason }
  | { type: 'state'; state: AgentState }
  | { type: 'notice'; text: string }
  /**
   * What the model wrote was repaired before it was used (AgentConfig.repairToolCalls): a tool
   * call written as text, arguments that were not valid JSON or did not fit the tool's schema, a
   * tool name in another spelling. `text` says what, in one line.
   */
  | { type: 'repair'; text: string }
  /** A message was appended to the history (not for restoreHistory or a compaction's fold). */
  | { type: 'message'; message: Message }
  | CompactionEvent
  | { type: 'connection'; status: ConnStatus; detail: string | null }
  /** Last event of every turn; `error` is lastError when the status is not 0 and there is one. */
  | { type: 'turn_done'; status: TurnStatus; error?: string };

export type AgentEventType = AgentEvent['type'];
