// Startup resolution: which endpoint, key, model and limits the agent gets from the
// flags, the environment and the (profile-merged) configuration.
//
// - model: -m, else the profile's/top-level `model`, else 'local-model';
// - connection provider: --provider, else the provider part of the model spec; none ⇒ the
//   default connection (http://127.0.0.1:8081/v1, kind openai) or just -u;
// - from the provider: url (unless -u), api_key, kind, rate_*, disable_parallel_tool_calls,
//   max_tokens, and models[id] (context_size, autocompact_pct, system_prompt) for the model id;
//   models[id] is looked up on whichever provider supplies the connection, so
//   `--provider p -m id` keeps them;
// - reasoning effort: --reasoning-effort, else the profile's/top-level `reasoning_effort`, else
//   models[id].reasoning_effort; "off" anywhere in that order means none (nothing is sent);
// - key: CLM_API_KEY when set AND non-empty, else the provider's api_key, else '' (an empty
//   variable counts as unset, so it cannot blank out the configured key);
// - -u without a scheme: http:// for a loopback host, refused for any other;
// - URL: base + the dialect path of the kind (/chat/completions, /messages, /responses); a base
//   that already ends in that path is not given it twice.

import { DEFAULT_MODEL } from '../core/agent.js';
import { adapterFor, buildUrl } from '../core/providers/index.js';
import type { ProviderKind, ReasoningEffort } from '../core/types.js';
import { ConfigError } from './errors.js';
import { parseModelSpec } from './model-spec.js';
import type { ClmConfig, ProviderSettings, ReasoningSetting } from './types.js';
import { isTable, own } from './validate.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8081/v1';

export interface ConnectionFlags {
  /** -m */
  model?: string;
  /** --provider */
  provider?: string;
  /** -u */
  url?: string;
  /** --reasoning-effort */
  reasoningEffort?: ReasoningSetting;
}

export interface ConnectionEnv {
  CLM_API_KEY?: string;
}

export interface ConnectionSettings {
  /** Full endpoint: base + dialect path. */
  baseUrl: string;
  /** Base URL without the dialect path. */
  base: string;
  apiKey: string;
  /** Wire dialect. */
  provider: ProviderKind;
  /** The providers[] entry used, if any. */
  providerName?: string;
  model: string;
  contextSize?: number;
  autocompactPct?: number;
  rateTokensPerSec?: number;
  rateBurst?: number;
  disableParallelToolCalls?: boolean;
  maxTokens?: number;
  systemPrompt?: string;
  volatileTools?: string[];
  /** Absent: no reasoning parameter. */
  reasoningEffort?: ReasoningEffort;
  /** Every secret value (clm.secrets strings, api keys, CLM_API_KEY), for redacting logs. */
  secrets: string[];
}

function validBase(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Hosts a schemeless -u may name: this machine, where plain http is what servers speak. */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?(?:[/?#]|$)/i;

/**
 * -u's base URL. Without a scheme, a loopback address (`127.0.0.1:8080/v1`, `localhost:11434`)
 * means http://; another host is refused with the fix, so that an API key
 * never goes out in the clear because https was not guessed.
 */
function flagUrl(url: string): string {
  if (url !== '' && !url.includes('://')) {
    if (LOOPBACK.test(url)) return flagUrl(`http://${url}`);
    throw new ConfigError(`-u: '${url}' has no scheme; use https://${url} (or http:// if the server has no TLS)`);
  }
  if (!validBase(url)) throw new ConfigError(`-u: '${url}' is not an http:// or https:// URL`);
  return url;
}

/** Drop a trailing dialect path so it is not appended twice. */
function stripEndpoint(base: string, kind: ProviderKind): string {
  const trimmed = base.replace(/\/+$/, '');
  const tail = `/${adapterFor(kind).endpointPath}`;
  return trimmed.endsWith(tail) ? trimmed.slice(0, -tail.length) : trimmed;
}

function configured(cfg: ClmConfig | null): string {
  const names = cfg ? Object.keys(cfg.providers).sort() : [];
  return names.length ? names.join(', ') : 'none';
}

/** String leaves of a value, recursively. */
function strings(v: unknown, out: Set<string>, depth = 0): void {
  if (depth > 64) return;
  if (typeof v === 'string') {
    if (v) out.add(v);
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) strings(x, out, depth + 1);
    return;
  }
  if (isTable(v)) for (const x of Object.values(v)) strings(x, out, depth + 1);
}

/** Every string in a clm.secrets table. */
export function secretStrings(secrets: unknown): string[] {
  const out = new Set<string>();
  strings(secrets, out);
  return [...out];
}

/** Every value that must never reach a log or session file. */
export function collectSecrets(cfg: ClmConfig | null, env: ConnectionEnv = {}): string[] {
  const out = new Set<string>();
  if (env.CLM_API_KEY) out.add(env.CLM_API_KEY);
  if (cfg) {
    strings(cfg.secrets, out);
    for (const p of Object.values(cfg.providers)) if (p.apiKey) out.add(p.apiKey);
    for (const s of cfg.mcpServers) if (isTable(s) && typeof s.api_key === 'string' && s.api_key) out.add(s.api_key);
  }
  return [...out];
}

export function resolveConnection(cfg: ClmConfig | null, flags: ConnectionFlags = {}, env: ConnectionEnv = {}): ConnectionSettings {
  // An empty -m is a mistake to report, not a reason to fall back to the configured model.
  const spec = flags.model !== undefined ? flags.model : cfg?.model;
  const parsed = spec !== undefined ? parseModelSpec(spec) : { model: DEFAULT_MODEL };

  let providerName: string | undefined;
  let p: ProviderSettings | undefined;
  if (flags.provider) {
    providerName = flags.provider;
    if (!cfg || !own(cfg.providers, providerName)) {
      throw new ConfigError(`unknown provider '${providerName}' given to --provider (configured: ${configured(cfg)})`);
    }
  } else if (parsed.provider) {
    providerName = parsed.provider;
    if (!cfg || !own(cfg.providers, providerName)) {
      throw new ConfigError(`unknown provider '${providerName}' in model '${spec}' (configured: ${configured(cfg)})`);
    }
  }
  if (providerName && cfg) p = cfg.providers[providerName];

  const kind: ProviderKind = p?.kind ?? 'openai';
  let base: string;
  if (flags.url !== undefined) {
    base = flagUrl(flags.url);
  } else if (p) {
    if (!p.url)
      throw new ConfigError(`provider '${providerName}' has no url (set providers.${providerName}.url in config.lua, or pass -u)`);
    base = p.url;
  } else {
    base = DEFAULT_BASE_URL;
  }
  base = stripEndpoint(base, kind);

  const envKey = env.CLM_API_KEY;
  const apiKey = envKey ? envKey : (p?.apiKey ?? '');

  const conn: ConnectionSettings = {
    baseUrl: buildUrl(base, kind),
    base,
    apiKey,
    provider: kind,
    model: parsed.model,
    secrets: collectSecrets(cfg, env),
  };
  if (providerName) conn.providerName = providerName;
  if (p) {
    if (p.rateTokensPerSec !== undefined) conn.rateTokensPerSec = p.rateTokensPerSec;
    if (p.rateBurst !== undefined) conn.rateBurst = p.rateBurst;
    if (p.disableParallelToolCalls !== undefined) conn.disableParallelToolCalls = p.disableParallelToolCalls;
    if (p.maxTokens !== undefined) conn.maxTokens = p.maxTokens;
  }
  const ms = p && own(p.models, parsed.model) ? p.models[parsed.model] : undefined;
  if (ms?.contextSize !== undefined) conn.contextSize = ms.contextSize;
  if (ms?.autocompactPct !== undefined) conn.autocompactPct = ms.autocompactPct;
  const sp = ms?.systemPrompt ?? cfg?.systemPrompt;
  if (sp !== undefined) conn.systemPrompt = sp;
  if (cfg?.volatileTools) conn.volatileTools = [...cfg.volatileTools];
  const effort = flags.reasoningEffort ?? cfg?.reasoningEffort ?? ms?.reasoningEffort;
  if (effort !== undefined && effort !== 'off') conn.reasoningEffort = effort;
  if (apiKey && !conn.secrets.includes(apiKey)) conn.secrets.push(apiKey);
  return conn;
}
