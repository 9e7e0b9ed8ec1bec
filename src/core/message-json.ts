// Lossless message JSON (clm_message_to_json_full / clm_message_from_json): the form sessions
// persist. Unlike the wire format it keeps tool_name, flat tool calls, and an assistant
// message's reasoning parts exactly as the provider sent them.

import { ClmError, messageOf } from './errors.js';
import type { AssistantMessage, Message, ReasoningPart, ReasoningTextField, Role, ToolCall } from './types.js';

/** A reasoning part (see ReasoningPart); `before_call` is its `beforeCall`. */
export type ReasoningPartJson =
  | { dialect: 'anthropic'; type: 'thinking'; thinking: string; signature: string; before_call?: number }
  | { dialect: 'anthropic'; type: 'redacted_thinking'; data: string; before_call?: number }
  | { dialect: 'openai-responses'; type: 'reasoning'; item: Record<string, unknown>; before_call?: number }
  | { dialect: 'openai'; type: 'reasoning_text'; field: ReasoningTextField; text: string; origin: string; before_call?: number };

export interface MessageJson {
  role: Role;
  content?: string | null;
  tool_call_id?: string;
  tool_name?: string;
  tool_calls?: { id?: string; name?: string; args?: string }[];
  reasoning?: ReasoningPartJson[];
}

function partToJson(p: ReasoningPart): ReasoningPartJson {
  const o: ReasoningPartJson =
    p.type === 'thinking'
      ? { dialect: p.dialect, type: p.type, thinking: p.thinking, signature: p.signature }
      : p.type === 'redacted_thinking'
        ? { dialect: p.dialect, type: p.type, data: p.data }
        : p.type === 'reasoning_text'
          ? { dialect: p.dialect, type: p.type, field: p.field, text: p.text, origin: p.origin }
          : { dialect: p.dialect, type: p.type, item: { ...p.item } };
  if (p.beforeCall) o.before_call = p.beforeCall;
  return o;
}

/**
 * One part back from JSON; throws ClmError('EINVAL') for a malformed one. A part of a dialect or
 * type this version does not know is left out (null): no request of it could carry it.
 */
function partFromJson(v: unknown): ReasoningPart | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ClmError('EINVAL', 'a reasoning part is not an object');
  const o = v as Record<string, unknown>;
  if (typeof o.dialect !== 'string' || typeof o.type !== 'string') throw new ClmError('EINVAL', 'a reasoning part has no dialect or type');
  let before: number | undefined;
  if (o.before_call !== undefined) {
    if (typeof o.before_call !== 'number' || !Number.isSafeInteger(o.before_call) || o.before_call < 0)
      throw new ClmError('EINVAL', 'reasoning before_call is not a whole number ≥ 0');
    if (o.before_call > 0) before = o.before_call;
  }
  const str = (k: string, nonEmpty = false): string => {
    const x = o[k];
    if (typeof x !== 'string' || (nonEmpty && x === ''))
      throw new ClmError('EINVAL', `reasoning ${o.type} ${k} is not a${nonEmpty ? ' non-empty' : ''} string`);
    return x;
  };
  let p: ReasoningPart;
  if (o.dialect === 'anthropic' && o.type === 'thinking')
    p = { dialect: 'anthropic', type: 'thinking', thinking: str('thinking'), signature: str('signature', true) };
  else if (o.dialect === 'anthropic' && o.type === 'redacted_thinking')
    p = { dialect: 'anthropic', type: 'redacted_thinking', data: str('data', true) };
  else if (o.dialect === 'openai-responses' && o.type === 'reasoning') {
    const item = o.item;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new ClmError('EINVAL', 'reasoning item is not an object');
    // A copy that is plain JSON, so the message owns it and it serialises as it came.
    p = { dialect: 'openai-responses', type: 'reasoning', item: JSON.parse(JSON.stringify(item)) as Record<string, unknown> };
  } else if (o.dialect === 'openai' && o.type === 'reasoning_text') {
    if (o.field !== 'reasoning_content' && o.field !== 'reasoning')
      throw new ClmError('EINVAL', 'reasoning reasoning_text field is not "reasoning_content" or "reasoning"');
    p = { dialect: 'openai', type: 'reasoning_text', field: o.field, text: str('text'), origin: str('origin', true) };
  } else return null;
  if (before !== undefined) p.beforeCall = before;
  return p;
}

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

/** Serialise one message losslessly (key order fixed: role, content, tool_call_id, tool_name, tool_calls, reasoning). */
export function messageToJson(m: Message): MessageJson {
  const o: MessageJson = { role: m.role };
  if (m.content !== null && m.content !== undefined) o.content = m.content;
  else if (m.role === 'assistant') o.content = null;
  if (m.toolCallId !== undefined) o.tool_call_id = m.toolCallId;
  if (m.toolName !== undefined) o.tool_name = m.toolName;
  if (m.toolCalls?.length) o.tool_calls = m.toolCalls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
  if (m.role === 'assistant' && m.reasoning?.length) o.reasoning = m.reasoning.map(partToJson);
  return o;
}

/** Parse a message (as produced by messageToJson) without appending it; throws ClmError('EINVAL'). */
export function parseMessageJson(obj: unknown): Message {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new ClmError('EINVAL', 'message is not an object');
  const o = obj as Record<string, unknown>;
  if (typeof o.role !== 'string') throw new ClmError('EINVAL', 'message has no role');
  if (!ROLES.has(o.role)) throw new ClmError('EINVAL', `message has an unknown role '${o.role}'`);
  const role = o.role as Role;
  if (o.content !== undefined && o.content !== null && typeof o.content !== 'string')
    throw new ClmError('EINVAL', 'message content is not a string');
  const m: Message = { role, content: typeof o.content === 'string' ? o.content : null };
  if (o.tool_call_id !== undefined) {
    if (typeof o.tool_call_id !== 'string') throw new ClmError('EINVAL', 'tool_call_id is not a string');
    m.toolCallId = o.tool_call_id;
  }
  if (o.tool_name !== undefined) {
    if (typeof o.tool_name !== 'string') throw new ClmError('EINVAL', 'tool_name is not a string');
    m.toolName = o.tool_name;
  }
  if (o.tool_calls !== undefined) {
    if (!Array.isArray(o.tool_calls)) throw new ClmError('EINVAL', 'tool_calls is not an array');
    const calls: ToolCall[] = [];
    for (const c of o.tool_calls) {
      if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new ClmError('EINVAL', 'a tool call is not an object');
      const cc = c as Record<string, unknown>;
      for (const k of ['id', 'name', 'args'] as const) {
        if (cc[k] !== undefined && typeof cc[k] !== 'string') throw new ClmError('EINVAL', `tool call ${k} is not a string`);
      }
      calls.push({ id: (cc.id as string) ?? '', name: (cc.name as string) ?? '', args: (cc.args as string) ?? '{}' });
    }
    if (role === 'assistant' && calls.length) m.toolCalls = calls;
  }
  if (o.reasoning !== undefined) {
    if (!Array.isArray(o.reasoning)) throw new ClmError('EINVAL', 'reasoning is not an array');
    const parts = o.reasoning.map(partFromJson).filter((p): p is ReasoningPart => p !== null);
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
    throw new ClmError('EINVAL', `invalid message in history: ${messageOf(e)}`);
  }
}
