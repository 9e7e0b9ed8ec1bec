// The seam for repairing tool calls (AgentConfig.repairToolCalls): the turn calls it around each
// model request and before each call runs; the implementation (tool-call-repair.ts) lives apart,
// so a page that does not pass one bundles none of it.

import type { AgentEvent } from '../events.js';
import type { ParsedReply, ToolSchema } from './adapter.js';

export interface ToolCallRepair {
  /**
   * One model request's repair: the tools offered with it (null: none), where the text it lets
   * out goes (`show`), and where its `repair` events and log lines go.
   */
  reply(
    tools: readonly ToolSchema[] | null,
    show: (text: string) => void,
    emit: (e: AgentEvent) => void,
    log?: (line: string) => void,
  ): ReplyRepair;
  /** Before a call runs: why its arguments (JSON text) do not fit the tool's `parameters` — what the model is told — or null. */
  check(args: string, parameters: Record<string, unknown>): string | null;
}

/** One model request's repair (ToolCallRepair.reply). */
export interface ReplyRepair {
  /** A streamed text delta: emitted now, or held back while it may be the start of a call written as text. */
  text(text: string): void;
  /** The whole reply, its repairs made; held text that was no call is emitted. */
  end(reply: ParsedReply): ParsedReply;
}
