// What the agent asks an endpoint besides model requests: is it there (GET models; llama.cpp
// /props for the context size), and which models does it offer. Any endpoint and dialect, not
// only the agent's own.

import { duration } from './duration.js';
import type { Cancelable, Host } from './host.js';
import type { ProviderAdapter } from './providers/adapter.js';
import { dialectFor } from './providers/dialects.js';
import { modelsUrl, propsUrl } from './providers/endpoint-urls.js';
import { DIALECTS } from './providers/index.js';
import { parseModelsList, parseProps } from './server-info.js';
import { utf8 } from './utf8.js';
import type { ConnStatus, ProviderKind } from './types.js';

/** An endpoint to probe: the full URL as in AgentConfig.baseUrl, its dialect and key. */
export interface Endpoint {
  baseUrl: string;
  provider?: ProviderKind;
  apiKey?: string;
}

export interface ConnectionResult {
  status: ConnStatus;
  detail: string | null;
  ctxMax: number;
}

interface GetResult {
  status?: number;
  body?: string;
  error?: string;
}

export const DEFAULT_PROBE_TIMEOUT_MS = 5000;
/** A models list or /props answer larger than this is not one. */
const PROBE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The GETs one owner has in flight; close() cancels them, and every later answer is 'agent
 * closed'. Each is bounded in time (probeTimeoutMs, read at each GET) and size, so a server
 * that accepts and never answers cannot stall start-up.
 */
export class Probes {
  readonly #inFlight = new Set<Cancelable>();
  #closed = false;

  readonly #host: Host;
  /** The dialects whose endpoints it may ask (for their auth headers). */
  readonly #dialects: readonly ProviderAdapter[];
  readonly #timeoutMs: () => number | undefined;

  constructor(host: Host, dialects: readonly ProviderAdapter[], timeoutMs: () => number | undefined = () => undefined) {
    this.#host = host;
    this.#dialects = dialects;
    this.#timeoutMs = timeoutMs;
  }

  /** GET `url` with the endpoint's auth headers; `onAnswer` when the server answered (any status). */
  get(url: string, endpoint: Endpoint, onAnswer?: () => void): Promise<GetResult> {
    if (this.#closed) return Promise.resolve({ error: 'agent closed' });
    return new Promise((resolve) => {
      let h: Cancelable | null = null;
      let timer: Cancelable | null = null;
      let settled = false;
      const finish = (r: GetResult) => {
        if (settled) return;
        settled = true;
        timer?.cancel();
        if (h) this.#inFlight.delete(h);
        resolve(this.#closed ? { error: 'agent closed' } : r);
      };
      h = this.#host.http(
        { url, headers: dialectFor(this.#dialects, endpoint.provider).headers(endpoint.apiKey ?? ''), maxBytes: PROBE_MAX_BYTES },
        {
          onResponse: (res) => {
            onAnswer?.();
            finish({ status: res.status, body: utf8.decode(res.body) });
          },
          onError: (e) => finish({ error: e.message }),
        },
      );
      if (settled) return;
      this.#inFlight.add(h);
      const ms = this.#timeoutMs() ?? DEFAULT_PROBE_TIMEOUT_MS;
      if (ms > 0 && this.#host.setTimer) {
        const req = h;
        timer = this.#host.setTimer(ms, () => {
          timer = null;
          finish({ error: `no answer within ${duration(ms)} (probe_timeout_ms)` });
          req.cancel();
        });
      }
    });
  }

  close(): void {
    this.#closed = true;
    for (const h of [...this.#inFlight]) h.cancel();
    this.#inFlight.clear();
  }
}

/**
 * GET models: 200–499 ⇒ online, 5xx or a transport error ⇒ offline with the reason. Online
 * with 2xx and `learnCtx` ⇒ also GET /props, whose context size comes back as `ctxMax` (0 = none).
 */
export async function probeConnection(
  probes: Probes,
  endpoint: Endpoint,
  learnCtx: boolean,
  onAnswer?: () => void,
): Promise<ConnectionResult> {
  const res = await probes.get(modelsUrl(endpoint.baseUrl), endpoint, onAnswer);
  if (res.error !== undefined) return { status: 'offline', detail: res.error || 'unreachable', ctxMax: 0 };
  const st = res.status!;
  if (st >= 500) return { status: 'offline', detail: `HTTP ${st}`, ctxMax: 0 };
  if (st >= 200 && st < 300 && learnCtx) {
    const p = await probes.get(propsUrl(endpoint.baseUrl), endpoint, onAnswer);
    const n = p.status && p.status >= 200 && p.status < 300 ? parseProps(p.body) : null;
    return { status: 'online', detail: null, ctxMax: n && n > 0 ? n : 0 };
  }
  return { status: 'online', detail: null, ctxMax: 0 };
}

/** Model ids from GET models, in order; rejects with the transport error, `HTTP N` or a bad shape. */
export async function probeModels(probes: Probes, endpoint: Endpoint, onAnswer?: () => void): Promise<string[]> {
  const res = await probes.get(modelsUrl(endpoint.baseUrl), endpoint, onAnswer);
  if (res.error !== undefined) throw new Error(res.error || 'request failed');
  if (res.status! < 200 || res.status! > 299) throw new Error(`HTTP ${res.status}`);
  const ids = parseModelsList(res.body);
  if (!ids) throw new Error('unexpected response shape (not {"data":[{"id":...}]})');
  return ids;
}

/** The models of any endpoint and dialect, over `host`, without an agent (a /model picker). */
export function listModels(host: Host, endpoint: Endpoint): Promise<string[]> {
  return probeModels(new Probes(host, DIALECTS), endpoint);
}
