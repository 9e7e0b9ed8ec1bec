// The network side of http.get / http.post, run in the worker with fetch. Never rejects:
// transport failures (and cancels) come back as { error }. Any HTTP status is a response. A
// request has a time limit of its own, from sending to its body's last byte (HTTP_TIMEOUT_MS):
// a server that never answers, or trickles, must not hold a call until its deadline.

import { HTTP_TIMEOUT_MS, MAX_RESPONSE_BYTES } from './limits.js';

export type HttpResult = { status: number; body: Uint8Array } | { error: string };

export interface HttpRequestSpec {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  signal: AbortSignal;
}

/** `what` (http.get, http.post) names the function in the time limit's message. */
export async function httpRequest(req: HttpRequestSpec, what: string): Promise<HttpResult> {
  const ac = new AbortController();
  const cancel = () => ac.abort();
  req.signal.addEventListener('abort', cancel, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, HTTP_TIMEOUT_MS);
  try {
    const res = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body as Uint8Array<ArrayBuffer> | undefined,
      signal: ac.signal,
      redirect: 'follow',
    });
    const body = await readCapped(res, ac.signal);
    if ('error' in body) return body;
    return { status: res.status, body: body.bytes };
  } catch (e) {
    if (timedOut) return { error: `${what}: no complete response within ${HTTP_TIMEOUT_MS / 1000} s (the limit of one request)` };
    return { error: describe(e, req.signal) };
  } finally {
    clearTimeout(timer);
    req.signal.removeEventListener('abort', cancel);
  }
}

async function readCapped(res: Response, signal: AbortSignal): Promise<{ bytes: Uint8Array } | { error: string }> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > MAX_RESPONSE_BYTES) {
    await res.body?.cancel().catch(() => {});
    return { error: `response body too large (${declared} bytes; the limit is ${MAX_RESPONSE_BYTES})` };
  }
  if (!res.body) return { bytes: new Uint8Array(0) };
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      return { error: `response body too large (over ${MAX_RESPONSE_BYTES} bytes)` };
    }
    chunks.push(value);
    signal.throwIfAborted();
  }
  if (chunks.length === 1) return { bytes: chunks[0] };
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return { bytes: out };
}

function describe(e: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'cancelled';
  const err = e as { message?: string; cause?: { code?: string; message?: string } };
  const cause = err.cause;
  if (cause?.message) return cause.code && !cause.message.includes(cause.code) ? `${cause.code}: ${cause.message}` : cause.message;
  return err.message ?? String(e);
}
