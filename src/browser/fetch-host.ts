// A Host over the browser's fetch (also in a Worker): streamed bodies, cancel through an
// AbortController, relative URLs resolved against the page, and failures that name their cause
// as far as the browser lets a page tell: a CORS rejection from an unreachable server (told
// apart by a no-cors probe), an HTTP status as a response. Nothing here needs Node.

import { messageOf } from '../core/errors.js';
import type { Cancelable, Host, HostError, HttpHandlers, HttpRequest, HttpResponse } from '../core/host.js';

export interface FetchHostOptions {
  /** Headers added to every request, over the agent's own (e.g. `anthropic-dangerous-direct-browser-access`). */
  headers?: Record<string, string>;
  /** Headers for one request, over `headers` (e.g. a token that changes); may return nothing. */
  requestHeaders?(req: HttpRequest): Record<string, string> | undefined;
  /** fetch's `credentials` (cookies, HTTP auth): `'omit'`, `'same-origin'` (fetch's default) or `'include'`. */
  credentials?: RequestCredentials;
  /** Aborting it cancels every request in flight, and later ones at once (e.g. on leaving the page). */
  signal?: AbortSignal;
  /** What relative URLs resolve against; default `location.href` (the page, or the worker's script). */
  base?: string | URL;
  /** The fetch to use; default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** The agent's debug log lines (request bodies, retries), e.g. `console.debug`. */
  log?(line: string): void;
}

/** Header names the browser sends on its own; asking a CORS preflight to allow them is not needed. */
const SAFELISTED = new Set(['accept', 'accept-language', 'content-language', 'content-type']);

export function createFetchHost(options: FetchHostOptions = {}): Host {
  const o = options;
  const doFetch: typeof fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const log = o.log;
  const host: Host = {
    http(req: HttpRequest, h: HttpHandlers): Cancelable {
      const ac = new AbortController();
      let reported = false;
      const report = (f: () => void) => {
        if (!reported) {
          reported = true;
          o.signal?.removeEventListener('abort', onAbort);
          f();
        }
      };
      const fail = (err: HostError) => report(() => h.onError(err));
      const cancel = () => {
        fail({ code: 'ECANCELED', message: 'cancelled' });
        ac.abort();
      };
      const onAbort = () => cancel();
      if (o.signal?.aborted) {
        queueMicrotask(cancel);
        return { cancel };
      }
      o.signal?.addEventListener('abort', onAbort);
      void send(
        req,
        ac.signal,
        h,
        fail,
        (res) => report(() => h.onResponse(res)),
        () => reported,
      );
      return { cancel };
    },
    setTimer(ms: number, cb: () => void): Cancelable {
      const t = setTimeout(cb, ms);
      return { cancel: () => clearTimeout(t) };
    },
    now: () => performance.now(),
  };
  if (log) host.log = log;
  return host;

  async function send(
    req: HttpRequest,
    signal: AbortSignal,
    h: HttpHandlers,
    fail: (e: HostError) => void,
    respond: (r: HttpResponse) => void,
    done: () => boolean,
  ): Promise<void> {
    let url: URL;
    try {
      url = resolve(req.url);
    } catch (e) {
      fail({ code: 'EINVAL', message: messageOf(e), retryable: false });
      return;
    }
    const headers = new Headers(req.headers);
    for (const extra of [o.headers, o.requestHeaders?.(req)]) {
      for (const [k, v] of Object.entries(extra ?? {})) headers.set(k, v);
    }
    const init: RequestInit = { method: req.body === undefined ? 'GET' : 'POST', headers, signal };
    if (req.body !== undefined) init.body = typeof req.body === 'string' ? req.body : ownBytes(req.body);
    if (o.credentials) init.credentials = o.credentials;
    let res: Response;
    try {
      res = await doFetch(url.href, init);
    } catch (e) {
      if (done()) return;
      const why = await diagnose(url, headers, e, signal);
      if (!done()) fail(why);
      return;
    }
    // Headers iterate with lower-case names.
    const resHeaders: Record<string, string> = Object.fromEntries(res.headers);
    const ok = res.status >= 200 && res.status < 300;
    const chunks: Uint8Array<ArrayBuffer>[] = [];
    if (res.body) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done: end, value } = await reader.read();
          if (end || done()) break;
          chunks.push(value);
          if (ok) h.onData?.(value);
        }
      } catch (e) {
        if (!done())
          fail({ code: 'ECONNRESET', message: `connection lost while reading the response from ${where(url)}: ${messageOf(e)}` });
        return;
      }
    }
    const body = new Uint8Array(await new Blob(chunks).arrayBuffer());
    if (!done()) respond({ status: res.status, headers: resHeaders, body });
  }

  function resolve(raw: string): URL {
    const base = o.base ?? (globalThis as { location?: { href?: string } }).location?.href;
    try {
      return new URL(raw, base);
    } catch {
      const shown = JSON.stringify(raw.replace(/[?#].*$/s, ''));
      throw new Error(
        base === undefined ? `relative URL ${shown} needs a page to resolve against: give createFetchHost a base` : `invalid URL ${shown}`,
      );
    }
  }

  /**
   * fetch rejects with one bare TypeError ("Failed to fetch") for a refused connection and for a
   * CORS rejection alike. A no-cors request tells them apart: it gets an opaque answer from any
   * server that is up, and fails like the first only when nothing answers.
   */
  async function diagnose(url: URL, headers: Headers, e: unknown, signal: AbortSignal): Promise<HostError> {
    // Not retried: the agent would wait 7 s of backoff before saying what the page can say now.
    const failed = (message: string, code = 'ENETWORK'): HostError => ({ code, retryable: false, message });
    const page = pageOrigin();
    const detail = messageOf(e);
    if (page === null)
      return failed(`network error or CORS rejection from ${where(url)}: ${detail} (is the server up, and does it allow this origin?)`);
    if (url.origin === page) return failed(`could not reach ${where(url)}: ${detail} (the server is down or refused the connection)`);
    try {
      await doFetch(url.href, { method: 'HEAD', mode: 'no-cors', credentials: 'omit', cache: 'no-store', signal });
    } catch {
      return failed(
        `could not connect to ${url.origin}: ${detail} (the server is down or refused the connection, ` +
          'or the browser blocked the request: mixed content, Content-Security-Policy connect-src, an extension)',
      );
    }
    // Something answered: the request was refused by CORS.
    const asked = [...headers.keys()].filter((k) => !SAFELISTED.has(k));
    return failed(
      `blocked by CORS: ${url.origin} answered but does not allow requests from ${page} ` +
        `(it must answer with Access-Control-Allow-Origin${asked.length ? ` and allow the headers ${asked.join(', ')}` : ''}, ` +
        'or be reached through a same-origin proxy)',
      'ECORS',
    );
  }
}

/** The page's (or worker's) origin, or null outside a browser. */
function pageOrigin(): string | null {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  return typeof origin === 'string' && origin !== 'null' ? origin : null;
}

/** Scheme, host and path: never the query, which may carry a key. */
function where(url: URL): string {
  return url.origin + url.pathname;
}

/** The bytes as a body fetch accepts: a copy when they live in a SharedArrayBuffer. */
function ownBytes(b: Uint8Array): Uint8Array<ArrayBuffer> {
  return b.buffer instanceof ArrayBuffer ? (b as Uint8Array<ArrayBuffer>) : new Uint8Array(b);
}
