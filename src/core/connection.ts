// The agent's connection to its model server and the configuration around it: validation, the
// defaults, the connection keys setProvider reads, the request and tool limiters, and the
// compaction threshold.

import { ClmError } from './errors.js';
import type { PartsState, ProviderAdapter } from './providers/adapter.js';
import { dialectFor } from './providers/dialects.js';
import { TokenBucket } from './ratelimit.js';
import { isReasoningEffort, REASONING_EFFORTS, reasoningOrigin } from './reasoning.js';
import type { AgentConfig } from './agent-config.js';
import type { ReasoningTarget } from './types.js';

export const DEFAULT_MODEL = 'local-model';
export const DEFAULT_AUTOCOMPACT_PCT = 70;
/** Threshold in tokens when the context size is unknown (a cost cap). */
export const UNKNOWN_CTX_THRESHOLD = 100000;
export const DEFAULT_MAX_TOKENS = 64000;
/** Tries per model request, the first included. */
export const DEFAULT_MAX_TRIES = 4;
/** The request bucket's rate when only a burst is configured ("never binds"). */
const UNLIMITED_RATE = 1000000;

/**
 * What setProvider takes from its config: each replaces the old value, and one left out returns
 * to the library default, so nothing of the previous provider (its rate limit, its max_tokens)
 * follows the switch. `stream` is the exception: left out, it is kept.
 */
export const CONNECTION_KEYS = [
  'baseUrl',
  'apiKey',
  'provider',
  'providerName',
  'model',
  'contextSize',
  'autocompactPct',
  'maxTokens',
  'disableParallelToolCalls',
  'rateTokensPerSec',
  'rateBurst',
  'reasoningEffort',
] as const satisfies readonly (keyof AgentConfig)[];

export function validateConfig(cfg: AgentConfig): void {
  if (!cfg || typeof cfg !== 'object') throw new ClmError('EINVAL', 'config must be an object');
  // A path is resolved by the host (a browser page: against its own URL, e.g. a same-origin proxy).
  if (typeof cfg.baseUrl !== 'string' || !/^(https?:\/\/|\.{0,2}\/)/i.test(cfg.baseUrl)) {
    throw new ClmError('EINVAL', `baseUrl must be an http(s) URL or a path starting with /, ./ or ../, got ${JSON.stringify(cfg.baseUrl)}`);
  }
  if (cfg.autocompactPct !== undefined && cfg.autocompactPct !== 0 && !(cfg.autocompactPct >= 1 && cfg.autocompactPct <= 99))
    throw new ClmError('EINVAL', 'autocompactPct must be between 1 and 99');
  if (cfg.reasoningEffort !== undefined && !isReasoningEffort(cfg.reasoningEffort)) {
    throw new ClmError(
      'EINVAL',
      `reasoningEffort must be one of ${REASONING_EFFORTS.map((e) => `'${e}'`).join(', ')}, got ${JSON.stringify(cfg.reasoningEffort)}`,
    );
  }
  for (const k of [
    'contextSize',
    'rateTokensPerSec',
    'rateBurst',
    'maxIterations',
    'maxTokens',
    'probeTimeoutMs',
    'firstByteTimeoutMs',
    'streamIdleTimeoutMs',
    'bodyTimeoutMs',
    'maxReplyBytes',
    'maxParallelTools',
  ] as const) {
    const v = cfg[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
      throw new ClmError('EINVAL', `${k} must be a non-negative number`);
  }
}

/**
 * What every model request of a connection (a turn's, a compaction's) takes from it: where it
 * goes, its headers, its tries, its deadlines and size cap (absent ⇒ llm-call's defaults, 0 ⇒ none).
 */
export function requestTarget(conn: Connection): {
  adapter: ProviderAdapter;
  url: string;
  origin: string | undefined;
  headers: Record<string, string>;
  maxTries: number;
  firstByteTimeoutMs?: number;
  streamIdleTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxReplyBytes?: number;
} {
  const { cfg, adapter } = conn;
  return {
    adapter,
    url: cfg.baseUrl,
    // Where the reply's chat parts (reasoning text, extra content) can go back; nowhere once the server refused them.
    origin: conn.reasoningRefused ? undefined : conn.target.origin,
    headers: adapter.headers(cfg.apiKey ?? ''),
    maxTries: cfg.maxTries ?? DEFAULT_MAX_TRIES,
    firstByteTimeoutMs: cfg.firstByteTimeoutMs,
    streamIdleTimeoutMs: cfg.streamIdleTimeoutMs,
    bodyTimeoutMs: cfg.bodyTimeoutMs,
    maxReplyBytes: cfg.maxReplyBytes,
  };
}

/** `cfg` switched to the connection of `next` (see CONNECTION_KEYS). */
export function withConnection(cfg: AgentConfig, next: AgentConfig): AgentConfig {
  const out: AgentConfig = { ...cfg };
  const take = <K extends keyof AgentConfig>(k: K) => {
    out[k] = next[k];
  };
  for (const k of CONNECTION_KEYS) take(k);
  if (next.stream !== undefined) out.stream = next.stream;
  return out;
}

/** The model-request bucket of a connection (cost = body bytes / 4); no rate and no burst ⇒ none. */
export function requestLimiter(cfg: AgentConfig, now: () => number): TokenBucket | null {
  if (!((cfg.rateTokensPerSec ?? 0) > 0 || (cfg.rateBurst ?? 0) > 0)) return null;
  const rate = cfg.rateTokensPerSec && cfg.rateTokensPerSec > 0 ? cfg.rateTokensPerSec : UNLIMITED_RATE;
  return new TokenBucket(rate, cfg.rateBurst && cfg.rateBurst > 0 ? cfg.rateBurst : rate, now);
}

/** The tool-dispatch limiter (calls per second; the burst defaults to the rate). */
export function toolLimiter(cfg: AgentConfig, now: () => number): TokenBucket | null {
  const rate = cfg.toolRatePerSec ?? 0;
  if (!(rate > 0)) return null;
  return new TokenBucket(rate, cfg.toolRateBurst && cfg.toolRateBurst > 0 ? cfg.toolRateBurst : rate, now);
}

/** `used` ≥ autocompactPct % of `max`; with `max` unknown (0), `used` ≥ UNKNOWN_CTX_THRESHOLD; never when nothing is used. */
export function overCompactionThreshold(used: number, max: number, autocompactPct: number | undefined): boolean {
  if (used <= 0) return false;
  if (max <= 0) return used >= UNKNOWN_CTX_THRESHOLD;
  const pct = autocompactPct && autocompactPct > 0 ? autocompactPct : DEFAULT_AUTOCOMPACT_PCT;
  return (used * 100) / max >= pct;
}

/** One connection: its configuration, wire adapter and request limiter, and what was learned on it. */
export interface Connection extends PartsState {
  readonly cfg: AgentConfig;
  readonly adapter: ProviderAdapter;
  /** The wire model id. */
  readonly model: string;
  /** Who its requests go to, for the reasoning they carry back. */
  readonly target: ReasoningTarget;
  readonly limiter: TokenBucket | null;
  /** The model refused tools: requests go without them for as long as this connection lasts. */
  toolsUnsupported: boolean;
  /** Context size the server told (llama.cpp /props), 0 = unknown. */
  ctxLearned: number;
  /** The server has answered something (a probe or a model request). */
  reached: boolean;
}

/** The connection `cfg` describes, in its provider's dialect among `dialects` (ClmError EINVAL when none is). */
export function connect(cfg: AgentConfig, now: () => number, dialects: readonly ProviderAdapter[]): Connection {
  const adapter = dialectFor(dialects, cfg.provider);
  const model = cfg.model || DEFAULT_MODEL;
  return {
    cfg,
    adapter,
    model,
    target: { kind: adapter.kind, origin: reasoningOrigin(cfg.baseUrl, model) },
    limiter: requestLimiter(cfg, now),
    toolsUnsupported: false,
    reasoningRefused: false,
    foreignRoundsAsText: false,
    ctxLearned: 0,
    reached: false,
  };
}
