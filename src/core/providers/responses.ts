// OpenAI Responses dialect (kind "openai-responses", POST …/responses). Stateless: the whole
// canonical history goes out as `input` items every turn (`store:false`, no previous_response_id).
//
// Validity rules enforced here (each is a 400 from the API otherwise):
// - every function_call has a function_call_output and every output answers an earlier call
//   (pairing.ts: a missing output gets a stand-in, an unpaired output is sent as user text);
// - call ids are non-empty and unique within the request;
// - function tools are sent with `strict:false`: the API defaults to strict schemas, which
//   reject ordinary schemas with optional properties;
// - a reasoning item goes back as it came, right before the item that followed it (the text
//   message or the function call), never last; only items with `encrypted_content` are kept:
//   one without it names server-side state that `store:false` does not keep;
// - `include: ["reasoning.encrypted_content"]` whenever reasoning is asked for or carried back,
//   so the next reply's reasoning can be carried too.
// A `failed` or `cancelled` response is an error, never an empty success.

import {
  mapFinishReason,
  type BuildRequestOptions,
  type ParsedReply,
  type ProviderAdapter,
  type StreamDecoder,
  type StreamDelta,
} from './adapter.js';
import type { FinishReason, Message, ReasoningPart, ToolCall, Usage } from '../types.js';
import { placed, reasoningAt } from '../reasoning.js';
import { reasoningItemText } from './reasoning-item.js';
import {
  bearerHeaders,
  count,
  fromJson,
  hasText,
  isObj,
  nonEmpty,
  num,
  replyObject,
  saysToolsUnsupported,
  snippet,
  streamIndex,
  guarded,
  textIn,
  total,
  typedEvent,
  validJsonOr,
} from './util.js';
import { MISSING_RESULT, pairToolCalls, type PairingPolicy } from './pairing.js';
import { parametersWireJson } from './tool-schema.js';

/** Sent in place of an output the history lacks (e.g. a turn cancelled mid-tools). */
export const MISSING_OUTPUT = MISSING_RESULT;

/** call_ids must be non-empty and unique within the request. */
export const responsesPairing: PairingPolicy = { wireId: (id) => id, fallbackId: 'call_clm', uniqueInRequest: true };

export type InputItem =
  | { role: 'system' | 'user' | 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string }
  | Readonly<Record<string, unknown>>;

/** The input items one message becomes (see the rules above). */
export function itemsOf(m: Message): InputItem[] {
  const items: InputItem[] = [];
  if (m.role === 'tool') items.push({ type: 'function_call_output', call_id: m.toolCallId ?? '', output: m.content ?? '' });
  else if (m.role !== 'assistant') {
    if (hasText(m.content)) items.push({ role: m.role, content: m.content });
  } else {
    const calls = m.toolCalls ?? [];
    const reasoning = (i: number) => {
      for (const p of reasoningAt(m, 'openai-responses', i, calls.length)) items.push(p.item);
    };
    // Reasoning needs an item after it: with neither text nor calls, or after the last call, it has none.
    if (hasText(m.content) || calls.length) reasoning(0);
    if (hasText(m.content)) items.push({ role: m.role, content: m.content });
    calls.forEach((c, i) => {
      if (i > 0) reasoning(i);
      // Malformed arguments stay in history as the model sent them, but go out as {} (as in chat).
      items.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: validJsonOr(c.args, '{}') });
    });
  }
  return items;
}

/** The messages the request carries, paired: after pairing, every tool message answers a call of the assistant message before it. */
export const pairedForResponses = (messages: readonly Message[]) => pairToolCalls(messages, responsesPairing);

/** Converts the canonical history into Responses input items (see the rules above). */
export function toResponsesInput(messages: readonly Message[]): InputItem[] {
  return pairedForResponses(messages).flatMap(itemsOf);
}

export const isReasoningItem = (i: InputItem) => 'type' in i && i.type === 'reasoning';

/** A reasoning output item to carry back (see the rules above), placed before call `calls`. */
function reasoningPart(item: Record<string, unknown>, calls: number): ReasoningPart | null {
  if (typeof item.encrypted_content !== 'string' || item.encrypted_content === '') return null;
  return placed({ dialect: 'openai-responses', type: 'reasoning', item }, calls);
}

/** The request's text before its input items and after them; `reasoning`: an item is a reasoning item. */
export function requestFrame(opts: BuildRequestOptions, reasoning: boolean): { head: string; tail: string } {
  const tools = opts.tools ?? [];
  // Assembled as text so the tool schemas reuse their pre-serialised, byte-stable JSON.
  const parts: string[] = [`"stream":${opts.stream ? 'true' : 'false'}`, '"store":false'];
  if (opts.reasoningEffort) parts.push(`"reasoning":{"effort":${JSON.stringify(opts.reasoningEffort)},"summary":"auto"}`);
  if (opts.reasoningEffort || reasoning) parts.push('"include":["reasoning.encrypted_content"]');
  if (tools.length > 0) {
    const defs = tools.map((t) => {
      const head =
        `"type":"function","name":${JSON.stringify(t.name)}` + (t.description ? `,"description":${JSON.stringify(t.description)}` : '');
      return `{${head},"parameters":${parametersWireJson(t)},"strict":false}`;
    });
    parts.push(`"tools":[${defs.join(',')}]`);
    if (opts.disableParallelToolCalls) parts.push('"parallel_tool_calls":false');
    parts.push('"tool_choice":"auto"');
  }
  return { head: `{"model":${JSON.stringify(opts.model)},"input":[`, tail: `],${parts.join(',')}}` };
}

export function buildResponsesRequest(opts: BuildRequestOptions): string {
  const input = toResponsesInput(opts.messages);
  const { head, tail } = requestFrame(opts, input.some(isReasoningItem));
  return head + input.map((i) => JSON.stringify(i)).join(',') + tail;
}

/** input_tokens already includes the cached ones (input_tokens_details.cached_tokens). */
function toUsage(u: unknown): Usage | null {
  if (!isObj(u)) return null;
  const prompt = count(u.input_tokens),
    completion = count(u.output_tokens);
  const usage: Usage = {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: count(u.total_tokens) || total(prompt, completion),
    tokensPerSec: 0,
  };
  const cached = isObj(u.input_tokens_details) ? u.input_tokens_details.cached_tokens : undefined;
  if (typeof cached === 'number') usage.cacheReadTokens = count(cached);
  return usage;
}

/** The message of an error object (`{message, code}`), or of an object carrying one in `error`. */
function errorText(o: unknown): string | null {
  if (!isObj(o)) return nonEmpty(o);
  return (
    nonEmpty(o.message) ?? (o.error !== undefined && o.error !== null && o.error !== o ? errorText(o.error) : null) ?? nonEmpty(o.code)
  );
}

function failureText(resp: Record<string, any>, fallback: string): string {
  return errorText(resp.error) ?? fallback;
}

function incompleteFinish(resp: unknown): FinishReason {
  const reason = isObj(resp) && isObj(resp.incomplete_details) ? resp.incomplete_details.reason : undefined;
  return reason === 'content_filter' ? 'content_filter' : 'length';
}

export function parseResponsesReply(body: string): ParsedReply {
  const o = replyObject(body, 'responses');
  if (o.status === 'failed') throw new Error(failureText(o, 'response failed'));
  if (o.status === 'cancelled') throw new Error(failureText(o, 'response was cancelled'));
  if (!Array.isArray(o.output)) {
    throw new Error(errorText(o.error) ?? `responses reply has no output array: ${snippet(body)}`);
  }
  const texts: string[] = [];
  const reasoning: string[] = [];
  const reasoningParts: ReasoningPart[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of o.output) {
    if (!isObj(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      let t = '';
      for (const p of item.content) {
        if (!isObj(p)) continue;
        if (p.type === 'output_text') t += textIn(p.text, 'output_text');
        else if (p.type === 'refusal' && typeof p.refusal === 'string') t += p.refusal;
      }
      if (t !== '') texts.push(t);
    } else if (item.type === 'reasoning') {
      // OpenAI returns summaries; open-weight servers may return the raw reasoning text instead.
      const text = reasoningItemText(item);
      if (text !== '') reasoning.push(text);
      const part = reasoningPart(item, toolCalls.length);
      if (part) reasoningParts.push(part);
    } else if (item.type === 'function_call' && typeof item.name === 'string') {
      toolCalls.push({ id: callId(item) ?? '', name: item.name, args: typeof item.arguments === 'string' ? item.arguments : '' });
    }
  }
  let finishReason: FinishReason | null;
  if (toolCalls.length) finishReason = 'tool_calls';
  else if (o.status === 'completed') finishReason = 'stop';
  else if (o.status === 'incomplete') finishReason = incompleteFinish(o);
  else finishReason = mapFinishReason(o.status);
  return {
    content: texts.length ? texts.join('\n\n') : null,
    reasoning: reasoning.length ? reasoning.join('\n\n') : null,
    ...(reasoningParts.length ? { reasoningParts } : {}),
    toolCalls,
    finishReason,
    usage: toUsage(o.usage),
  };
}

/**
 * Per-response stream state: which output items are function calls, and which got arguments;
 * whether a reasoning item arrived complete (response.output_item.done).
 */
export class ResponsesStreamDecoder implements StreamDecoder {
  readonly #calls = new Set<number>();
  readonly #argsSent = new Set<number>();
  #reasoningDone = false;

  /** Function calls among the output items before `index`. */
  #callsBefore(index: number): number {
    let n = 0;
    for (const i of this.#calls) if (i < index) n++;
    return n;
  }

  feed(event: string, data: string): StreamDelta | null {
    const e = typedEvent(event, data);
    if (e === null || 'error' in e) return e;
    const { type, o } = e;
    const index = streamIndex(o.output_index);
    const delta = nonEmpty(o.delta);
    switch (type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const text = textIn(o.delta, type);
        return text ? { text } : null;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return delta ? { reasoning: delta } : null;
      case 'response.reasoning_summary_part.added':
        // Separate summary parts the way the non-streamed parse joins them.
        return num(o.summary_index) > 0 ? { reasoning: '\n\n' } : null;
      case 'response.output_item.added':
      case 'response.output_item.done': {
        const item = o.item;
        // A reasoning item is whole only when done (added has no summary or encrypted content yet).
        if (isObj(item) && item.type === 'reasoning' && type === 'response.output_item.done') {
          this.#reasoningDone = true;
          const part = reasoningPart(item, this.#callsBefore(index));
          return part ? { reasoningParts: [part] } : null;
        }
        if (!isObj(item) || item.type !== 'function_call') return null;
        const call: { index: number; id?: string; name?: string; args?: string } = { index };
        const known = this.#calls.has(index);
        this.#calls.add(index);
        if (!known) {
          const id = callId(item);
          if (id !== null) call.id = id;
          if (typeof item.name === 'string') call.name = item.name;
        }
        // Arguments normally arrive as deltas; take them whole only if none were streamed.
        if (!this.#argsSent.has(index) && typeof item.arguments === 'string' && item.arguments !== '') {
          call.args = item.arguments;
          this.#argsSent.add(index);
        }
        return call.id !== undefined || call.name !== undefined || call.args !== undefined ? { toolCalls: [call] } : null;
      }
      case 'response.function_call_arguments.delta':
        if (!delta) return null;
        this.#argsSent.add(index);
        return { toolCalls: [{ index, args: delta }] };
      case 'response.function_call_arguments.done':
        if (this.#argsSent.has(index) || typeof o.arguments !== 'string' || o.arguments === '') return null;
        this.#argsSent.add(index);
        return { toolCalls: [{ index, args: o.arguments }] };
      case 'response.completed': {
        const resp = isObj(o.response) ? o.response : {};
        const hasCall =
          this.#calls.size > 0 || (Array.isArray(resp.output) && resp.output.some((i: unknown) => isObj(i) && i.type === 'function_call'));
        const d = this.#end(hasCall ? 'tool_calls' : 'stop', resp.usage);
        // A server that streamed no output_item.done for its reasoning still lists it here.
        if (!this.#reasoningDone && Array.isArray(resp.output)) {
          const parts = reasoningOf(resp.output);
          if (parts.length) d.reasoningParts = parts;
        }
        return d;
      }
      case 'response.incomplete': {
        const resp = isObj(o.response) ? o.response : {};
        return this.#end(incompleteFinish(resp), resp.usage);
      }
      case 'response.failed': {
        const resp = isObj(o.response) ? o.response : {};
        return { error: errorText(resp.error) ?? errorText(o.error) ?? 'response failed' };
      }
      case 'error':
        return { error: errorText(o) ?? 'responses stream error' };
      default:
        return null; // response.created/in_progress, content_part.*, *.done, and event types added later
    }
  }

  #end(finishReason: FinishReason, usage: unknown): StreamDelta {
    const d: StreamDelta = { finishReason, done: true };
    const u = toUsage(usage);
    if (u) d.usage = u;
    return d;
  }
}

/** A function_call item's id (`call_id`, else `id`), null when it has neither. */
function callId(item: Record<string, any>): string | null {
  return typeof item.call_id === 'string' ? item.call_id : typeof item.id === 'string' ? item.id : null;
}

/** The reasoning parts of a complete output list, each placed before the calls that followed it. */
function reasoningOf(output: unknown[]): ReasoningPart[] {
  const parts: ReasoningPart[] = [];
  let calls = 0;
  for (const item of output) {
    if (!isObj(item)) continue;
    if (item.type === 'function_call') calls++;
    else if (item.type === 'reasoning') {
      const p = reasoningPart(item, calls);
      if (p) parts.push(p);
    }
  }
  return parts;
}

export const responsesAdapter: ProviderAdapter = {
  kind: 'openai-responses',
  endpointPath: 'responses',
  buildRequest: buildResponsesRequest,
  headers: bearerHeaders,
  parseReply: parseResponsesReply,
  newStreamDecoder: () => guarded(new ResponsesStreamDecoder()),
  errorMessage: (body) =>
    fromJson(body, (o) => (isObj(o) ? (errorText(o.error) ?? (typeof o.message === 'string' ? o.message : null)) : null)),
  refusesTools: saysToolsUnsupported,
};
