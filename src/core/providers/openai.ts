// OpenAI chat completions (also Ollama, llama.cpp, vLLM, Gemini's OpenAI-compatible endpoint and
// every other "OpenAI-compatible" server).
//
// Reasoning text a server returns (`reasoning_content`: DeepSeek, llama.cpp, vLLM; `reasoning`:
// Groq, Ollama, OpenRouter) is shown, and kept on the assistant message as one part per reply,
// with the field it came in and the server and model that sent it. Requests to that same server
// and model carry it back under the same field, next to the message's content and tool calls:
// DeepSeek's thinking mode refuses a tool loop whose assistant messages lack it (and ignores it
// on a turn without tools; chat templates drop what they do not need).
//
// An `extra_content` object on a tool call or on the reply (Gemini's thought signature,
// `{"google":{"thought_signature":"…"}}`, on the first of parallel calls and on each call of a
// sequence; on a text reply, on the message or a text delta) is kept verbatim as a part naming
// the call it came on, and goes back, to the same server and model, on that same call (or on
// the message): Gemini 3 refuses a tool loop whose calls lack their signature.
//
// Requests anywhere else carry neither: servers refuse fields they do not know (Groq takes
// `reasoning` but refuses `reasoning_content`, api.openai.com refuses both). A 400 naming one of
// the three fields as unsupported is recognised, so the agent can drop the
// parts and send the request again without them; the opposite answer, a 400 asking for them with
// a call that has none to send (another model's), gets the request again with such rounds written
// as text (chat-parts-answers.ts).
//
// Gemini streams each call whole, in a delta of its own, without `index`: a fragment without
// `index` that names a function under another id than the call before it at its place begins a
// new call.

import type { ExtraContentPart, Message, ReasoningPart, ReasoningTextField, ReasoningTextPart, Usage } from '../types.js';
import {
  mapFinishReason,
  type BuildRequestOptions,
  type ParsedReply,
  type ProviderAdapter,
  type StreamDecoder,
  type StreamDelta,
  type ToolSchema,
} from './adapter.js';
import {
  bearerHeaders,
  count,
  fromJson,
  parseStreamData,
  rate,
  saysToolsUnsupported,
  snippet,
  streamIndex,
  guarded,
  textIn,
  total,
  validJsonOr,
} from './util.js';
import { resendChatParts } from './chat-parts-answers.js';
import { foreignRoundsAsText } from './foreign-rounds.js';
import { pairToolCalls, type PairingPolicy } from './pairing.js';
import { parametersWireJson } from './tool-schema.js';
import { utf8, utf8Encoder as enc } from '../utf8.js';

/** Ids must be unique only within one assistant message, and at most 40 characters (OpenAI). */
export const openaiPairing: PairingPolicy = {
  wireId: (id) => (id.length > 40 ? id.slice(0, 40) : id),
  fallbackId: 'call_clm',
  uniqueInRequest: false,
  maxLength: 40,
};

/** Whether a request to `origin` carries chat parts back on `m` (only what that server and model sent). */
function carries(m: Message, origin: string | undefined): boolean {
  if (origin === undefined || m.role !== 'assistant' || !m.reasoning) return false;
  for (const p of m.reasoning) if (p.dialect === 'openai' && p.origin === origin) return true;
  return false;
}

function wireJson(m: Message, origin: string | undefined): string {
  const o: Record<string, unknown> = { role: m.role };
  if (m.content !== null) o.content = m.content;
  else if (m.role === 'assistant') o.content = null;
  else o.content = '';
  if (m.role === 'tool') o.tool_call_id = m.toolCallId ?? '';
  /** The extra content of each call, by its index. */
  const extras: unknown[] = [];
  if (m.role === 'assistant' && origin !== undefined) {
    for (const p of m.reasoning ?? []) {
      if (p.dialect !== 'openai' || p.origin !== origin) continue;
      if (p.type === 'extra_content') {
        if (p.call === undefined) o.extra_content = p.value;
        else extras[p.call] = p.value;
        continue;
      }
      const before = o[p.field];
      o[p.field] = typeof before === 'string' ? before + p.text : p.text;
    }
  }
  if (m.role === 'assistant' && m.toolCalls?.length) {
    // Servers that re-parse arguments (llama.cpp templates) reject malformed JSON; history keeps the raw text.
    o.tool_calls = m.toolCalls.map((c, i) => {
      const w: Record<string, unknown> = { id: c.id, type: 'function', function: { name: c.name, arguments: validJsonOr(c.args, '{}') } };
      if (extras[i] !== undefined) w.extra_content = extras[i];
      return w;
    });
  }
  return JSON.stringify(o);
}

const toolCache = new WeakMap<ToolSchema, string>();
function wireTool(t: ToolSchema): string {
  let s = toolCache.get(t);
  if (s === undefined) {
    s = `{"type":"function","function":{"name":${JSON.stringify(t.name)},"description":${JSON.stringify(t.description)},"parameters":${parametersWireJson(t)}}}`;
    toolCache.set(t, s);
  }
  return s;
}

export function parseUsage(o: any): Usage | null {
  const u = o?.usage;
  if (!u || typeof u !== 'object') return null;
  const p = count(u.prompt_tokens);
  const c = count(u.completion_tokens);
  const usage: Usage = {
    promptTokens: p,
    completionTokens: c,
    totalTokens: count(u.total_tokens) || total(p, c),
    tokensPerSec: rate(o?.timings?.predicted_per_second),
  };
  // Prompt tokens served from the server's cache (OpenAI, llama.cpp), already in prompt_tokens.
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (typeof cached === 'number') usage.cacheReadTokens = count(cached);
  return usage;
}

function argsText(a: unknown): string {
  if (typeof a === 'string') return a;
  if (a === undefined || a === null) return '{}';
  return JSON.stringify(a);
}

export function openaiErrorMessage(body: string): string | null {
  return fromJson(body, (x) => {
    // Gemini's OpenAI-compatible endpoint answers an error as a one-element array.
    const o = Array.isArray(x) ? x[0] : x;
    const e = o?.error;
    if (typeof e === 'string') return e;
    if (e && typeof e.message === 'string') return e.message;
    if (typeof o?.message === 'string') return o.message;
    if (typeof o?.detail === 'string') return o.detail;
    return null;
  });
}

/** One entry of `tool_calls` (a streamed fragment or a whole call): what it carries, absent when not. */
function wireCall(tc: any): { id?: string; name?: string; args?: string } {
  return {
    id: typeof tc?.id === 'string' && tc.id ? tc.id : undefined,
    name: typeof tc?.function?.name === 'string' && tc.function.name ? tc.function.name : undefined,
    args: tc?.function?.arguments === undefined ? undefined : argsText(tc.function.arguments),
  };
}

// Some servers send both fields with the same text; the first one that has text is taken.
const REASONING_FIELDS: readonly ReasoningTextField[] = ['reasoning_content', 'reasoning'];

/** A server's reasoning text and the field it came in, or null. */
function reasoningOf(m: any): { field: ReasoningTextField; text: string } | null {
  for (const field of REASONING_FIELDS) {
    const text = m?.[field];
    if (typeof text === 'string' && text) return { field, text };
  }
  return null;
}

function textPart(field: ReasoningTextField, text: string, origin: string): ReasoningTextPart {
  return { dialect: 'openai', type: 'reasoning_text', field, text, origin };
}

/** The `extra_content` of call `call` (absent: of the message), or null when there is none. */
function extraPart(value: unknown, origin: string, call?: number): ExtraContentPart | null {
  if (value === undefined || value === null) return null;
  const p: ExtraContentPart = { dialect: 'openai', type: 'extra_content', value, origin };
  if (call !== undefined) p.call = call;
  return p;
}

class OpenAIStream implements StreamDecoder {
  /** The field of the reply's first reasoning delta, and every delta's text joined. */
  #field: ReasoningTextField | null = null;
  #text = '';
  #kept = false;
  /** Each call's first id ('' until one came), by the index it is given. */
  readonly #ids = new Map<number, string>();
  /** The call each wire index (a fragment's `index`, else its place in the delta) began last. */
  readonly #at = new Map<number, number>();
  /** The highest index given to a call. */
  #top = -1;
  /** The extra content of each call, by the index it is given; the message's own (the latest that came). */
  readonly #extras = new Map<number, unknown>();
  #extra: unknown;
  /** `origin` absent: nothing is kept to carry back (there is nowhere to carry it). */
  readonly #origin: string | undefined;
  constructor(origin: string | undefined) {
    this.#origin = origin;
  }

  feed(_event: string, data: string): StreamDelta | null {
    if (data.trim() === '[DONE]') return this.#withReasoning({ done: true });
    const p = parseStreamData(data);
    if (p === null || 'error' in p) return p;
    const o: any = p.json;
    if (o?.error) return { error: openaiErrorMessage(data) ?? 'server reported an error in the stream' };
    return this.decode(o, false);
  }

  /**
   * One chunk's delta; `whole`: `o` is a whole reply, its message one delta (each call at its
   * place, its content read as `message.content`) whose parts are complete.
   */
  decode(o: any, whole: boolean): StreamDelta {
    const d: StreamDelta = {};
    const usage = parseUsage(o);
    if (usage) d.usage = usage;
    const ch = Array.isArray(o?.choices) ? o.choices[0] : undefined;
    if (ch) {
      const delta = (whole ? ch.message : (ch.delta ?? ch.message)) ?? {};
      const text = textIn(delta.content, whole ? 'message.content' : 'delta.content');
      if (text) d.text = text;
      const r = reasoningOf(delta);
      if (r) {
        d.reasoning = r.text;
        this.#field ??= r.field;
        this.#text += r.text;
      }
      if (delta.extra_content != null) this.#extra = delta.extra_content;
      if (Array.isArray(delta.tool_calls))
        d.toolCalls = delta.tool_calls.map((tc: any, i: number) => {
          const c = wireCall(tc);
          const index = this.#callOf(whole ? undefined : tc?.index, c, i);
          // On whichever fragment of its call it comes (Gemini: the first, or one of its own).
          if (tc?.extra_content != null) this.#extras.set(index, tc.extra_content);
          return { index, ...c };
        });
      const f = mapFinishReason(ch.finish_reason);
      if (f) d.finishReason = f;
      if (f || whole) this.#withReasoning(d);
    }
    return d;
  }

  /**
   * The index of the call a fragment belongs to: the fragment's own `index` (OpenAI's merge, the
   * first id and name staying); without one, its place in the delta, where the call that began
   * there last goes on unless the fragment names a function under another id (Gemini's next
   * call), which is given the index past every other.
   */
  #callOf(wire: unknown, { id, name }: { id?: string; name?: string }, i: number): number {
    const w = streamIndex(wire, -1);
    const at = w < 0 ? i : w;
    let n = this.#at.get(at);
    const other = n !== undefined && this.#ids.get(n);
    if (n === undefined || (w < 0 && id && name && other && other !== id)) {
      n = n === undefined && !this.#ids.has(at) ? at : this.#top + 1;
      this.#at.set(at, n);
      this.#ids.set(n, '');
    }
    if (id && !this.#ids.get(n)) this.#ids.set(n, id);
    if (n > this.#top) this.#top = n;
    return n;
  }

  /**
   * The reply's parts, once they are whole: its reasoning as one part, then each call's extra
   * content and the message's; with the finish, or [DONE] when no finish came.
   */
  #withReasoning(d: StreamDelta): StreamDelta {
    const origin = this.#origin;
    if (origin === undefined || this.#kept) return d;
    const parts: (ReasoningPart | null)[] = this.#field ? [textPart(this.#field, this.#text, origin)] : [];
    // A call's place among the reply's calls: the stream assembler orders them by index.
    const order = [...this.#ids.keys()].sort((a, b) => a - b);
    for (const [n, v] of [...this.#extras].sort((a, b) => a[0] - b[0])) parts.push(extraPart(v, origin, order.indexOf(n)));
    parts.push(extraPart(this.#extra, origin));
    const kept = parts.filter((p) => p !== null);
    if (kept.length) {
      this.#kept = true;
      d.reasoningParts = kept;
    }
    return d;
  }
}

// Top-level values are marked pure: a bundle whose agents speak no chat dialect leaves this module out.
const wireForms = new WeakMap<Message, { origin: string | undefined; bytes: Uint8Array }>();

/**
 * Each message's wire form as UTF-8, made once: messages are immutable, so this is the reusable
 * prefix. A message carrying chat parts back has its form for the origin it was made for (they
 * go back to one server and model only). Only the bytes are kept (buildRequest decodes them): the
 * string as well would be a second copy of the history.
 */
function wireBytes(m: Message, origin: string | undefined): Uint8Array {
  const to = carries(m, origin) ? origin : undefined;
  const c = wireForms.get(m);
  if (c && c.origin === to) return c.bytes;
  const bytes = enc.encode(wireJson(m, to));
  wireForms.set(m, { origin: to, bytes });
  return bytes;
}
// The tool list is the same array while the registry is unchanged, so the request's tail (tools
// and flags) is encoded once per tool list and flag combination.
const tailCache = new WeakMap<readonly ToolSchema[], Map<string, Uint8Array>>();

function tailBytes(o: BuildRequestOptions): Uint8Array {
  if (!o.tools) return enc.encode(tail(o));
  let byFlags = tailCache.get(o.tools);
  if (!byFlags) {
    byFlags = new Map();
    tailCache.set(o.tools, byFlags);
  }
  const key = `${o.stream}|${o.disableParallelToolCalls}|${o.reasoningEffort ?? ''}`;
  let t = byFlags.get(key);
  if (!t) {
    t = enc.encode(tail(o));
    byFlags.set(key, t);
  }
  return t;
}
const COMMA = /* @__PURE__ */ enc.encode(',');

function head(o: BuildRequestOptions): string {
  return `{"model":${JSON.stringify(o.model)},"messages":[`;
}

function tail(o: BuildRequestOptions): string {
  let s = `],"stream":${o.stream}`;
  if (o.stream) s += ',"stream_options":{"include_usage":true}';
  // Only when asked for: a server that does not know the field may refuse the request.
  if (o.reasoningEffort) s += `,"reasoning_effort":${JSON.stringify(o.reasoningEffort)}`;
  if (o.tools?.length) {
    s += `,"tools":[${o.tools.map(wireTool).join(',')}]`;
    if (o.disableParallelToolCalls) s += ',"parallel_tool_calls":false';
  }
  return s + '}';
}

function buildRequestPieces(o: BuildRequestOptions): Uint8Array[] {
  const msgs = wireMessages(o);
  const parts: Uint8Array[] = [enc.encode(head(o))];
  msgs.forEach((m, i) => {
    if (i) parts.push(COMMA);
    parts.push(wireBytes(m, o.origin));
  });
  parts.push(tailBytes(o));
  return parts;
}

function buildRequestBytes(o: BuildRequestOptions): Uint8Array {
  const parts = buildRequestPieces(o);
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

const chatCompletions: Omit<ProviderAdapter, 'kind'> = {
  endpointPath: 'chat/completions',

  buildRequest(o: BuildRequestOptions): string {
    return utf8.decode(buildRequestBytes(o));
  },

  buildRequestBytes,
  buildRequestPieces,

  headers: bearerHeaders,

  parseReply(body: string, origin?: string): ParsedReply {
    let o: any;
    try {
      o = JSON.parse(body);
    } catch {
      throw new Error(`could not parse llm response: ${snippet(body)}`);
    }
    if (o?.error) throw new Error(openaiErrorMessage(body) ?? 'server reported an error');
    const msg = Array.isArray(o?.choices) ? o.choices[0]?.message : undefined;
    if (!msg || typeof msg !== 'object') throw new Error(`could not extract message from llm response: ${snippet(body)}`);
    // A whole reply is read as the stream's one delta.
    const d = new OpenAIStream(origin).decode(o, true);
    return {
      content: msg.content == null ? null : (d.text ?? ''),
      reasoning: d.reasoning ?? null,
      ...(d.reasoningParts && { reasoningParts: d.reasoningParts }),
      toolCalls: (d.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${i + 1}`, name: c.name ?? '', args: c.args ?? '{}' })),
      finishReason: d.finishReason ?? null,
      usage: d.usage ?? null,
    };
  },

  newStreamDecoder: (origin?: string) => guarded(new OpenAIStream(origin)),
  errorMessage: openaiErrorMessage,
  refusesTools: saysToolsUnsupported,
  resend: (status, body, ...rest) => resendChatParts(status, openaiErrorMessage(body) ?? body, ...rest),
};

/** The messages as sent. A well-paired history comes back as the same message objects, so the caches above serve it. */
function wireMessages(o: BuildRequestOptions): readonly Message[] {
  const msgs = pairToolCalls(o.messages, openaiPairing);
  return o.foreignRoundsAsText ? foreignRoundsAsText(msgs, (m) => carries(m, o.origin)) : msgs;
}

function chatAdapter(kind: 'openai' | 'ollama'): ProviderAdapter {
  return { kind, ...chatCompletions };
}

export const openaiAdapter = /* @__PURE__ */ chatAdapter('openai');
/** Ollama's chat endpoint speaks the same wire format. */
export const ollamaAdapter = /* @__PURE__ */ chatAdapter('ollama');
