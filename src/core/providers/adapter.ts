// The interface every wire dialect implements. A provider adapter is the only place that knows
// its wire format: the agent speaks the canonical message model and these shapes.

import type { FinishReason, Message, ProviderKind, ReasoningEffort, ReasoningPart, ReasoningTarget, ToolCall, Usage } from '../types.js';

/** A tool as advertised to the model (already filtered for hidden tools). */
export interface ToolSchema {
  name: string;
  description: string;
  /** JSON Schema object of the arguments. */
  parameters: Record<string, unknown>;
  /** The parameters serialised once with a stable key order (reused for byte-stable prefixes). */
  parametersJson: string;
}

export interface BuildRequestOptions {
  model: string;
  messages: readonly Message[];
  /** null ⇒ omit tools entirely. */
  tools: readonly ToolSchema[] | null;
  stream: boolean;
  disableParallelToolCalls: boolean;
  /** Anthropic max_tokens. */
  maxTokens: number;
  /** Ask for reasoning with this effort (absent: send no reasoning parameter). */
  reasoningEffort?: ReasoningEffort;
  /**
   * The server and model the request goes to (reasoningOrigin): chat reasoning text and extra
   * content go back only where they came from. Absent: none goes back.
   */
  origin?: string;
  /** Write the tool rounds that carry nothing back to `origin` as text (foreign-rounds.ts). */
  foreignRoundsAsText?: boolean;
}

/** A normalised complete (non-streamed) reply. */
export interface ParsedReply {
  content: string | null;
  /** The reasoning to show (never part of the reply's text). */
  reasoning: string | null;
  /** The reasoning to carry back to the dialect that produced it, in the order it came. */
  reasoningParts?: ReasoningPart[];
  toolCalls: ToolCall[];
  finishReason: FinishReason | null;
  usage: Usage | null;
}

/** One piece of a streamed reply, already normalised. */
export interface StreamDelta {
  text?: string;
  /** Reasoning to show as it arrives. */
  reasoning?: string;
  /** Reasoning to carry back, each part once it is complete (e.g. its signature arrived). */
  reasoningParts?: ReasoningPart[];
  /** Tool-call fragments, assembled by index: first id/name win, args are concatenated. */
  toolCalls?: { index: number; id?: string; name?: string; args?: string }[];
  finishReason?: FinishReason;
  usage?: Usage;
  /** The stream reported an error: the turn ends with this message. */
  error?: string;
  /** The stream declared its end (e.g. [DONE], message_stop, response.completed). */
  done?: boolean;
}

/** Per-response stream state: feed it SSE events, get deltas. */
export interface StreamDecoder {
  /** `event` is the SSE event name ('' when absent); `data` the joined data lines. */
  feed(event: string, data: string): StreamDelta | null;
}

export interface ProviderAdapter {
  readonly kind: ProviderKind;
  /** Appended to a base URL: "chat/completions", "messages", "responses". */
  readonly endpointPath: string;
  /** The request body, byte-stable for an unchanged prefix. */
  buildRequest(opts: BuildRequestOptions): string;
  /**
   * The same body as UTF-8 bytes, assembled from per-message bytes encoded once: long tool
   * chains then cost one copy per request instead of re-joining and re-encoding the history.
   * Optional; the agent uses it when present.
   */
  buildRequestBytes?(opts: BuildRequestOptions): Uint8Array;
  /** The same bytes as pieces to send in order (cached per message), for a host that takes them. */
  buildRequestPieces?(opts: BuildRequestOptions): Uint8Array[];
  /** Auth and dialect headers (Content-Type included). */
  headers(apiKey: string): Record<string, string>;
  /**
   * Parse a complete reply body, or throw an Error with a clear message. `origin` names the
   * server and model that answered (reasoningOrigin), for the parts that may only go back there.
   */
  parseReply(body: string, origin?: string): ParsedReply;
  newStreamDecoder(origin?: string): StreamDecoder;
  /** The server's error message inside a non-2xx body, if the body has one. */
  errorMessage(body: string): string | null;
  /** Whether a failed request's answer says the model takes no tools (the agent then retries without them). */
  refusesTools(status: number, body: string): boolean;
  /**
   * A failed request that can go again changed (the chat dialect: chat-parts-answers.ts): the
   * history and `state` changed for it, and the log line that says so; null: give up. `message`
   * is the failure as reported. Absent: never.
   */
  resend?(status: number, body: string, message: string, history: Message[], target: ReasoningTarget, state: PartsState): string | null;
}

/** What a connection learned of its server's answers about the chat parts sent back (chat-parts-answers.ts). */
export interface PartsState {
  /** The server refused chat parts sent back: none is kept from its replies for as long as the connection lasts. */
  reasoningRefused: boolean;
  /** The server wanted chat parts back with other models' tool rounds: those go as text for as long as the connection lasts. */
  foreignRoundsAsText: boolean;
}

export function mapFinishReason(s: unknown): FinishReason | null {
  if (typeof s !== 'string' || s === '') return null;
  switch (s) {
    case 'stop':
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'length':
    case 'max_tokens':
      return 'length';
    case 'tool_calls':
    case 'tool_use':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
    case 'refusal':
      return 'content_filter';
    default:
      return 'other';
  }
}
