// Anthropic Messages dialect (kind "anthropic", POST …/messages). Translates the canonical
// OpenAI-shaped history into a request the API always accepts, and Anthropic replies/streams back.
//
// Validity rules enforced here (each is a 400 from the API otherwise):
// - system messages go to the top-level `system` string, never into `messages`;
// - roles alternate, starting with `user` (consecutive same-role messages are merged);
// - text blocks are never empty or whitespace-only (empty messages are skipped), nor are
//   tool_result contents (an empty output is sent as "(no output)");
// - every `tool_use` id is [A-Za-z0-9_-]+ and unique within the request, and is answered by a
//   `tool_result` in the very next user message, which lists its tool_results before any text
//   (pairing.ts repairs histories that break this, as for every dialect);
// - a request without tools carries no tool_use/tool_result blocks (compaction summaries are sent
//   without tools, so the calls are rendered as plain text there), nor the thinking of the
//   messages whose calls became text;
// - thinking and redacted_thinking blocks go back unchanged, with their signatures, before the
//   text and tool_use blocks they preceded (signed thinking of another dialect never exists here:
//   only parts tagged `anthropic` are sent);
// - with `thinking` enabled, budget_tokens is below max_tokens, and a tool loop whose last
//   assistant turn started without thinking goes on without it (the API refuses to switch
//   thinking on inside an assistant turn).

import {
  mapFinishReason,
  type BuildRequestOptions,
  type ParsedReply,
  type ProviderAdapter,
  type StreamDecoder,
  type StreamDelta,
  type ToolSchema,
} from './adapter.js';
import type { FinishReason, Message, ReasoningEffort, ReasoningPart, ToolCall, Usage } from '../types.js';
import { placed, reasoningAt } from '../reasoning.js';
import {
  argsObject,
  count,
  fromJson,
  hasText,
  isObj,
  nonEmpty,
  replyObject,
  saysToolsUnsupported,
  snippet,
  str,
  streamIndex,
  guarded,
  textIn,
  total,
  typedEvent,
} from './util.js';
import { parametersWireJson } from './tool-schema.js';
import { isStandIn, MISSING_RESULT, pairToolCalls, resultAsText, type PairingPolicy } from './pairing.js';

export const ANTHROPIC_VERSION = '2023-06-01';
const DEFAULT_MAX_TOKENS = 64000;
// The stand-in result of an unanswered call (shared by every dialect, see pairing.ts).
export { MISSING_RESULT };
/** Stands in for an empty tool output: the API rejects an empty tool_result content. */
export const EMPTY_RESULT = '(no output)';
/** Opens the conversation when the history would otherwise start with an assistant turn. */
export const LEADING_USER = '[conversation continues]';

/** tool_use ids must match [A-Za-z0-9_-]+ and be unique within the request. */
export const anthropicPairing: PairingPolicy = {
  wireId: (id) => id.replace(/[^A-Za-z0-9_-]/g, '_'),
  fallbackId: 'toolu_clm',
  uniqueInRequest: true,
};

/** Thinking budget in tokens per effort (the API's minimum is 1024). */
export const THINKING_BUDGET: Readonly<Record<ReasoningEffort, number>> = { low: 4000, medium: 10000, high: 24000 };

export type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: true };

export interface Turn {
  role: 'user' | 'assistant';
  blocks: Block[];
}

/** One message's blocks and the role of the turn they go in. */
export interface MessageBlocks {
  role: Turn['role'];
  blocks: readonly Block[];
}

/** The blocks one message becomes (see the rules above). */
export function blocksOf(m: Message, withTools: boolean): MessageBlocks {
  const blocks: Block[] = [];
  const push = (b: Block) => blocks.push(b);
  if (m.role === 'tool') {
    const content = hasText(m.content) ? m.content : EMPTY_RESULT;
    if (!withTools) push({ type: 'text', text: resultAsText({ ...m, content }) });
    else if (isStandIn(m)) push({ type: 'tool_result', tool_use_id: m.toolCallId ?? '', content, is_error: true });
    else push({ type: 'tool_result', tool_use_id: m.toolCallId ?? '', content });
    return { role: 'user', blocks };
  }
  if (m.role !== 'assistant') {
    if (hasText(m.content)) push({ type: 'text', text: m.content });
    return { role: 'user', blocks };
  }
  const calls = m.toolCalls ?? [];
  // Thinking signed for tool_use blocks does not go with calls shown as text.
  const thinking = withTools || calls.length === 0;
  const think = (i: number) => {
    if (!thinking) return;
    for (const p of reasoningAt(m, 'anthropic', i, calls.length)) {
      push(
        p.type === 'thinking'
          ? { type: 'thinking', thinking: p.thinking, signature: p.signature }
          : { type: 'redacted_thinking', data: p.data },
      );
    }
  };
  think(0);
  if (hasText(m.content)) push({ type: 'text', text: m.content });
  calls.forEach((c, i) => {
    if (i > 0) think(i);
    // A request without tools may not carry tool_use blocks: the call is shown as text.
    if (withTools) push({ type: 'tool_use', id: c.id, name: c.name, input: argsObject(c.args) });
    else push({ type: 'text', text: `[tool call ${c.name} ${c.args || '{}'}]` });
  });
  if (calls.length) think(calls.length);
  return { role: 'assistant', blocks };
}

/**
 * Converts the canonical history into alternating Anthropic turns (see the rules above); each
 * message's blocks come from `blocks` (the request pieces keep them made once per message).
 */
export function toAnthropicTurns(messages: readonly Message[], withTools: boolean, blocks = blocksOf): Turn[] {
  const turns: Turn[] = [];
  // After pairing, every tool message answers a call of the assistant message before it.
  for (const m of pairToolCalls(messages, anthropicPairing)) {
    if (m.role === 'system') continue;
    const made = blocks(m, withTools);
    const last = turns[turns.length - 1];
    if (!made.blocks.length) continue;
    if (last && last.role === made.role) last.blocks.push(...made.blocks);
    else turns.push({ role: made.role, blocks: [...made.blocks] });
  }

  if (turns.length === 0 || turns[0]!.role !== 'user') turns.unshift({ role: 'user', blocks: [{ type: 'text', text: LEADING_USER }] });
  // tool_result blocks must precede any text in their user message (stable reorder).
  for (const t of turns) {
    if (t.role === 'user')
      t.blocks = [...t.blocks.filter((b) => b.type === 'tool_result'), ...t.blocks.filter((b) => b.type !== 'tool_result')];
  }
  return turns;
}

/** A plain single-text turn is sent as a content string, anything else as blocks. */
function turnJson(t: Turn): string {
  const only = t.blocks.length === 1 ? t.blocks[0]! : undefined;
  const content = only && only.type === 'text' ? only.text : t.blocks;
  return JSON.stringify({ role: t.role, content });
}

/** Anthropic requires an object schema; anything else is replaced by an empty one. */
function inputSchemaJson(t: ToolSchema): string {
  return t.parameters && t.parameters.type === 'object' ? parametersWireJson(t) : '{"type":"object","properties":{}}';
}

/** The last assistant turn made tool calls without thinking first: the loop it belongs to cannot switch thinking on. */
function loopWithoutThinking(turns: readonly Turn[]): boolean {
  for (let i = turns.length - 1; i >= 0; i--) {
    const t = turns[i]!;
    if (t.role !== 'assistant') continue;
    const first = t.blocks[0];
    return t.blocks.some((b) => b.type === 'tool_use') && first?.type !== 'thinking' && first?.type !== 'redacted_thinking';
  }
  return false;
}

/** The request's text before its turns and after them, for `turns`. */
export function requestFrame(opts: BuildRequestOptions, turns: readonly Turn[]): { head: string; tail: string } {
  const tools = opts.tools ?? [];
  const system = opts.messages
    .filter((m) => m.role === 'system' && hasText(m.content))
    .map((m) => m.content as string)
    .join('\n\n');
  let maxTokens = Number.isFinite(opts.maxTokens) && opts.maxTokens > 0 ? Math.floor(opts.maxTokens) : DEFAULT_MAX_TOKENS;
  const budget = opts.reasoningEffort && !loopWithoutThinking(turns) ? THINKING_BUDGET[opts.reasoningEffort] : 0;
  // max_tokens covers thinking and answer: a budget that does not fit under it is added to it.
  if (budget && maxTokens <= budget) maxTokens += budget;

  // Assembled as text so the tool schemas reuse their pre-serialised, byte-stable JSON.
  const head = `{"model":${JSON.stringify(opts.model)}${system !== '' ? `,"system":${JSON.stringify(system)}` : ''},"messages":[`;
  let tail = `],"max_tokens":${maxTokens}`;
  if (budget) tail += `,"thinking":{"type":"enabled","budget_tokens":${budget}}`;
  // Automatic prompt caching: one top-level marker; the API places the breakpoint on the last
  // cacheable block and moves it forward as the conversation grows.
  tail += `,"stream":${!!opts.stream},"cache_control":{"type":"ephemeral"}`;
  if (tools.length) {
    const defs = tools.map((t) => {
      const head = `"name":${JSON.stringify(t.name)}` + (t.description ? `,"description":${JSON.stringify(t.description)}` : '');
      return `{${head},"input_schema":${inputSchemaJson(t)}}`;
    });
    tail += `,"tools":[${defs.join(',')}]`;
    if (opts.disableParallelToolCalls) tail += ',"tool_choice":{"type":"auto","disable_parallel_tool_use":true}';
  }
  return { head, tail: `${tail}}` };
}

export function buildAnthropicRequest(opts: BuildRequestOptions): string {
  const turns = toAnthropicTurns(opts.messages, !!opts.tools?.length);
  const { head, tail } = requestFrame(opts, turns);
  return head + turns.map(turnJson).join(',') + tail;
}

export function anthropicHeaders(apiKey: string): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) h['x-api-key'] = apiKey;
  h['anthropic-version'] = ANTHROPIC_VERSION;
  return h;
}

interface InputCounts {
  input: number;
  cacheRead?: number;
  cacheCreation?: number;
}

function inputCounts(u: Record<string, any>): InputCounts {
  return addCounts({ input: count(u.input_tokens) }, u);
}

/** `c` with the counts `u` reports replaced (those it leaves out are kept). */
function addCounts(c: InputCounts, u: Record<string, any>): InputCounts {
  if (typeof u.input_tokens === 'number') c.input = count(u.input_tokens);
  if (typeof u.cache_read_input_tokens === 'number') c.cacheRead = count(u.cache_read_input_tokens);
  if (typeof u.cache_creation_input_tokens === 'number') c.cacheCreation = count(u.cache_creation_input_tokens);
  return c;
}

/** input_tokens excludes cached tokens: the context in use is input + cache read + cache creation. */
function toUsage(c: InputCounts, output: number): Usage {
  const prompt = total(c.input, c.cacheRead ?? 0, c.cacheCreation ?? 0);
  const u: Usage = { promptTokens: prompt, completionTokens: output, totalTokens: total(prompt, output), tokensPerSec: 0 };
  if (c.cacheRead !== undefined) u.cacheReadTokens = c.cacheRead;
  if (c.cacheCreation !== undefined) u.cacheCreationTokens = c.cacheCreation;
  return u;
}

function finishFrom(stop: unknown): FinishReason | null {
  // The context window filling up is a truncation, like max_tokens.
  return stop === 'model_context_window_exceeded' ? 'length' : mapFinishReason(stop);
}

/** `{"type":"error","error":{"type":…,"message":…}}` ⇒ its message (or its type). */
function errorText(o: unknown): string | null {
  if (!isObj(o)) return null;
  const e = o.error;
  return (isObj(e) ? (nonEmpty(e.message) ?? nonEmpty(e.type)) : nonEmpty(e)) ?? nonEmpty(o.message);
}

export function parseAnthropicReply(body: string): ParsedReply {
  const o = replyObject(body, 'anthropic');
  if (o.type === 'error' || (o.error !== undefined && o.error !== null && !Array.isArray(o.content))) {
    throw new Error(errorText(o) ?? `anthropic error: ${snippet(body)}`);
  }
  if (!Array.isArray(o.content)) throw new Error(`anthropic reply has no content array: ${snippet(body)}`);
  let text = '';
  const thinking: string[] = [];
  const parts: ReasoningPart[] = [];
  const toolCalls: ToolCall[] = [];
  for (const b of o.content) {
    if (!isObj(b)) continue;
    if (b.type === 'text') text += textIn(b.text, 'text block');
    else if (b.type === 'thinking' && typeof b.thinking === 'string') {
      if (b.thinking !== '') thinking.push(b.thinking);
      const p = thinkingPart(b.thinking, b.signature, toolCalls.length);
      if (p) parts.push(p);
    } else if (b.type === 'redacted_thinking') {
      const p = redactedPart(b.data, toolCalls.length);
      if (p) parts.push(p);
    } else if (b.type === 'tool_use' && typeof b.name === 'string') {
      toolCalls.push({ id: str(b.id), name: b.name, args: JSON.stringify(isObj(b.input) ? b.input : {}) });
    }
  }
  return {
    content: text === '' ? null : text,
    reasoning: thinking.length ? thinking.join('\n\n') : null,
    ...(parts.length ? { reasoningParts: parts } : {}),
    toolCalls,
    finishReason: finishFrom(o.stop_reason),
    usage: isObj(o.usage) ? toUsage(inputCounts(o.usage), count(o.usage.output_tokens)) : null,
  };
}

/**
 * A thinking block to carry back: only a signed one (the API verifies the signature; unsigned
 * thinking, e.g. from a proxy, is shown but cannot go back).
 */
function thinkingPart(thinking: string, signature: unknown, calls: number): ReasoningPart | null {
  if (typeof signature !== 'string' || signature === '') return null;
  return placed({ dialect: 'anthropic', type: 'thinking', thinking, signature }, calls);
}

function redactedPart(data: unknown, calls: number): ReasoningPart | null {
  if (typeof data !== 'string' || data === '') return null;
  return placed({ dialect: 'anthropic', type: 'redacted_thinking', data }, calls);
}

/** A thinking or redacted_thinking block being streamed, and how many tool_use blocks came before it. */
type OpenBlock =
  | { type: 'thinking'; thinking: string; signature: string; calls: number }
  | { type: 'redacted_thinking'; data: string; calls: number };

/**
 * Per-response stream state: input-token counts arrive in message_start, output in message_delta;
 * a thinking block is assembled from its deltas (thinking_delta, signature_delta) and becomes a
 * part at its content_block_stop.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  #counts: InputCounts = { input: 0 };
  #output = 0;
  readonly #open = new Map<number, OpenBlock>();
  #toolUses = 0;

  #close(index: number): StreamDelta | null {
    const b = this.#open.get(index);
    if (!b) return null;
    this.#open.delete(index);
    const p = b.type === 'thinking' ? thinkingPart(b.thinking, b.signature, b.calls) : redactedPart(b.data, b.calls);
    return p ? { reasoningParts: [p] } : null;
  }

  feed(event: string, data: string): StreamDelta | null {
    const e = typedEvent(event, data);
    if (e === null || 'error' in e) return e;
    const { type, o } = e;
    switch (type) {
      case 'message_start': {
        const u = isObj(o.message) && isObj(o.message.usage) ? o.message.usage : undefined;
        if (u) {
          this.#counts = inputCounts(u);
          this.#output = count(u.output_tokens);
        }
        return null;
      }
      case 'content_block_start': {
        const b = o.content_block;
        const index = streamIndex(o.index);
        if (!isObj(b)) return null;
        if (b.type === 'tool_use') {
          this.#toolUses++;
          const call: { index: number; id?: string; name?: string; args?: string } = { index };
          if (typeof b.id === 'string') call.id = b.id;
          if (typeof b.name === 'string') call.name = b.name;
          // The API streams the input as deltas after an empty `{}`; a proxy may send it whole here.
          if (isObj(b.input) && Object.keys(b.input).length > 0) call.args = JSON.stringify(b.input);
          return { toolCalls: [call] };
        }
        if (b.type === 'text') {
          const text = textIn(b.text, 'text block');
          return text ? { text } : null;
        }
        if (b.type === 'thinking') {
          const thinking = str(b.thinking);
          this.#open.set(index, { type: 'thinking', thinking, signature: str(b.signature), calls: this.#toolUses });
          return thinking !== '' ? { reasoning: thinking } : null;
        }
        if (b.type === 'redacted_thinking') this.#open.set(index, { type: 'redacted_thinking', data: str(b.data), calls: this.#toolUses });
        return null;
      }
      case 'content_block_delta': {
        const d = o.delta;
        if (!isObj(d)) return null;
        if (d.type === 'text_delta') {
          const text = textIn(d.text, 'text_delta');
          return text ? { text } : null;
        }
        const open = this.#open.get(streamIndex(o.index));
        if (d.type === 'thinking_delta' && typeof d.thinking === 'string') {
          if (open?.type === 'thinking') open.thinking += d.thinking;
          return d.thinking === '' ? null : { reasoning: d.thinking };
        }
        if (d.type === 'signature_delta' && typeof d.signature === 'string') {
          if (open?.type === 'thinking') open.signature += d.signature;
          return null;
        }
        if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
          return d.partial_json === '' ? null : { toolCalls: [{ index: streamIndex(o.index), args: d.partial_json }] };
        }
        return null; // citations_delta, …
      }
      case 'content_block_stop':
        return this.#close(streamIndex(o.index));
      case 'message_delta': {
        const delta: StreamDelta = {};
        const f = isObj(o.delta) ? finishFrom(o.delta.stop_reason) : null;
        if (f) delta.finishReason = f;
        if (isObj(o.usage)) {
          const u = o.usage;
          // Counts here are cumulative; newer API versions repeat the input counts too.
          if (typeof u.output_tokens === 'number') this.#output = count(u.output_tokens);
          delta.usage = toUsage(addCounts(this.#counts, u), this.#output);
        }
        return delta.finishReason || delta.usage ? delta : null;
      }
      case 'message_stop': {
        // A block the stream never closed is kept only if it is complete (signed).
        const parts = [...this.#open.keys()].flatMap((i) => this.#close(i)?.reasoningParts ?? []);
        return parts.length ? { done: true, reasoningParts: parts } : { done: true };
      }
      case 'error':
        return { error: errorText(o) ?? 'anthropic stream error' };
      default:
        return null; // ping, and event types added later
    }
  }
}

export const anthropicAdapter: ProviderAdapter = {
  kind: 'anthropic',
  endpointPath: 'messages',
  buildRequest: buildAnthropicRequest,
  headers: anthropicHeaders,
  parseReply: parseAnthropicReply,
  newStreamDecoder: () => guarded(new AnthropicStreamDecoder()),
  errorMessage: (body) => fromJson(body, errorText),
  refusesTools: saysToolsUnsupported,
};
