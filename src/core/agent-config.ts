// The agent's configuration (createAgent's first argument): the connection, the model, limits,
// timeouts, tools and the seams the agent is given. It sits above the shapes it names, so
// types.ts, events.ts and the provider adapters never need it.

import type { ToolCallRepair } from './providers/repair-seam.js';
import type { ProviderKind, ReasoningEffort, ToolDef } from './types.js';

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
  /** Anthropic max_tokens (default 64000); raised when a reasoning budget would not fit under it. */
  maxTokens?: number;
  /**
   * Ask the model to reason with this effort: Responses `reasoning.effort`, OpenAI chat
   * `reasoning_effort`, Anthropic `thinking` with a token budget. Absent: no reasoning
   * parameter; reasoning a server returns anyway is still carried through tool loops.
   */
  reasoningEffort?: ReasoningEffort;
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
  /** How long the body of a reply that is not streamed may take to arrive, from its first byte (default 120000 ms; 0 = no limit). */
  bodyTimeoutMs?: number;
  /** Largest reply accepted, in bytes; a larger one ends the turn with an error (default 64 MiB; 0 = no limit). */
  maxReplyBytes?: number;
  /** Tool calls of one batch that run at once; the rest wait their turn (default 16; 0 = no limit). */
  maxParallelTools?: number;
  /** Tools registered first, e.g. `builtinTools()` from 'clm/node' (they need Node, so the core has none of its own). */
  builtinTools?: ToolDef[];
  /** The provider's configured name (a config's provider table key), for display; absent = unknown. */
  providerName?: string;
  /**
   * After a turn that ends ok or cancelled while over the compaction threshold, compact at once
   * (as a turn of its own, origin 'autocompact'). Off by default: a headless run never does.
   */
  autocompactAtTurnEnd?: boolean;
  /** Clock for the system prompt time stamp (tests). */
  clock?: () => Date;
  /**
   * Repair what models write instead of proper tool calls (calls written as text, broken
   * arguments, misspelt tool names): `repairToolCalls` from 'clm' or 'clm/browser'. Absent: replies
   * are taken as they come.
   */
  repairToolCalls?: ToolCallRepair;
}
