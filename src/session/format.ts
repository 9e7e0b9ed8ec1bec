// The JSONL line format. One meta line first, then one line per message:
//   {"type":"meta","v":1,"id":…,"created":<unix s>,"model"?,"provider"?,"agent"?,"forked_from"?}
//   {<lossless message JSON>,"type":"msg"}      ("type" is the last key, so files read and written by other clm versions match)
//   {"type":"compact","index":i,"count":n,"summary":"…"}   messages i..i+n-1 were folded into a
//       summary; replayed on load so a resumed session continues compacted. Readers that do not
//       know the line skip it and replay the whole transcript.
//   {"type":"rewind","messages":n}   the conversation went back to where it stood when it held
//       n messages (an undo or rewind): what was logged after those n is no longer part of it.
//   {"type":"tool_run","id":…,"tool":…,"sandbox":…}   how a tool call ran (the sandbox mode:
//       read-only, workspace-write, full, unavailable, outside-once, unconfined); a record only,
//       skipped when loading.
// Reading is crash tolerant: anything that is not a well-formed line is skipped (and counted).

import { messageToJson, parseMessageJson } from '../core/message-json.js';
import { applyFold } from '../core/history.js';
import type { CompactionRecord, Message } from '../core/types.js';
import { SessionError } from './errors.js';

/** The format version this code writes; files with a higher version are refused. */
export const SESSION_FORMAT_VERSION = 1;

export interface SessionMeta {
  type: 'meta';
  v: number;
  id: string;
  /** Unix time in seconds (0 if the file had no meta line). */
  created: number;
  model?: string;
  provider?: string;
  agent?: string;
  /** The session this one was forked from (`clm -r ID --fork`, `/fork`). */
  forked_from?: string;
}

export function encodeMetaLine(meta: {
  id: string;
  created: number;
  model?: string;
  provider?: string;
  agent?: string;
  forkedFrom?: string;
}): string {
  // Build the object in the documented key order; absent fields are omitted.
  const o: SessionMeta = { type: 'meta', v: SESSION_FORMAT_VERSION, id: meta.id, created: meta.created };
  if (meta.model !== undefined) o.model = meta.model;
  if (meta.provider !== undefined) o.provider = meta.provider;
  if (meta.agent !== undefined) o.agent = meta.agent;
  if (meta.forkedFrom !== undefined) o.forked_from = meta.forkedFrom;
  return JSON.stringify(o) + '\n';
}

export function encodeMessageLine(m: Message): string {
  return JSON.stringify({ ...messageToJson(m), type: 'msg' }) + '\n';
}

export function encodeToolRunLine(r: { id: string; tool: string; sandbox: string }): string {
  return JSON.stringify({ type: 'tool_run', id: r.id, tool: r.tool, sandbox: r.sandbox }) + '\n';
}

export function encodeCompactLine(c: CompactionRecord): string {
  return JSON.stringify({ type: 'compact', index: c.index, count: c.count, summary: c.summary }) + '\n';
}

export function encodeRewindLine(messages: number): string {
  return JSON.stringify({ type: 'rewind', messages }) + '\n';
}

export type ParsedLine =
  | { kind: 'meta'; meta: SessionMeta }
  | { kind: 'msg'; message: Message }
  | ({ kind: 'compact' } & CompactionRecord)
  | { kind: 'rewind'; messages: number }
  /** damaged: unreadable (cut by a crash, not JSON, an invalid message); else a line of a kind this version does not know. */
  | { kind: 'skip'; damaged?: boolean };

/** Parse one line. Throws only for a meta line of a newer format version (EPROTONOSUPPORT). */
export function parseSessionLine(line: string): ParsedLine {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return { kind: 'skip', damaged: true };
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return { kind: 'skip', damaged: true };
  const o = obj as Record<string, unknown>;
  if (o.type === 'meta') {
    const v = typeof o.v === 'number' ? o.v : SESSION_FORMAT_VERSION;
    if (v > SESSION_FORMAT_VERSION) {
      throw new SessionError(
        'EPROTONOSUPPORT',
        `session file was written by a newer version of clm (format v${v}; this one reads v${SESSION_FORMAT_VERSION})`,
      );
    }
    const meta: SessionMeta = {
      type: 'meta',
      v,
      id: typeof o.id === 'string' ? o.id : '',
      created: typeof o.created === 'number' && Number.isFinite(o.created) ? o.created : 0,
    };
    for (const k of ['model', 'provider', 'agent', 'forked_from'] as const) if (typeof o[k] === 'string') meta[k] = o[k] as string;
    return { kind: 'meta', meta };
  }
  if (o.type === 'compact') {
    const { index, count, summary } = o;
    if (
      Number.isInteger(index) &&
      Number.isInteger(count) &&
      (index as number) >= 0 &&
      (count as number) > 0 &&
      typeof summary === 'string'
    ) {
      return { kind: 'compact', index: index as number, count: count as number, summary };
    }
    return { kind: 'skip', damaged: true };
  }
  if (o.type === 'rewind') {
    return Number.isInteger(o.messages) && (o.messages as number) >= 0
      ? { kind: 'rewind', messages: o.messages as number }
      : { kind: 'skip', damaged: true };
  }
  if (o.type === 'msg') {
    const { type: _type, ...rest } = o;
    try {
      return { kind: 'msg', message: parseMessageJson(rest) };
    } catch {
      return { kind: 'skip', damaged: true };
    }
  }
  return { kind: 'skip' };
}

/** What a session file's lines make: its meta and the conversation (see SessionReader). */
export interface SessionContent {
  meta: SessionMeta | null;
  messages: Message[];
  transcript: Message[];
  firstUser: Message | null;
  skipped: number;
}

/**
 * A session file's lines, read one at a time (so a long file can be read in steps): the first
 * meta line and the conversation with its compactions replayed; `transcript` is every message as
 * it was logged (for replay on screen), `firstUser` its first prompt (a compaction may have folded
 * it away).
 */
export class SessionReader {
  #meta: SessionMeta | null = null;
  #skipped = 0;
  // The lines that make the conversation as it stands: a rewind cuts them back.
  #lines: (ParsedLine & { kind: 'msg' | 'compact' })[] = [];

  /** One line of the file (without its newline). Throws only for a newer format (EPROTONOSUPPORT). */
  add(line: string): void {
    if (!line.trim()) return;
    const p = parseSessionLine(line);
    if (p.kind === 'skip') {
      if (p.damaged) this.#skipped++;
    } else if (p.kind === 'meta') this.#meta ??= p.meta;
    else if (p.kind === 'rewind') this.#lines = cutAt(this.#lines, p.messages);
    else this.#lines.push(p);
  }

  /** The conversation the lines added so far make. */
  content(): SessionContent {
    let skipped = this.#skipped;
    const messages: Message[] = [];
    const transcript: Message[] = [];
    let firstUser: Message | null = null;
    for (const p of this.#lines) {
      if (p.kind === 'msg') {
        messages.push(p.message);
        transcript.push(p.message);
        if (!firstUser && p.message.role === 'user' && !p.message.content?.startsWith('[context update]')) firstUser = p.message;
      } else if (p.index + p.count <= messages.length) {
        applyFold(messages, { at: p.index, count: p.count }, p.summary);
      } else {
        skipped++; // a fold of messages that are not there (lines before it were lost)
      }
    }
    return { meta: this.#meta, messages, transcript, firstUser, skipped };
  }
}

/** Parse a whole file's text (SessionReader in one piece). */
export function parseSessionText(text: string): SessionContent {
  const reader = new SessionReader();
  for (const line of text.split('\n')) reader.add(line);
  return reader.content();
}

/** The lines up to (not including) the message after the first `n`. */
function cutAt<T extends ParsedLine>(lines: T[], n: number): T[] {
  let seen = 0;
  for (let i = 0; i < lines.length; i++) if (lines[i]!.kind === 'msg' && seen++ === n) return lines.slice(0, i);
  return lines;
}
