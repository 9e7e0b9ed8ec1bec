// The Node host (clm_host over node:http/https): keep-alive HTTP with exactly-once reporting,
// one-shot timers, a monotonic clock and the CLM_DEBUG_LOG sink.
//
// Why node:http and not fetch: loading node:http costs ~4 ms, a first fetch() pulls in undici for
// ~25-35 ms, and a one-shot run has a 0.2 s budget. node:https is loaded only for https URLs.

import * as http from 'node:http';
import type * as httpsNs from 'node:https';
import { lazyBuiltin } from './lazy-builtin.js';
import type { Cancelable, Host, HostError, HttpHandlers, HttpRequest } from '../core/host.js';
import { CLM_VERSION } from './version.js';
import { createDebugLog, isDebugLog } from './debug-log.js';
import { monotonicMs } from './monotonic.js';

export interface NodeHostOptions {
  /** Log sink; default createDebugLog() (CLM_DEBUG_LOG). null ⇒ no log. */
  log?: ((line: string) => void) | null;
  /** Abort a request when no byte arrives for this long (default 300 000 ms). */
  idleTimeoutMs?: number;
  /** Response bodies larger than this fail with EFBIG unless a request sets its own maxBytes (default 256 MiB). */
  maxResponseBytes?: number;
  /** Redirects followed per request (default 5). */
  maxRedirects?: number;
  /** Version in the User-Agent (default the package version). */
  version?: string;
}

/** A request's body as buffers to write in order (views, not copies), or undefined for a GET. */
function requestBody(req: HttpRequest): Buffer[] | undefined {
  const view = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  // Pieces are written one after another (one writev): a conversation's body is not joined.
  if (req.bodyPieces) return req.bodyPieces.map(view);
  if (req.body === undefined) return undefined;
  return [typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : view(req.body)];
}

/** Write the body's buffers (one writev while the request is corked) and end the request. */
function endWith(r: http.ClientRequest, body: Buffer[] | undefined): void {
  for (const p of body ?? []) r.write(p);
  r.end();
}

export interface NodeHost extends Host {
  setTimer(ms: number, cb: () => void): Cancelable;
  now(): number;
  /** Close the pooled keep-alive connections (requests still in flight fail); later requests open new ones. */
  close(): void;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials: registered with the log's redactor, dropped on cross-origin redirects. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'cookie']);
const MAX_TIMER_MS = 2_147_483_647; // setTimeout's limit; longer values would fire at once
/** Far below what a Buffer or string can hold: one body must not take the process down. */
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/** node:https on first use, so http-only runs (local llama.cpp, Ollama) never load TLS. */
const https = lazyBuiltin<typeof httpsNs>('node:https');

export function createNodeHost(opts: NodeHostOptions = {}): NodeHost {
  const sink = opts.log === undefined ? createDebugLog() : (opts.log ?? undefined);
  const idleMs = opts.idleTimeoutMs ?? 300_000;
  const hostMaxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxRedirects = opts.maxRedirects ?? 5;
  const userAgent = `clm/${opts.version ?? CLM_VERSION}`;
  // LIFO scheduling hands out the most recently used socket: sequential requests share one connection.
  const agentOpts = { keepAlive: true, scheduling: 'lifo' as const };
  const httpAgent = new http.Agent(agentOpts);
  let httpsAgent: httpsNs.Agent | undefined;
  const agentFor = (u: URL) => (u.protocol === 'https:' ? (httpsAgent ??= new (https().Agent)(agentOpts)) : httpAgent);
  const log = (line: string) => sink?.(line);

  function buildHeaders(req: HttpRequest, hasBody: boolean): Record<string, string> {
    // Defaults first, caller headers replace them case-insensitively (names kept as given).
    const byLower = new Map<string, [string, string]>();
    byLower.set('user-agent', ['User-Agent', req.clientSuffix ? `${userAgent} (tool: ${req.clientSuffix})` : userAgent]);
    // Bodies are read as they come (no decompression): a server that compresses anyway gets its
    // body described as not text by whoever reads it.
    byLower.set('accept-encoding', ['Accept-Encoding', 'identity']);
    if (hasBody) byLower.set('content-type', ['Content-Type', 'application/json']);
    for (const [name, value] of Object.entries(req.headers ?? {})) {
      if (typeof value !== 'string') continue;
      const lower = name.toLowerCase();
      byLower.set(lower, [name, value]);
      if (CREDENTIAL_HEADERS.has(lower) && isDebugLog(sink)) {
        sink.addSecret(value);
        const token = /^\s*\S+\s+(\S+)\s*$/.exec(value)?.[1]; // "Bearer <token>": the token alone too
        if (token) sink.addSecret(token);
      }
    }
    return Object.fromEntries(byLower.values());
  }

  function httpRequest(req: HttpRequest, handlers: HttpHandlers): Cancelable {
    const t0 = monotonicMs();
    const body = requestBody(req);
    const method = body ? 'POST' : 'GET';
    let bodyLength = 0;
    for (const p of body ?? []) bodyLength += p.length;
    let headers = buildHeaders(req, body !== undefined);
    let settled = false;
    let current: http.ClientRequest | undefined;
    let idle: NodeJS.Timeout | undefined;
    let where = '';
    const maxBytes = typeof req.maxBytes === 'number' && req.maxBytes >= 0 ? Math.min(req.maxBytes, hostMaxBytes) : hostMaxBytes;

    // The caller's handlers run inside socket events: whatever they throw stays here.
    const report = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (e) {
        log(`http ${method} ${where}: ${what} handler threw: ${(e as Error)?.stack ?? String(e)}`);
      }
    };
    /** Mark reported; with abort, tear the request down (a finished one keeps its socket for reuse). */
    const settle = (abort = true): boolean => {
      if (settled) return false;
      settled = true;
      if (idle) clearTimeout(idle);
      const r = current;
      current = undefined;
      if (abort && r && !r.destroyed) r.destroy();
      return true;
    };
    const fail = (err: HostError) => {
      if (!settle()) return;
      log(`http ${method} ${where} failed after ${Math.round(monotonicMs() - t0)} ms: ${err.code} ${err.message}`);
      report('onError', () => handlers.onError(err));
    };
    const failFrom = (e: unknown, fallback = 'EIO', retryable?: false) => {
      const err = e as NodeJS.ErrnoException;
      // A name with several addresses that all refused (IPv6 and IPv4 localhost) fails with an
      // AggregateError whose own message is empty: the first attempt's says what happened.
      const inner = e instanceof AggregateError ? (e.errors[0] as Error | undefined)?.message : undefined;
      fail({
        code: typeof err?.code === 'string' ? err.code : fallback,
        message: err?.message || inner || String(e),
        ...(retryable === false ? { retryable } : {}),
      });
    };
    // "No byte for idleMs" ⇒ abort; the clock restarts on every byte received, there is no total limit.
    const touch = () => {
      if (settled) return;
      if (idle) idle.refresh();
      else
        (idle = setTimeout(
          () => fail({ code: 'ETIMEDOUT', message: `no data received for ${Math.round(idleMs / 1000)} s` }),
          idleMs,
        )).unref();
    };

    function start(url: URL, redirectsLeft: number, retried: boolean): void {
      where = url.origin + url.pathname; // never the query: it may carry a key
      let responded = false;
      let r: http.ClientRequest;
      try {
        if (url.protocol !== 'http:' && url.protocol !== 'https:') {
          throw Object.assign(new Error(`unsupported URL protocol '${url.protocol}'`), { code: 'EINVAL' });
        }
        const reqHeaders = body ? { ...headers, 'Content-Length': String(bodyLength) } : headers;
        const mod = url.protocol === 'https:' ? https() : http;
        r = mod.request(url, { method, headers: reqHeaders, agent: agentFor(url) });
      } catch (e) {
        // Bad URL or header: report after this call returns, like any other failure; sending it
        // again would fail the same way.
        queueMicrotask(() => failFrom(e, 'EINVAL', false));
        return;
      }
      current = r;
      touch();

      r.on('error', (e: NodeJS.ErrnoException) => {
        if (settled || current !== r) return;
        // A kept-alive socket the server closed just as we reused it: retry once on a fresh one.
        if (!responded && !retried && r.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
          log(`http ${method} ${where}: stale keep-alive connection, retrying`);
          start(url, redirectsLeft, true);
          return;
        }
        failFrom(e);
      });

      r.on('response', (res) => {
        responded = true;
        if (settled || current !== r) {
          res.resume();
          return;
        }
        touch();
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (REDIRECTS.has(status) && location) {
          res.resume(); // drain: a redirect's body is nobody's business
          if (redirectsLeft <= 0) {
            fail({ code: 'ETOOMANYREDIRECTS', message: `too many redirects (more than ${maxRedirects})` });
            return;
          }
          let next: URL;
          try {
            next = new URL(location, url);
          } catch (e) {
            failFrom(e, 'EINVAL');
            return;
          }
          if (next.origin !== url.origin) headers = withoutCredentials(headers);
          log(`http ${method} ${where} -> ${status} redirect to ${next.origin + next.pathname}`);
          // Like curl's CURL_REDIR_POST_ALL: the method and body survive 301/302/303 too.
          start(next, redirectsLeft - 1, false);
          return;
        }
        const streaming = status >= 200 && status < 300 && handlers.onData !== undefined;
        const chunks: Buffer[] = [];
        let received = 0;
        let ended = false;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          touch();
          received += chunk.length;
          if (received > maxBytes) {
            fail({ code: 'EFBIG', message: `response larger than ${maxBytes} bytes` });
            return;
          }
          chunks.push(chunk);
          if (!streaming) return;
          try {
            handlers.onData!(chunk);
          } catch (e) {
            log(`http ${method} ${where}: onData handler threw: ${(e as Error)?.stack ?? String(e)}`);
            fail({ code: 'EIO', message: `processing the response failed: ${(e as Error)?.message ?? String(e)}` });
          }
        });
        res.on('end', () => {
          ended = true;
          if (settled) return;
          const resBody = Buffer.concat(chunks);
          if (!settle(false)) return;
          log(`http ${method} ${where} -> ${status} (${resBody.length} bytes, ${Math.round(monotonicMs() - t0)} ms)`);
          report('onResponse', () => handlers.onResponse({ status, headers: flattenHeaders(res.headers), body: resBody }));
        });
        res.on('close', () => {
          if (ended || settled) return;
          const e = res.errored as NodeJS.ErrnoException | null;
          fail({ code: e?.code ?? 'ECONNRESET', message: 'connection closed before the response was complete' });
        });
      });

      endWith(r, body);
    }

    let url: URL | undefined;
    try {
      url = new URL(req.url);
    } catch (e) {
      const shown = JSON.stringify(req.url.replace(/[?#].*$/s, ''));
      const code = (e as NodeJS.ErrnoException).code;
      queueMicrotask(() =>
        failFrom(
          Object.assign(new Error(`${(e as Error).message} ${shown}: this host needs an absolute http(s) URL`), { code }),
          'EINVAL',
          false,
        ),
      );
    }
    if (url) start(url, maxRedirects, false);

    return {
      cancel() {
        // Reports synchronously, inside cancel(), and only if nothing was reported before.
        if (!settle()) return;
        log(`http ${method} ${where} cancelled`);
        report('onError', () => handlers.onError({ code: 'ECANCELED', message: 'cancelled' }));
      },
    };
  }

  const host: NodeHost = {
    http: httpRequest,
    bodyPieces: true,
    setTimer(ms: number, cb: () => void): Cancelable {
      const delay = Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_TIMER_MS) : 0;
      let t: NodeJS.Timeout | undefined = setTimeout(() => {
        t = undefined;
        cb();
      }, delay);
      return {
        cancel() {
          if (t) {
            clearTimeout(t);
            t = undefined;
          }
        },
      };
    },
    now: () => monotonicMs(),
    close() {
      httpAgent.destroy();
      httpsAgent?.destroy();
    },
  };
  if (sink) host.log = sink;
  return host;
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())));
}

/** Node already lower-cases names; repeated headers (set-cookie) are joined with ", ". */
function flattenHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
