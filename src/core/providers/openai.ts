// OpenAI chat completions (also Ollama, llama.cpp, vLLM and every "OpenAI-compatible" server).
// Reasoning text a server returns (reasoning_content, reasoning) is shown, never sent back: the
// dialect has no signed form of it.

import type { Message, ToolCall, Usage } from '../types.js';
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

// Serialised wire form per message object; messages are immutable, so this is the reusable prefix.
const wireCache = new WeakMap<Message, string>();

function wireMessage(m: Message): string {
  let s = wireCache.get(m);
  if (s !== undefined) return s;
  s = wireJson(m);
  wireCache.set(m, s);
  return s;
}

function wireJson(m: Message): string {
  const o: Record<string, unknown> = { role: m.role };
  if (m.content !== null) o.content = m.content;
  else if (m.role === 'assistant') o.content = null;
  else o.content = '';
  if (m.role === 'tool') o.tool_call_id = m.toolCallId ?? '';
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

/** A server's reasoning text (llama.cpp `reasoning_content`, others `reasoning`). */
function reasoningOf(m: any): unknown {
  return m.reasoning_content ?? m.reasoning;
}

class OpenAIStream implements StreamDecoder {
  feed(_event: string, data: string): StreamDelta | null {
    if (data.trim() === '[DONE]') return { done: true };
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
      if (typeof r === 'string' && r) d.reasoning = r;
      if (Array.isArray(delta.tool_calls)) d.toolCalls = delta.tool_calls.map(wireCall);
      const f = mapFinishReason(ch.finish_reason);
      if (f) d.finishReason = f;
    }
    return d;
  }
}

// Top-level values are marked pure: a bundle whose agents speak no chat dialect leaves this module out.
const enc = /* @__PURE__ */ new TextEncoder();
const byteCache = new WeakMap<Message, Uint8Array>();
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
    return head(o) + pairToolCalls(o.messages, openaiPairing).map(wireMessage).join(',') + tail(o);
  },

  buildRequestBytes(o: BuildRequestOptions): Uint8Array {
    const msgs = pairToolCalls(o.messages, openaiPairing);
    const parts: Uint8Array[] = [enc.encode(head(o))];
    msgs.forEach((m, i) => {
      if (i) parts.push(COMMA);
      let b = byteCache.get(m);
      if (!b) {
        // Only the bytes are kept for this path: the string as well would be a second copy of the history.
        b = enc.encode(wireCache.get(m) ?? wireJson(m));
        byteCache.set(m, b);
      }
      parts.push(b);
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

  parseReply(body: string): ParsedReply {
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
      reasoning: typeof r === 'string' ? r : null,
      toolCalls: calls,
      finishReason: mapFinishReason(ch.finish_reason),
      usage: parseUsage(o),
    };
  },

  newStreamDecoder: () => new OpenAIStream(),
  errorMessage: openaiErrorMessage,
  refusesTools: saysToolsUnsupported,
};

function chatAdapter(kind: 'openai' | 'ollama'): ProviderAdapter {
  return { kind, ...chatCompletions };
}

export const openaiAdapter = /* @__PURE__ */ chatAdapter('openai');
/** Ollama's chat endpoint speaks the same wire format. */
export const ollamaAdapter = /* @__PURE__ */ chatAdapter('ollama');
