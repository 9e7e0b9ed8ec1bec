// What a turn works with, apart from the turn: the agent makes one per turn, and the turn and the
// compaction it may run read it. Its own file, so compaction does not depend on the turn's loop.

import type { Connection } from './connection.js';
import type { AgentEvent } from './events.js';
import type { Host } from './host.js';
import type { Gate } from './permission-gate.js';
import type { TokenBucket } from './ratelimit.js';
import type { ToolRegistry } from './tool-registry.js';
import type { Message } from './types.js';

/** What a turn works with; the agent makes one per turn. */
export interface TurnContext {
  readonly host: Host;
  readonly history: Message[];
  readonly registry: ToolRegistry;
  readonly conn: Connection;
  readonly toolLimiter: TokenBucket | null;
  readonly retryBaseMs: number;
  /** Report to the agent's callbacks and subscribers (never throws; nothing goes out once the turn has ended). */
  emit(e: AgentEvent): void;
  overThreshold(): boolean;
  /** The `[context update]` message when one is due (its time stamp is then taken), else null. */
  contextUpdate(): Message | null;
  /** A tool's text for a later user turn (bg_exec). */
  notify(text: string): void;
  /** Who decides gated tool calls, if anyone. */
  permission(): Gate;
  /** Awaited before a round with a call that may change files (AgentOptions.beforeChanges). */
  readonly beforeChanges?: (signal: AbortSignal) => Promise<void>;
  /** An automatic compaction found nothing to fold: said once, not after every turn or round. */
  nothingToAutocompact(): void;
}
