// Lossless message JSON (clm_message_to_json_full / clm_message_from_json): the form sessions
// persist. Unlike the wire format it keeps tool_name, flat tool calls, and an assistant
// message's reasoning parts exactly as the provider sent them.

import { ClmError, messageOf } from './errors.js';
import { isObj } from './providers/util.js';
import type { AssistantMessage, Message, ReasoningPart, ReasoningTextField, Role, ToolCall } from './types.js';

/** A reasoning part (see ReasoningPart); `before_call` is its `beforeCall`. */
export type ReasoningPartJson =
  | { dialect: 'anthropic'; type: 'thinking'; thinking: string; signature: string; before_call?: number }
  | { dialect: 'anthropic'; type: 'redacted_thinking'; data: string; before_call?: number }
  | { dialect: 'openai-responses'; type: 'reasoning'; item: Record<string, unknown>; before_call?: number }
  | { dialect: 'openai'; type: 'reasoning_text'; field: ReasoningTextField; text: string; origin: string; before_call?: number }
  | { dialect: 'openai'; type: 'extra_content'; value: unknown; origin: string; call?: number; before_call?: number };

export interface MessageJson {
  role: Role;
  content?: string | null;
  tool_call_id?: string;
  tool_name?: string;
  tool_calls?: { id?: string; name?: string; args?: string }[];
  reasoning?: ReasoningPartJson[];
}

/**
 * The fields of each part type this version knows, by `<dialect> <type>` (no key of a plain
 * object has a space), in their JSON order: `text` a string, `name` a non-empty string,
 * `object` a JSON object, `json` any JSON value but null, `field` a reasoning text field,
 * `call` (optional) the index of one of the message's tool calls. Objects and values come back
 * as plain JSON copies, so the message owns them and they serialise as they came.
 */
const PART_FIELDS: Record<string, Record<string, 'text' | 'name' | 'object' | 'json' | 'field' | 'call'>> = {
  'anthropic thinking': { thinking: 'text', signature: 'name' },
  'anthropic redacted_thinking': { data: 'name' },
  'openai-responses reasoning': { item: 'object' },
  'openai reasoning_text': { field: 'field', text: 'text', origin: 'name' },
  'openai extra_content': { value: 'json', origin: 'name', call: 'call' },
};

function bad(message: string): never {
  throw new ClmError('EINVAL', message);
}

function partToJson(p: ReasoningPart): ReasoningPartJson {
  const o: Record<string, unknown> = { dialect: p.dialect, type: p.type };
  const from = p as unknown as Record<string, unknown>;
  for (const k in PART_FIELDS[`${p.dialect} ${p.type}`] ?? {}) if (from[k] !== undefined) o[k] = from[k];
  if (p.beforeCall) o.before_call = p.beforeCall;
  return o as ReasoningPartJson;
}

/**
 * One part back from JSON, of a message with `calls` tool calls; throws ClmError('EINVAL') for a
 * malformed one. A part of a dialect or type this version does not know is left out (null): no
 * request of it could carry it.
 */
function partFromJson(v: unknown, calls: number): ReasoningPart | null {
  if (!isObj(v)) return bad('a reasoning part is not an object');
  const { dialect, type, before_call: before } = v;
  if (typeof dialect !== 'string' || typeof type !== 'string') return bad('a reasoning part has no dialect or type');
  if (before !== undefined && !(Number.isSafeInteger(before) && before >= 0)) bad('reasoning before_call is not a whole number ≥ 0');
  const fields = PART_FIELDS[`${dialect} ${type}`];
  if (!fields) return null;
  const p: Record<string, unknown> = { dialect, type };
  for (const [k, kind] of Object.entries(fields)) {
    let x = v[k];
    const not = `reasoning ${type} ${k} is not`;
    if (kind === 'call') {
      if (x === undefined) continue;
      if (!(Number.isSafeInteger(x) && x >= 0 && x < calls)) bad(`${not} the index of one of the message's tool calls`);
    } else if (kind === 'object' || kind === 'json') {
      if (kind === 'object' ? !isObj(x) : x === undefined || x === null) bad(`${not} ${kind === 'object' ? 'an object' : 'a JSON value'}`);
      x = JSON.parse(JSON.stringify(x));
    } else if (kind === 'field') {
      if (x !== 'reasoning_content' && x !== 'reasoning') bad(`${not} "reasoning_content" or "reasoning"`);
    } else if (typeof x !== 'string' || (kind === 'name' && !x)) bad(`${not} a${kind === 'name' ? ' non-empty' : ''} string`);
    p[k] = x;
  }
  if (before) p.beforeCall = before;
  return p as unknown as ReasoningPart;
}

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

/** Serialise one message losslessly (key order fixed: role, content, tool_call_id, tool_name, tool_calls, reasoning). */
export function messageToJson(m: Message): MessageJson {
  const o: MessageJson = { role: m.role };
  if (m.content != null) o.content = m.content;
  else if (m.role === 'assistant') o.content = null;
  if (m.toolCallId !== undefined) o.tool_call_id = m.toolCallId;
  if (m.toolName !== undefined) o.tool_name = m.toolName;
  if (m.toolCalls?.length) o.tool_calls = m.toolCalls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
  if (m.role === 'assistant' && m.reasoning?.length) o.reasoning = m.reasoning.map(partToJson);
  return o;
}

/** Parse a message (as produced by messageToJson) without appending it; throws ClmError('EINVAL'). */
export function parseMessageJson(obj: unknown): Message {
  if (!isObj(obj)) return bad('message is not an object');
  const o: Record<string, unknown> = obj;
  if (typeof o.role !== 'string') bad('message has no role');
  if (!ROLES.has(o.role)) bad(`message has an unknown role '${o.role}'`);
  const role = o.role as Role;
  if (o.content != null && typeof o.content !== 'string') bad('message content is not a string');
  const m: Message = { role, content: typeof o.content === 'string' ? o.content : null };
  if (o.tool_call_id !== undefined) {
    if (typeof o.tool_call_id !== 'string') bad('tool_call_id is not a string');
    m.toolCallId = o.tool_call_id;
  }
  if (o.tool_name !== undefined) {
    if (typeof o.tool_name !== 'string') bad('tool_name is not a string');
    m.toolName = o.tool_name;
  }
  if (o.tool_calls !== undefined) {
    if (!Array.isArray(o.tool_calls)) bad('tool_calls is not an array');
    const calls: ToolCall[] = [];
    for (const c of o.tool_calls) {
      if (!isObj(c)) return bad('a tool call is not an object');
      const cc = c;
      for (const k of ['id', 'name', 'args'] as const) {
        if (cc[k] !== undefined && typeof cc[k] !== 'string') bad(`tool call ${k} is not a string`);
      }
      calls.push({ id: (cc.id as string) ?? '', name: (cc.name as string) ?? '', args: (cc.args as string) ?? '{}' });
    }
    if (role === 'assistant' && calls.length) m.toolCalls = calls;
  }
  if (o.reasoning !== undefined) {
    if (!Array.isArray(o.reasoning)) bad('reasoning is not an array');
    const calls = m.toolCalls?.length ?? 0;
    const parts = o.reasoning.map((r) => partFromJson(r, calls)).filter((p): p is ReasoningPart => p !== null);
    if (role === 'assistant' && parts.length) (m as AssistantMessage).reasoning = parts;
  }
  return m;
}

/** Parse and append to history. Nothing is appended on error (ClmError EINVAL). */
export function messageFromJson(history: Message[], obj: unknown): Message {
  const m = parseMessageJson(obj);
  history.push(m);
  return m;
}

/** Checked copies of the non-system messages (what restoreHistory takes in); ClmError('EINVAL') for the first bad one. */
export function validNonSystemCopies(messages: readonly Message[]): Message[] {
  try {
    return messages.filter((m) => m.role !== 'system').map((m) => parseMessageJson(messageToJson(m)));
  } catch (e) {
    if (e instanceof ClmError) throw e;
    bad(`invalid message in history: ${messageOf(e)}`);
  }
}
