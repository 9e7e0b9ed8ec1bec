// The model catalog a provider's server offers (GET …/models, any dialect, with that provider's
// URL and key), for `/model` and its completion. Answers are kept for a minute per agent and
// endpoint, so TAB after TAB asks the server once; a failure is not kept.

import type { Agent, Endpoint } from '../../core/agent.js';
import type { Runtime } from '../runtime.js';

const KEEP_MS = 60_000;

interface Entry {
  at: number;
  ids: Promise<string[]>;
}

// Per agent: a switch of profile closes the old agent (its requests end) and starts afresh.
const cache = new WeakMap<Agent, Map<string, Entry>>();

/**
 * Model ids of the configured provider `provider`, or of the current connection when `provider`
 * is omitted or is the current one (which also covers a -u endpoint). Rejects with the reason
 * (`HTTP 401`, `connect ECONNREFUSED …`, a provider without a url).
 */
export function liveModels(rt: Runtime, provider?: string, o: { fresh?: boolean } = {}): Promise<string[]> {
  const agent = rt.agent;
  let endpoint: Endpoint | undefined;
  let key: string;
  if (provider === undefined || provider === rt.run.providerName) {
    key = `${agent.provider} ${agent.baseUrl}`;
  } else {
    let conn: ReturnType<Runtime['connectionFor']>;
    try {
      conn = rt.connectionFor({ model: `${provider}/_` });
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    endpoint = { baseUrl: conn.baseUrl, provider: conn.provider, apiKey: conn.apiKey };
    key = `${conn.provider} ${conn.baseUrl}`;
  }
  let entries = cache.get(agent);
  if (!entries) cache.set(agent, (entries = new Map()));
  const now = Date.now();
  const hit = entries.get(key);
  if (hit && !o.fresh && now - hit.at < KEEP_MS) return hit.ids;
  const ids = agent.listModels(endpoint);
  const entry = { at: now, ids };
  entries.set(key, entry);
  ids.catch(() => {
    if (entries.get(key) === entry) entries.delete(key);
  });
  return ids;
}
