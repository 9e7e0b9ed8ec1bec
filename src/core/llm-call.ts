// One model request: POST through the host, retries with exponential backoff for 429, 5xx and
// transport failures before the first streamed byte (honouring Retry-After; a refused connection
// to a server never reached fails at once), streamed or whole reply decoded through the provider
// adapter into one ParsedReply, and the stream's pace measured (completion tokens per second
// between the first and the last content delta).
//
// Every request ends: a first-byte deadline (no byte of the reply, or for a stream no event,
// within firstByteTimeoutMs — keep-alive comments do not count), a stream idle deadline (no
// event for streamIdleTimeoutMs after the first), a deadline for a whole reply's body once its
// first byte came (bodyTimeoutMs: a body that trickles would restart an idle timeout for ever),
// and a size cap (maxReplyBytes). Nothing the reply contains can throw out of here: a decoding
// failure fails the request, and a body that is not text is described, never shown.

import { duration } from './duration.js';
import { messageOf } from './errors.js';
import type { Cancelable, Host, HostError, HttpResponse } from './host.js';
import type { ParsedReply, ProviderAdapter, StreamDecoder } from './providers/adapter.js';
import { snippet } from './providers/util.js';
import { SseReader } from './sse.js';
import { utf8 } from './utf8.js';
import type { FinishReason, ReasoningPart, ToolCall, Usage } from './types.js';

export const MAX_RETRY_WAIT_MS = 60000;
/** Default wait for the first byte of a reply (for a stream: its first event). */
export const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 300_000;
/** Default longest gap between two events of a streamed reply. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 120_000;
/** Default time a whole (not streamed) reply's body may take to arrive, from its first byte. */
export const DEFAULT_BODY_TIMEOUT_MS = 120_000;
/** Default cap on one reply's size in bytes (as received). */
export const DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024;

export interface LlmFailure {
  message: string;
  /** HTTP status when the server answered. */
  status?: number;
  body?: string;
  cancelled?: boolean;
}

/** A request's body: text, bytes, or bytes in pieces sent in order (to a host that takes them). */
export type RequestBody = string | Uint8Array | readonly Uint8Array[];

/** The body's size: characters of text, else bytes. */
export const bodySize = (b: RequestBody): number => (typeof b === 'string' ? b.length : [b].flat().reduce((n, p) => n + p.byteLength, 0));

/** The body as text (the debug log). */
export const bodyText = (b: RequestBody): string =>
  typeof b === 'string'
    ? b
    : [b]
        .flat()
        .map((p) => utf8.decode(p))
        .join('');

/** How a request ended: the reply, or why there is none. */
export type LlmResult =
  | {
      ok: true;
      reply: ParsedReply;
      /** The reply arrived as stream deltas (already reported through onText/onReasoning). */
      streamed: boolean;
      /** Measured from the stream; 0 when not streamed, without usage, or too short to tell. */
      tokensPerSec: number;
    }
  | { ok: false; failure: LlmFailure };

export interface LlmCallOptions {
  host: Host;
  adapter: ProviderAdapter;
  url: string;
  /** The server and model answering (reasoningOrigin), for the reasoning parts the reply yields. */
  origin?: string;
  headers: Record<string, string>;
  body: RequestBody;
  stream: boolean;
  /** Tries in all (1 = no retry). */
  maxTries: number;
  /**
   * The server has not answered anything yet: a refused connection is then a wrong URL or a
   * server that is not running, not a blip, and fails at once instead of being retried.
   */
  firstContact?: boolean;
  retryBaseMs: number;
  /** 0 = no limit; absent = the defaults above. */
  firstByteTimeoutMs?: number;
  streamIdleTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxReplyBytes?: number;
  /** A retry wait begins (the agent shows RATE_LIMITED). */
  onRetryWait?(ms: number, reason: string): void;
  /** The wait ended and the request is sent again. */
  onRetrySend?(): void;
  onText?(text: string): void;
  onReasoning?(text: string): void;
  /**
   * `streamed`: the reply arrived as stream deltas (already reported through onText/onReasoning);
   * `tokensPerSec` as in LlmResult. onDone or onFail is called once, unless abort() came first.
   */
  onDone(reply: ParsedReply, streamed: boolean, tokensPerSec: number): void;
  onFail(f: LlmFailure): void;
}

const CUT_SHORT = 'stream ended before the reply was complete (connection closed mid-stream)';

/** Retry-After in ms (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(v: string | undefined, now = Date.now()): number | null {
  if (!v) return null;
  const s = v.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(parseFloat(s) * 1000);
  const t = Date.parse(s);
  return Number.isFinite(t) ? Math.max(0, t - now) : null;
}

export function backoffMs(attempt: number, base: number): number {
  return Math.min(MAX_RETRY_WAIT_MS, base * 2 ** (attempt - 1));
}

class StreamAssembler {
  readonly #decoder: StreamDecoder;
  #text = '';
  #reasoning = '';
  #reasoningParts: ReasoningPart[] = [];
  #calls = new Map<number, { id: string; name: string; args: string }>();
  finish: FinishReason | null = null;
  #usage: Usage | null = null;
  error: string | null = null;
  done = false;
  deltas = 0;
  /** The latest event that did not end the stream: what arrived, should the reply be empty. */
  seen = '';
  /** When the first and the latest content (text, reasoning, tool call) delta arrived. */
  #firstContentAt = -1;
  #lastContentAt = -1;
  readonly #o: LlmCallOptions;
  readonly #alive: () => boolean;
  constructor(adapter: ProviderAdapter, o: LlmCallOptions, alive: () => boolean) {
    this.#o = o;
    this.#alive = alive;
    this.#decoder = adapter.newStreamDecoder(o.origin);
  }
  feed(event: string, data: string): void {
    if (this.error || !this.#alive()) return;
    const d = this.#decoder.feed(event, data);
    if (!d?.done) this.seen = data;
    if (!d) return;
    this.deltas++;
    if (d.error) {
      this.error = d.error;
      return;
    }
    if (d.usage) this.#usage = d.usage;
    if (d.finishReason) this.finish = d.finishReason;
    if (d.done) this.done = true;
    if (d.text || d.reasoning || d.toolCalls?.length) {
      const t = now(this.#o.host);
      if (this.#firstContentAt < 0) this.#firstContentAt = t;
      this.#lastContentAt = t;
    }
    if (d.reasoning) {
      this.#reasoning += d.reasoning;
      this.#o.onReasoning?.(d.reasoning);
    }
    if (d.reasoningParts) this.#reasoningParts.push(...d.reasoningParts);
    if (d.text) {
      this.#text += d.text;
      this.#o.onText?.(d.text);
    }
    for (const tc of d.toolCalls ?? []) {
      if (tc.index < 0) continue;
      let acc = this.#calls.get(tc.index);
      if (!acc) {
        acc = { id: '', name: '', args: '' };
        this.#calls.set(tc.index, acc);
      }
      if (tc.id && !acc.id) acc.id = tc.id;
      if (tc.name && !acc.name) acc.name = tc.name;
      if (tc.args) acc.args += tc.args;
    }
  }
  result(): ParsedReply {
    const toolCalls: ToolCall[] = [...this.#calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, c], i) => ({ id: c.id || `call_${i + 1}`, name: c.name, args: c.args || '{}' }));
    return {
      content: this.#text || (toolCalls.length ? null : this.#text),
      reasoning: this.#reasoning || null,
      ...(this.#reasoningParts.length ? { reasoningParts: this.#reasoningParts } : {}),
      toolCalls,
      finishReason: this.finish,
      usage: this.#usage,
    };
  }
  /** The first delta follows the first token, so n tokens took n − 1 intervals. */
  tokensPerSec(): number {
    const n = this.#usage?.completionTokens ?? 0;
    const ms = this.#lastContentAt - this.#firstContentAt;
    return n > 1 && ms > 0 ? ((n - 1) * 1000) / ms : 0;
  }
}

export class LlmCall {
  #attempt = 0;
  #http: Cancelable | null = null;
  #timer: Cancelable | null = null;
  /** The first-byte or stream-idle deadline of the current attempt. */
  #deadline: Cancelable | null = null;
  #settled = false;

  readonly #o: LlmCallOptions;

  constructor(o: LlmCallOptions) {
    this.#o = o;
  }

  get #maxBytes(): number {
    return limit(this.#o.maxReplyBytes, DEFAULT_MAX_REPLY_BYTES);
  }

  /** (Re)start the deadline; 0 ms = none. `extend` may put it off (returns true) when it fires. */
  #arm(ms: number, message: string, extend?: () => boolean): void {
    this.#disarm();
    const setTimer = this.#o.host.setTimer;
    if (ms <= 0 || !setTimer || this.#settled) return;
    this.#deadline = setTimer(ms, () => {
      this.#deadline = null;
      if (this.#settled || extend?.()) return;
      this.#fail({ message });
    });
  }

  #disarm(): void {
    this.#deadline?.cancel();
    this.#deadline = null;
  }

  start(): void {
    this.#attempt++;
    const o = this.#o;
    let sse: SseReader | null = null;
    let asm: StreamAssembler | null = null;
    let gotData = false;
    let received = 0;
    let events = 0;
    const alive = () => !this.#settled;
    const firstMs = limit(o.firstByteTimeoutMs, DEFAULT_FIRST_BYTE_TIMEOUT_MS);
    const idleMs = limit(o.streamIdleTimeoutMs, DEFAULT_STREAM_IDLE_TIMEOUT_MS);
    const maxBytes = this.#maxBytes;
    if (o.stream) {
      asm = new StreamAssembler(o.adapter, o, alive);
      const a = asm;
      let lastEvent = 0;
      const idleMessage = `the stream stalled: no event for ${duration(idleMs)} (stream_idle_timeout_ms)`;
      // One timer for the whole stream: when it fires early (events came meanwhile) it waits the rest.
      const watchIdle = (ms: number) =>
        this.#arm(ms, idleMessage, () => {
          const left = lastEvent + idleMs - now(o.host);
          if (left <= 0) return false;
          watchIdle(left);
          return true;
        });
      sse = new SseReader((ev, data) => {
        // Events, not bytes, keep a stream alive: a server sending only comments is stuck.
        lastEvent = now(o.host);
        if (events++ === 0) watchIdle(idleMs);
        a.feed(ev, data);
      });
    }
    this.#arm(
      firstMs,
      `no reply within ${duration(firstMs)} (first_byte_timeout_ms)${o.stream ? '; the server accepted the request but sent no event' : ''}`,
    );
    this.#http = o.host.http(
      {
        url: o.url,
        ...(Array.isArray(o.body) ? { bodyPieces: o.body } : { body: o.body as string | Uint8Array }),
        headers: o.headers,
        maxBytes: maxBytes > 0 ? maxBytes : undefined,
      },
      {
        onData: (chunk) => {
          if (this.#settled) return;
          gotData = true;
          received += chunk.byteLength;
          if (maxBytes > 0 && received > maxBytes) {
            this.#fail({ message: tooLarge(maxBytes) });
            return;
          }
          if (!sse) {
            // A whole reply: its first byte ends the wait, and the rest has a deadline of its own.
            if (received === chunk.byteLength) {
              const ms = limit(o.bodyTimeoutMs, DEFAULT_BODY_TIMEOUT_MS);
              this.#arm(ms, `the reply did not arrive whole within ${duration(ms)} of its first byte (body_timeout_ms)`);
            }
            return;
          }
          try {
            sse.push(chunk);
          } catch (e) {
            this.#fail({ message: `the reply could not be read: ${messageOf(e)}` });
          }
        },
        onResponse: (res) => {
          this.#http = null;
          if (this.#settled) return;
          this.#disarm();
          try {
            this.#response(res, sse, asm);
          } catch (e) {
            this.#fail({ message: `the reply could not be read: ${messageOf(e)}`, status: res.status });
          }
        },
        onError: (err) => {
          this.#http = null;
          if (this.#settled) return;
          // This attempt is over: its deadline must not fire during a retry wait.
          this.#disarm();
          this.#transportError(err, gotData);
        },
      },
    );
  }

  /**
   * The request is over: its timers stop and a transfer still in flight is cancelled (its report
   * is then ignored). False when it was over already.
   */
  #end(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#disarm();
    this.#timer?.cancel();
    this.#timer = null;
    const h = this.#http;
    this.#http = null;
    h?.cancel();
    return true;
  }

  /** The request's own credentials never appear in a failure (an error body may echo the key). */
  #masked(f: LlmFailure): LlmFailure {
    const secrets = credentials(this.#o.headers);
    if (!secrets.length) return f;
    const mask = (t: string) => {
      for (const s of secrets) t = t.split(s).join('[REDACTED]');
      return t;
    };
    const out: LlmFailure = { ...f, message: mask(f.message) };
    if (f.body !== undefined) out.body = mask(f.body);
    return out;
  }

  #response(res: HttpResponse, sse: SseReader | null, asm: StreamAssembler | null): void {
    const o = this.#o;
    const { status, headers } = res;
    const ok = status > 199 && status < 300;
    if (!ok && (status === 429 || status >= 500) && this.#retry(retryAfterMs(headers['retry-after']), `HTTP ${status}`)) return;
    if (ok && sse && asm) {
      const hadError = asm.error !== null;
      sse.end();
      if (this.#settled) return;
      // An error in the event end() flushed (never finished by the server) is a cut, not bad
      // data: after the finish it only lost a trailing chunk (usage), so the reply stands.
      const cut = asm.error !== null && !hadError;
      if (asm.error && !cut) {
        this.#fail({ message: asm.error, status });
        return;
      }
      if (cut || asm.deltas) {
        if (!asm.done && !asm.finish) this.#fail({ message: CUT_SHORT, status });
        else this.#streamed(asm);
        return;
      }
      // Not an event stream: a server that ignored "stream": a whole reply, or garbage.
    }
    const body = utf8.decode(res.body);
    // A body that is not text (compressed although identity was asked for, or binary) is
    // described, never shown: its bytes would only garble a message and a terminal.
    const unreadable = () =>
      /[\0\uFFFD]/.test(body) &&
      `HTTP ${status}: the body is not text (${[headers['content-encoding'], headers['content-type'], size(res.body.length)].filter(Boolean).join(', ')})`;
    if (!ok) {
      const msg = o.adapter.errorMessage(body) ?? (body.trim() ? snippet(body, 500) : '');
      this.#fail({ message: unreadable() || (msg ? `HTTP ${status}: ${msg}` : `HTTP ${status}`), status, body });
      return;
    }
    try {
      this.#done(o.adapter.parseReply(body, o.origin), false, 0, body);
    } catch (e) {
      const m = messageOf(e);
      this.#fail({
        message: unreadable() || (!sse ? m : body.trim() ? `unexpected non-stream response: ${m}` : 'empty response from server'),
        status,
      });
    }
  }

  #transportError(err: HostError, gotData: boolean): void {
    if (err.code === 'ECANCELED') {
      this.#fail({ message: 'cancelled', cancelled: true });
      return;
    }
    if (err.code === 'EFBIG') {
      this.#fail({ message: tooLarge(this.#maxBytes) });
      return;
    }
    if (err.code === 'ECONNREFUSED' && this.#o.firstContact) {
      this.#fail({ message: `cannot connect to ${this.#o.url} (${err.message}): is the server running, and is the URL right?` });
      return;
    }
    // A server that stayed silent for the whole idle timeout is not retried: that could take
    // the same long time again, three more times. Nor is what the host knows would fail again.
    if (!gotData && err.code !== 'ETIMEDOUT' && err.retryable !== false && this.#retry(null, err.message)) return;
    this.#fail({ message: `http request failed: ${err.message}` });
  }

  #retry(afterMs: number | null, reason: string): boolean {
    const o = this.#o;
    if (this.#attempt >= o.maxTries || !o.host.setTimer) return false;
    const ms = Math.min(MAX_RETRY_WAIT_MS, afterMs ?? backoffMs(this.#attempt, o.retryBaseMs));
    o.onRetryWait?.(ms, reason);
    if (this.#settled) return true;
    this.#timer = o.host.setTimer(ms, () => {
      this.#timer = null;
      if (this.#settled) return;
      o.onRetrySend?.();
      if (!this.#settled) this.start();
    });
    return true;
  }

  #streamed(asm: StreamAssembler): void {
    this.#done(asm.result(), true, asm.tokensPerSec(), asm.seen);
  }

  /** `seen`: what arrived, named when the reply is empty and unfinished (a server that sent nothing usable). */
  #done(r: ParsedReply, streamed: boolean, tokensPerSec: number, seen: string): void {
    if (!r.finishReason && !r.content && !r.reasoning && !r.toolCalls.length)
      this.#fail({ message: `empty reply without a finish reason: ${snippet(seen)}` });
    else if (this.#end()) this.#o.onDone(r, streamed, tokensPerSec);
  }

  #fail(f: LlmFailure): void {
    if (this.#end()) this.#o.onFail(this.#masked(f));
  }

  /** Abort without reporting (the caller ends the turn itself). */
  abort(): void {
    this.#end();
  }
}

/**
 * One request as a promise. Aborting `signal` aborts the request and rejects with the signal's
 * reason; nothing is reported after that.
 */
export function requestReply(o: Omit<LlmCallOptions, 'onDone' | 'onFail'>, signal: AbortSignal): Promise<LlmResult> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const stop = () => {
      call.abort();
      reject(signal.reason);
    };
    const end = (r: LlmResult) => {
      signal.removeEventListener('abort', stop);
      resolve(r);
    };
    const call = new LlmCall({
      ...o,
      onDone: (reply, streamed, tokensPerSec) => end({ ok: true, reply, streamed, tokensPerSec }),
      onFail: (failure) => end({ ok: false, failure }),
    });
    signal.addEventListener('abort', stop, { once: true });
    call.start();
  });
}

/** A configured limit: absent ⇒ the default, 0 (or less) ⇒ none. */
function limit(v: number | undefined, dflt: number): number {
  if (v === undefined || !Number.isFinite(v)) return dflt;
  return v > 0 ? v : 0;
}

function now(host: Host): number {
  return host.now ? host.now() : Date.now();
}

function tooLarge(max: number): string {
  return `the reply was larger than ${size(max)} (max_reply_bytes); reading it was stopped`;
}

function size(n: number): string {
  return n >= 1048576 ? `${+(n / 1048576).toFixed(1)} MiB` : `${n} bytes`;
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key']);

/** The credential values of a request's headers ("Bearer X": X alone too), long enough to mask. */
function credentials(headers: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADERS.has(k.toLowerCase()) || typeof v !== 'string') continue;
    const token = /^\s*\S+\s+(\S+)\s*$/.exec(v)?.[1];
    for (const s of [v, token]) if (s && s.length >= 4 && !out.includes(s)) out.push(s);
  }
  return out.sort((a, b) => b.length - a.length);
}
