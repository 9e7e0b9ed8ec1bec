// Shared shapes of the engine: messages, tools, callbacks, configuration.

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  name: string;
  /** Arguments as the model sent them: a JSON text (may be malformed). */
  args: string;
}

/** One history entry. A history is a plain array of these. */
export interface Message {
  role: Role;
  content: string | null;
  /** tool role: the call this answers. */
  toolCallId?: string;
  /** tool role: the tool that produced it (not sent on the wire; used for supersede and sessions). */
  toolName?: string;
  /** assistant role: the calls it made. */
  toolCalls?: ToolCall[];
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

export type ToolOutcome = 'ok' | 'failed' | 'timedout';

export type PermissionDecision = 'allow_once' | 'allow_always' | 'deny_once' | 'deny_always';

export interface PermissionRequest {
  readonly name: string;
  readonly args: string;
  /** Answer now or later; exactly once. */
  respond(decision: PermissionDecision): void;
}

/** What a tool implementation receives for one call. */
export interface ToolInvocation {
  readonly name: string;
  /** Raw JSON arguments ("{}" if none). */
  readonly args: string;
  /** Bytes of output kept before "[output truncated]". */
  readonly outputCap: number;
  /** Deadline in ms (0 = none). */
  readonly timeoutMs: number;
  /** Aborted when the call is cancelled or times out. */
  readonly signal: AbortSignal;
  /** Finish with output (string, or bytes which are checked for binary data). Exactly once; later calls are ignored. */
  complete(output: string | Uint8Array): void;
  /** Finish with a failure the model sees as "[tool failed: <message>]". */
  fail(message: string): void;
  /** Whether complete/fail was already accepted (or the call was abandoned). */
  readonly done: boolean;
  /** Queue text to arrive later as a new user turn (bg_exec). */
  notify(text: string): void;
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
  /** Do not advertise to the model. */
  hidden?: boolean;
}

export interface AgentCallbacks {
  onAssistantText?(text: string): void;
  onReasoning?(text: string): void;
  /** `id` is the tool call's id (pairs it with its onToolResult). */
  onToolBegin?(name: string, args: string, id: string): void;
  onPermission?(req: PermissionRequest): void;
  onToolResult?(name: string, content: string, outcome: ToolOutcome, id: string): void;
  onToolBatch?(completed: number, total: number): void;
  onFinishReason?(reason: FinishReason): void;
  onUsage?(usage: Usage): void;
  onConnection?(status: ConnStatus, detail: string | null): void;
  onState?(state: AgentState): void;
  onTurnDone?(status: number): void;
  onNotice?(text: string): void;
  onMessage?(msg: Message): void;
  /**
   * A compaction folded `count` messages, starting at `index` among the non-system messages,
   * into one user message holding `summary` (lets a session log replay it).
   */
  onCompaction?(c: { index: number; count: number; summary: string }): void;
}

/** What agent.stream() yields: the turn's callbacks as values. */
export type AgentEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_begin'; id: string; name: string; args: string }
  | { type: 'tool_result'; id: string; name: string; content: string; outcome: ToolOutcome }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason }
  | { type: 'state'; state: AgentState }
  | { type: 'notice'; text: string }
  | { type: 'done'; status: number; error?: string };

export interface AgentConfig {
  /** Full endpoint URL, e.g. http://127.0.0.1:8080/v1/chat/completions. */
  baseUrl: string;
  apiKey?: string;
  provider?: ProviderKind;
  model?: string;
  systemPrompt?: string;
  stream?: boolean;
  /** Context window in tokens (0/absent = learn from the server or unknown). */
  contextSize?: number;
  /** Auto-compaction threshold in percent of the context (1–99, default 70). */
  autocompactPct?: number;
  /** LLM request token bucket (cost = body bytes / 4); absent/0 = unlimited. */
  rateTokensPerSec?: number;
  rateBurst?: number;
  /** fnmatch patterns of tools whose older results are superseded by newer ones. */
  volatileTools?: string[];
  /** Tool rounds per turn (0/absent = unlimited). */
  maxIterations?: number;
  disableParallelToolCalls?: boolean;
  /** Anthropic max_tokens (default 64000). */
  maxTokens?: number;
  /** Tool-dispatch limiter (calls per second, burst); absent/0 = unlimited. */
  toolRatePerSec?: number;
  toolRateBurst?: number;
  /** Retries of 429/5xx/transport failures before the first byte (default 4 tries in all). */
  maxTries?: number;
  /** How long checkConnection waits for the server (default 5000 ms; 0 = no limit). */
  probeTimeoutMs?: number;
  /** How long a request waits for the first byte of the reply, for a stream its first event (default 300000 ms; 0 = no limit). */
  firstByteTimeoutMs?: number;
  /** Longest gap between two events of a streamed reply; SSE comments do not count (default 120000 ms; 0 = no limit). */
  streamIdleTimeoutMs?: number;
  /** Largest reply accepted, in bytes; a larger one ends the turn with an error (default 64 MiB; 0 = no limit). */
  maxReplyBytes?: number;
  /** Tool calls of one batch that run at once; the rest wait their turn (default 16; 0 = no limit). */
  maxParallelTools?: number;
  /** Tools registered first, e.g. `builtinTools()` from 'clm/node' (they need Node, so the core has none of its own). */
  builtinTools?: ToolDef[];
  /** Provider display name (for logs). */
  providerName?: string;
  /** Clock for the system prompt time stamp (tests). */
  clock?: () => Date;
}
