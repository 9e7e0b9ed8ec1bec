// OpenAI chat completions (also Ollama, llama.cpp, vLLM and every "OpenAI-compatible" server).
//
// Reasoning text a server returns (`reasoning_content`: DeepSeek, llama.cpp, vLLM; `reasoning`:
// Groq, Ollama, OpenRouter) is shown, and kept on the assistant message as one part per reply,
// with the field it came in and the server and model that sent it. Requests to that same server
// and model carry it back under the same field, next to the message's content and tool calls:
// DeepSeek's thinking mode refuses a tool loop whose assistant messages lack it (and ignores it
// on a turn without tools; chat templates drop what they do not need). Requests anywhere else
// never carry it: servers refuse fields they do not know (Groq takes `reasoning` but refuses
// `reasoning_content`, api.openai.com refuses both). A 400 naming the field as unsupported is
// recognised (refusesReasoning), so the agent can drop the text and send the request again
// without it.

import type { Message, ReasoningTextField, ReasoningTextPart, ToolCall, Usage } from '../types.js';
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
  total,
  validJsonOr,
} from './util.js';
import { pairToolCalls, type PairingPolicy } from './pairing.js';
import { parametersWireJson } from './tool-schema.js';

/** Ids must be unique only within one assistant message, and at most 40 characters (OpenAI). */
export const openaiPairing: PairingPolicy = {
  wireId: (id) => (id.length > 40 ? id.slice(0, 40) : id),
  fallbackId: 'call_clm',
  uniqueInRequest: false,
  maxLength: 40,
};

/** Whether a request to `origin` carries reasoning text back on `m` (only what that server and model sent). */
function carries(m: Message, origin: string | undefined): boolean {
  if (origin === undefined || m.role !== 'assistant' || !m.reasoning) return false;
  for (const p of m.reasoning) if (p.type === 'reasoning_text' && p.origin === origin) return true;
  return false;
}

/**
 * Each message's wire form, made once: messages are immutable, so this is the reusable prefix.
 * A message carrying reasoning text back has a second form, kept with the origin it was made
 * for (its text goes back to one server and model only).
 */
class WireForms<T> {
  private readonly plain = new WeakMap<Message, T>();
  private readonly carrying = new WeakMap<Message, { origin: string; form: T }>();
  constructor(private readonly make: (m: Message, origin: string | undefined) => T) {}
  get(m: Message, origin: string | undefined): T {
    if (carries(m, origin)) {
      const c = this.carrying.get(m);
      if (c && c.origin === origin) return c.form;
      const form = this.make(m, origin);
      this.carrying.set(m, { origin: origin!, form });
      return form;
    }
    let form = this.plain.get(m);
    if (form === undefined) {
      form = this.make(m, undefined);
      this.plain.set(m, form);
    }
    return form;
  }
}

function wireJson(m: Message, origin: string | undefined): string {
  const o: Record<string, unknown> = { role: m.role };
  if (m.content !== null) o.content = m.content;
  else if (m.role === 'assistant') o.content = null;
  else o.content = '';
  if (m.role === 'tool') o.tool_call_id = m.toolCallId ?? '';
  if (m.role === 'assistant' && origin !== undefined) {
    for (const p of m.reasoning ?? []) {
      if (p.type !== 'reasoning_text' || p.origin !== origin) continue;
      const before = o[p.field];
      o[p.field] = typeof before === 'string' ? before + p.text : p.text;
    }
  }
  if (m.role === 'assistant' && m.toolCalls?.length) {
    // Servers that re-parse arguments (llama.cpp templates) reject malformed JSON; history keeps the raw text.
    o.tool_calls = m.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: validJsonOr(c.args, '{}') },
    }));
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
  return {
    promptTokens: p,
    completionTokens: c,
    totalTokens: count(u.total_tokens) || total(p, c),
    tokensPerSec: rate(o?.timings?.predicted_per_second),
  };
}

function argsText(a: unknown): string {
  if (typeof a === 'string') return a;
  if (a === undefined || a === null) return '{}';
  return JSON.stringify(a);
}

export function openaiErrorMessage(body: string): string | null {
  return fromJson(body, (o) => {
    const e = o?.error;
    if (typeof e === 'string') return e;
    if (e && typeof e.message === 'string') return e.message;
    if (typeof o?.message === 'string') return o.message;
    if (typeof o?.detail === 'string') return o.detail;
    return null;
  });
}

/** One entry of `tool_calls` (a streamed fragment or a whole call): what it carries, absent when not. */
function wireCall(tc: any, i: number): { index: number; id?: string; name?: string; args?: string } {
  return {
    index: streamIndex(tc?.index, i),
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

class OpenAIStream implements StreamDecoder {
  /** The field of the reply's first reasoning delta, and every delta's text joined. */
  private field: ReasoningTextField | null = null;
  private text = '';
  private kept = false;
  /** `origin` absent: nothing is kept to carry back (there is nowhere to carry it). */
  constructor(private readonly origin: string | undefined) {}

  feed(_event: string, data: string): StreamDelta | null {
    if (data.trim() === '[DONE]') return this.withReasoning({ done: true });
    const p = parseStreamData(data);
    if (p === null || 'error' in p) return p;
    const o: any = p.json;
    if (o?.error) return { error: openaiErrorMessage(data) ?? 'server reported an error in the stream' };
    const d: StreamDelta = {};
    const usage = parseUsage(o);
    if (usage) d.usage = usage;
    const ch = Array.isArray(o?.choices) ? o.choices[0] : undefined;
    if (ch) {
      const delta = ch.delta ?? ch.message ?? {};
      if (typeof delta.content === 'string' && delta.content) d.text = delta.content;
      const r = reasoningOf(delta);
      if (r) {
        d.reasoning = r.text;
        this.field ??= r.field;
        this.text += r.text;
      }
      if (Array.isArray(delta.tool_calls)) d.toolCalls = delta.tool_calls.map(wireCall);
      const f = mapFinishReason(ch.finish_reason);
      if (f) {
        d.finishReason = f;
        this.withReasoning(d);
      }
    }
    return d;
  }

  /** The reply's reasoning as one part, once it is whole: with the finish, or [DONE] when no finish came. */
  private withReasoning(d: StreamDelta): StreamDelta {
    if (this.field && this.origin !== undefined && !this.kept) {
      this.kept = true;
      d.reasoningParts = [textPart(this.field, this.text, this.origin)];
    }
    return d;
  }
}

// Top-level values are marked pure: a bundle whose agents speak no chat dialect leaves this module out.
const enc = /* @__PURE__ */ new TextEncoder();
const wireStrings = /* @__PURE__ */ new WireForms(wireJson);
// Only the bytes are kept for the byte builder: the string as well would be a second copy of the history.
const wireBytes = /* @__PURE__ */ new WireForms((m, origin) => enc.encode(wireJson(m, origin)));
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

const chatCompletions: Omit<ProviderAdapter, 'kind'> = {
  endpointPath: 'chat/completions',

  buildRequest(o: BuildRequestOptions): string {
    // A well-paired history comes back as the same message objects, so the cache above serves it.
    const origin = o.origin;
    return (
      head(o) +
      pairToolCalls(o.messages, openaiPairing)
        .map((m) => wireStrings.get(m, origin))
        .join(',') +
      tail(o)
    );
  },

  buildRequestBytes(o: BuildRequestOptions): Uint8Array {
    const msgs = pairToolCalls(o.messages, openaiPairing);
    const parts: Uint8Array[] = [enc.encode(head(o))];
    msgs.forEach((m, i) => {
      if (i) parts.push(COMMA);
      parts.push(wireBytes.get(m, o.origin));
    });
    parts.push(tailBytes(o));
    let n = 0;
    for (const p of parts) n += p.length;
    const out = new Uint8Array(n);
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  },

  headers: bearerHeaders,

  parseReply(body: string, origin?: string): ParsedReply {
    let o: any;
    try {
      o = JSON.parse(body);
    } catch {
      throw new Error(`could not parse llm response: ${snippet(body)}`);
    }
    if (o?.error) throw new Error(openaiErrorMessage(body) ?? 'server reported an error');
    const ch = Array.isArray(o?.choices) ? o.choices[0] : undefined;
    const msg = ch?.message;
    if (!msg || typeof msg !== 'object') throw new Error(`could not extract message from llm response: ${snippet(body)}`);
    const calls: ToolCall[] = Array.isArray(msg.tool_calls)
      ? msg.tool_calls.map((tc: any, i: number) => {
          const c = wireCall(tc, i);
          return { id: c.id ?? `call_${i + 1}`, name: c.name ?? '', args: c.args ?? '{}' };
        })
      : [];
    const r = reasoningOf(msg);
    return {
      content: typeof msg.content === 'string' ? msg.content : null,
      reasoning: r ? r.text : null,
      ...(r && origin !== undefined ? { reasoningParts: [textPart(r.field, r.text, origin)] } : {}),
      toolCalls: calls,
      finishReason: mapFinishReason(ch.finish_reason),
      usage: parseUsage(o),
    };
  },

  newStreamDecoder: (origin?: string) => new OpenAIStream(origin),
  errorMessage: openaiErrorMessage,
  refusesTools: saysToolsUnsupported,
  refusesReasoning: (status, body) => status === 400 && refusesReasoningField(openaiErrorMessage(body) ?? body),
};

/**
 * Whether an error names a reasoning field as one the server does not take: Groq's "property
 * 'reasoning_content' is unsupported" and "reasoning is not supported with this model",
 * OpenAI's "Additional properties are not allowed ('reasoning_content' was unexpected)".
 * DeepSeek's "reasoning_content ... must be passed back" asks for the opposite and is not one.
 */
export function refusesReasoningField(message: string): boolean {
  return (
    /\breasoning(_content)?\b/.test(message) &&
    /\b(unsupported|not supported|unexpected|not allowed|not permitted|unrecognized|unknown)\b/i.test(message)
  );
}

function chatAdapter(kind: 'openai' | 'ollama'): ProviderAdapter {
  return { kind, ...chatCompletions };
}

export const openaiAdapter = /* @__PURE__ */ chatAdapter('openai');
/** Ollama's chat endpoint speaks the same wire format. */
export const ollamaAdapter = /* @__PURE__ */ chatAdapter('ollama');
