// Small helpers shared by the wire adapters.

import type { StreamDecoder } from './adapter.js';

/** A short, single-line excerpt of a body for error messages (marked when cut). */
export function snippet(s: string, max = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}… (${s.length} bytes)` : one;
}

/** `s` when it is valid JSON, else `fallback`. */
export function validJsonOr(s: string, fallback: string): string {
  try {
    JSON.parse(s);
    return s;
  } catch {
    return fallback;
  }
}

/** Parsed JSON object arguments, `{}` when unparsable or not an object. */
export function argsObject(s: string): Record<string, unknown> {
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * The JSON object of one stream event's `data`, shared by every dialect so they agree on bad
 * input: blank data (a keep-alive) and a gateway's `[DONE]` sentinel are nothing (`null`); data
 * that is not JSON, or not an object, is a malformed stream and ends the turn with an error
 * naming it.
 */
export function parseStreamData(data: string): { json: Record<string, any> } | { error: string } | null {
  const t = data.trim();
  if (t === '' || t === '[DONE]') return null;
  try {
    const v = JSON.parse(t);
    if (isObj(v)) return { json: v };
  } catch {
    return { error: `could not parse stream event: ${snippet(data)}` };
  }
  return { error: `stream event is not a JSON object: ${snippet(data)}` };
}

/**
 * The text a server sent in `v` ('' for none): a string, or an array of text parts (`{type:
 * "text", text}`, as some OpenAI-compatible servers send content). Anything else throws, naming
 * `where` and what came (stream decoders are `guarded`): text that cannot be read must not pass
 * as an empty reply.
 */
export function textIn(v: unknown, where: string): string {
  if (v == null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((p) => isObj(p) && p.type === 'text' && typeof p.text === 'string')) return v.map((p) => p.text).join('');
  throw new Error(`${where} is not text: ${snippet(JSON.stringify(v))}`);
}

/** `d`, reporting what it throws (text it cannot read) as the stream's error. */
export function guarded(d: StreamDecoder): StreamDecoder {
  return {
    feed(event, data) {
      try {
        return d.feed(event, data);
      } catch (e) {
        return { error: (e as Error).message };
      }
    },
  };
}

/**
 * The JSON object of a whole reply, or an Error naming what is wrong with the body
 * (`<dialect> reply is not JSON: …`, `… is not an object: …`).
 */
export function replyObject(body: string, dialect: string): Record<string, any> {
  let o: unknown;
  try {
    o = JSON.parse(body);
  } catch {
    throw new Error(`${dialect} reply is not JSON: ${snippet(body) || '(empty body)'}`);
  }
  if (!isObj(o)) throw new Error(`${dialect} reply is not an object: ${snippet(body)}`);
  return o;
}

/** What `find` reads from a JSON body (the server's error message), null when the body is not JSON. */
export function fromJson<T>(body: string, find: (o: any) => T | null): T | null {
  try {
    return find(JSON.parse(body));
  } catch {
    return null;
  }
}

/** Content type and, with a key, `authorization: Bearer <key>` (both OpenAI dialects). */
export function bearerHeaders(apiKey: string): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) h.authorization = `Bearer ${apiKey}`;
  return h;
}

/** `v` when it is a non-empty string, else null. */
export function nonEmpty(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** `v` when it is a string, else `fallback`. */
export function str(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : fallback;
}

/** Text that is not blank (whitespace only). */
export function hasText(s: string | null | undefined): s is string {
  return typeof s === 'string' && s.trim() !== '';
}

export function isObj(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A finite number, else 0. */
export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/**
 * A token count as a server reports it (a number or numeric text): a whole number from 0 to
 * MAX_SAFE_INTEGER, else 0.
 * Counts drive the context meter and autocompaction, so a negative, fractional or huge value
 * from a misbehaving server must not become NaN or Infinity there.
 */
export function count(v: unknown): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && n >= 0 ? Math.min(Number.MAX_SAFE_INTEGER, Math.floor(n)) : 0;
}

/** Counts added up, held at MAX_SAFE_INTEGER. */
export function total(...counts: number[]): number {
  return Math.min(
    Number.MAX_SAFE_INTEGER,
    counts.reduce((a, b) => a + b, 0),
  );
}

/** A stream's block or call index: a non-negative safe integer, else `fallback`. */
export function streamIndex(v: unknown, fallback = 0): number {
  return Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fallback;
}

/** A rate (tokens per second): finite and non-negative, else 0. */
export function rate(v: unknown): number {
  const n = Number(v ?? 0);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/**
 * One SSE event of a typed-event dialect (Anthropic, Responses): its JSON object and type (the
 * object's `type`, else the SSE event name). `null` = nothing to do; `{error}` = malformed data.
 */
export function typedEvent(event: string, data: string): { type: string; o: Record<string, any> } | { error: string } | null {
  const p = parseStreamData(data);
  if (p === null || 'error' in p) return p;
  return { type: typeof p.json.type === 'string' ? p.json.type : event, o: p.json };
}

/**
 * Ollama's answer for a model without tool support (400, "… does not support tools"). Servers
 * behind every dialect pass it on, so each adapter recognises it.
 */
export function saysToolsUnsupported(status: number, body: string): boolean {
  return status === 400 && /does not support tools/i.test(body);
}
