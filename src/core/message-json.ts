// Lossless message JSON (clm_message_to_json_full / clm_message_from_json): the form sessions
// persist. Unlike the wire format it keeps tool_name and flat tool calls.

import { ClmError } from './errors.js';
import type { Message, Role, ToolCall } from './types.js';

export interface MessageJson {
  role: Role;
  content?: string | null;
  tool_call_id?: string;
  tool_name?: string;
  tool_calls?: { id?: string; name?: string; args?: string }[];
}

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

/** Serialise one message losslessly (key order fixed: role, content, tool_call_id, tool_name, tool_calls). */
export function messageToJson(m: Message): MessageJson {
  const o: MessageJson = { role: m.role };
  if (m.content !== null && m.content !== undefined) o.content = m.content;
  else if (m.role === 'assistant') o.content = null;
  if (m.toolCallId !== undefined) o.tool_call_id = m.toolCallId;
  if (m.toolName !== undefined) o.tool_name = m.toolName;
  if (m.toolCalls && m.toolCalls.length) o.tool_calls = m.toolCalls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
  return o;
}

/** Parse a message (as produced by messageToJson) without appending it; throws ClmError('EINVAL'). */
export function parseMessageJson(obj: unknown): Message {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new ClmError('EINVAL', 'message is not an object');
  const o = obj as Record<string, unknown>;
  if (typeof o.role !== 'string') throw new ClmError('EINVAL', 'message has no role');
  if (!ROLES.has(o.role)) throw new ClmError('EINVAL', `message has an unknown role '${o.role}'`);
  const role = o.role as Role;
  if (o.content !== undefined && o.content !== null && typeof o.content !== 'string') throw new ClmError('EINVAL', 'message content is not a string');
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
    throw new ClmError('EINVAL', `invalid message in history: ${e instanceof Error ? e.message : String(e)}`);
  }
}
