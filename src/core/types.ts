// Shared shapes of the engine: messages, tools, permissions, callbacks. The events are in
// events.ts, the agent's configuration in agent-config.ts.

import type { E2BIG, EAGAIN, ECANCELED, EIO } from './errors.js';

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  name: string;
  /** Arguments as the model sent them: a JSON text (may be malformed). */
  args: string;
}

/**
 * One history entry, by role. A history is a plain array of these; messages are immutable values
 * (a changed entry is replaced by a new object). `content` is null for an assistant message that
 * only made tool calls, or a restored message that had none.
 */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

export interface SystemMessage {
  role: 'system';
  content: string | null;
  toolCalls?: undefined;
  toolCallId?: undefined;
  toolName?: undefined;
}

export interface UserMessage {
  role: 'user';
  content: string | null;
  toolCalls?: undefined;
  toolCallId?: undefined;
  toolName?: undefined;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  /** The calls it made (absent or empty: none). */
  toolCalls?: ToolCall[];
  /**
   * The provider's reasoning that came with the reply, in the order it came (absent or empty:
   * none): what the dialect that produced it needs back, unchanged, to continue a tool loop.
   * Never part of `content`.
   */
  reasoning?: ReasoningPart[];
  toolCallId?: undefined;
  toolName?: undefined;
}

/**
 * One piece of a reply's reasoning, tagged by the dialect that produced it: only that dialect's
 * requests carry it back. `beforeCall` places it among the message's tool calls: the index of
 * the call it came before (absent or 0: before the text and every call; the number of calls:
 * after the last one).
 */
export type ReasoningPart = ThinkingPart | RedactedThinkingPart | ResponsesReasoningPart | ReasoningTextPart | ExtraContentPart;

/** An Anthropic `thinking` block: the (possibly summarised) thinking and the signature that authenticates it. */
export interface ThinkingPart {
  dialect: 'anthropic';
  type: 'thinking';
  thinking: string;
  signature: string;
  beforeCall?: number;
}

/** An Anthropic `redacted_thinking` block: encrypted thinking, only `data` travels. */
export interface RedactedThinkingPart {
  dialect: 'anthropic';
  type: 'redacted_thinking';
  data: string;
  beforeCall?: number;
}

/**
 * A Responses `reasoning` output item as the server sent it (`id`, `summary`,
 * `encrypted_content`, and whatever else it had): with `store: false` the encrypted content is
 * the only way the model sees its earlier reasoning again.
 */
export interface ResponsesReasoningPart {
  dialect: 'openai-responses';
  type: 'reasoning';
  item: Readonly<Record<string, unknown>>;
  beforeCall?: number;
}

/**
 * The reasoning text of an OpenAI chat reply (`reasoning_content` from DeepSeek, llama.cpp and
 * vLLM; `reasoning` from Groq, Ollama and OpenRouter): unsigned, and known only to the server
 * that sent it, so it goes back only there, to the same model (DeepSeek's thinking mode refuses a
 * tool loop without it; other servers refuse a field they do not know).
 */
export interface ReasoningTextPart {
  dialect: 'openai';
  type: 'reasoning_text';
  /** The field the server sent it in; it goes back under the same name. */
  field: ReasoningTextField;
  /** The whole reasoning of the reply (a stream's deltas joined). */
  text: string;
  /** The server and model that produced it (see reasoningOrigin); requests elsewhere do not carry it. */
  origin: string;
  beforeCall?: number;
}

export type ReasoningTextField = 'reasoning_content' | 'reasoning';

/**
 * The `extra_content` an OpenAI chat server put on one tool call of its reply, or on the reply
 * itself: Gemini's thought signature (`{"google":{"thought_signature":"…"}}`; Vertex's under
 * `vertex`). Opaque: it goes back verbatim, in the place it came, and, like reasoning text,
 * only to the server and model that sent it (Gemini 3 refuses a tool loop whose calls lack it).
 */
export interface ExtraContentPart {
  dialect: 'openai';
  type: 'extra_content';
  /** The JSON value as it came (plain JSON data, never null). */
  value: unknown;
  /** The server and model that produced it (see reasoningOrigin). */
  origin: string;
  /**
   * The call it came on, by its index among the message's tool calls (ids may be missing,
   * repeated or rewritten for the wire; the order of the calls never changes); absent: it came
   * on the message.
   */
  call?: number;
  /** Not used: `call` says where it goes. */
  beforeCall?: number;
}

/** How hard a reasoning model thinks; absent = the server's default, and no reasoning parameter is sent. */
export type ReasoningEffort = 'low' | 'medium' | 'high';

/** Where requests go: their dialect and, for chat parts, the server and model (reasoningOrigin). */
export interface ReasoningTarget {
  kind: ProviderKind;
  origin: string;
}

export interface ToolResultMessage {
  role: 'tool';
  content: string | null;
  /** The call this answers (the engine always sets it; a restored history may lack it). */
  toolCallId?: string;
  /** The tool that produced it (not sent on the wire; used for supersede and sessions). */
  toolName?: string;
  toolCalls?: undefined;
}

export type ProviderKind = 'openai' | 'ollama' | 'anthropic' | 'openai-responses';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'other';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** llama.cpp timings.predicted_per_second, else 0. */
  tokensPerSec: number;
  /** Anthropic: cache read / creation input tokens (already included in promptTokens). */
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
}

export type AgentState = 'idle' | 'thinking' | 'calling_tool' | 'rate_limited' | 'complete' | 'error';

export type ConnStatus = 'checking' | 'online' | 'offline';

/** How a turn (or a compaction) ended: 0, ECANCELED, EIO, E2BIG (iteration limit) or EAGAIN (nothing to fold). */
export type TurnStatus = 0 | typeof ECANCELED | typeof EIO | typeof E2BIG | typeof EAGAIN;

/**
 * What a compaction folded: `count` messages, starting at `index` among the non-system messages,
 * became one user message holding `summary` (a session log replays it on resume).
 */
export interface CompactionRecord {
  index: number;
  count: number;
  summary: string;
}

export type ToolOutcome = 'ok' | 'failed' | 'timedout';

/** Why a call that got a result never ran: the permission was denied, the turn was cancelled first, or no tool has its name. */
export type NotRun = 'denied' | 'cancelled' | 'unknown_tool';

export type PermissionDecision = 'allow_once' | 'allow_always' | 'deny_once' | 'deny_always';

export interface PermissionRequest {
  /** The tool call's id (pairs the request with its tool_begin and tool_result). */
  readonly id: string;
  readonly name: string;
  readonly args: string;
  /** Answer now or later; exactly once. */
  respond(decision: PermissionDecision): void;
  /**
   * Aborted when an answer is no longer needed (the turn was cancelled, the agent closed), so a
   * prompt can be taken off the screen; a respond() after that is ignored.
   */
  readonly signal: AbortSignal;
}

/** A tool call waiting for the permission hook's answer. */
export interface PermissionCallInfo {
  /** The tool call's id (pairs it with its tool_begin and tool_result). */
  readonly id: string;
  readonly name: string;
  readonly args: string;
  /** The tool asks by default: it is not marked `noPrompt`. */
  readonly gated: boolean;
}

/** The permission hook's answer: run the call, or fail it with `[tool failed: REASON]` (default `denied by user`). */
export interface PermissionAnswer {
  allow: boolean;
  reason?: string;
}

/**
 * The promise form of the permission gate: called for every tool call (no-prompt ones too, with
 * `gated` false), it decides. `signal` aborts when the answer is no longer needed (the turn was
 * cancelled, the agent closed).
 */
export type PermissionHook = (request: PermissionCallInfo, signal: AbortSignal) => Promise<PermissionAnswer>;

/** What a tool implementation receives for one call. */
export interface ToolInvocation {
  /** The tool call's id (pairs it with tool_begin and tool_result); absent when no agent made the call. */
  readonly id?: string;
  readonly name: string;
  /** Raw JSON arguments ("{}" if none). */
  readonly args: string;
  /** Bytes of output kept before "[output truncated]". */
  readonly outputCap: number;
  /** Deadline in ms (0 = none). */
  readonly timeoutMs: number;
  /**
   * Aborted when the call is cancelled or times out; the reason is a CallAborted saying which.
   * A cancel ends the turn at once: what the tool reports from its abort listener is recorded
   * (a command's output so far), anything later is not.
   */
  readonly signal: AbortSignal;
  /** Finish with output (string, or bytes which are checked for binary data). Exactly once; later calls are ignored. */
  complete(output: string | Uint8Array): void;
  /** Finish with a failure the model sees as "[tool failed: <message>]". */
  fail(message: string): void;
  /** Whether complete/fail was already accepted (or the call was abandoned). */
  readonly done: boolean;
  /** Queue text to arrive later as a new user turn (bg_exec). */
  notify(text: string): void;
  /**
   * Show how the call is going while it runs (shell_exec: the tail of its output): each report
   * replaces the one before, for display only. Ignored once the call is done. Report at a
   * modest rate (a few times a second): every report is an event for each front end. The
   * engine's invocations always have it; optional so that invocations made elsewhere (a test's,
   * a wrapper's) stay valid.
   */
  progress?(text: string): void;
}

export interface ToolDef {
  name: string;
  description?: string;
  /** JSON Schema of the arguments, as an object or a JSON text; serialised once at registration, so requests stay byte-stable. */
  parameters?: object | string;
  invoke(inv: ToolInvocation): void | Promise<void>;
  /** Output cap in bytes (default 64 KiB, at most 1 MiB). */
  outputCap?: number;
  /** Deadline in ms (0/absent = none). */
  timeoutMs?: number;
  /** The model may pass `timeout_ms` / `output_cap` arguments to override. */
  timeoutOverridable?: boolean;
  outputCapOverridable?: boolean;
  /** Skip the permission gate. */
  noPrompt?: boolean;
  /**
   * The tool changes no file (read_file, list_dir; an MCP tool with `readOnlyHint`): a round of
   * such calls alone does not call AgentOptions.beforeChanges. Absent: it may change files.
   */
  readOnly?: boolean;
  /** Do not advertise to the model. */
  hidden?: boolean;
}

export interface AgentCallbacks {
  onAssistantText?(text: string): void;
  onReasoning?(text: string): void;
  /** `id` is the tool call's id (pairs it with its onToolResult). */
  onToolBegin?(name: string, args: string, id: string): void;
  onPermission?(req: PermissionRequest): void;
  /** The promise form of the gate; when set, it decides every call and onPermission is not called. */
  permission?: PermissionHook;
  onToolResult?(name: string, content: string, outcome: ToolOutcome, id: string): void;
  /** A running call's progress report (see ToolInvocation.progress); `id` pairs it with its onToolBegin. */
  onToolProgress?(name: string, text: string, id: string): void;
  onToolBatch?(completed: number, total: number): void;
  onFinishReason?(reason: FinishReason): void;
  onUsage?(usage: Usage): void;
  onConnection?(status: ConnStatus, detail: string | null): void;
  onState?(state: AgentState): void;
  onTurnDone?(status: TurnStatus): void;
  onNotice?(text: string): void;
  onMessage?(msg: Message): void;
  /** A compaction folded part of the history (lets a session log replay it). */
  onCompaction?(c: CompactionRecord): void;
}
