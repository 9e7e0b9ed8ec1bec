// Listing saved sessions for the resume picker: the last used first (a session resumed a minute
// ago before one created since), each with a one-line snippet of its first real user prompt.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '../core/types.js';
import { SessionError } from './errors.js';
import { isValidSessionId } from './id.js';
import { sessionDir, type SessionDirOptions } from './paths.js';
import { loadSession } from './store.js';

export interface SessionListRow {
  id: string;
  /** Unix seconds; 0 when unknown. */
  created: number;
  /** When the session was last used (its file last written), Unix seconds; 0 when unknown. */
  used: number;
  model?: string;
  provider?: string;
  agent?: string;
  /** First user message not starting with "[context update]": ≤ 80 bytes, CR/LF as spaces; null if none. */
  firstUser: string | null;
  messageCount: number;
}

const SNIPPET_BYTES = 80;

/** Cut to at most `max` UTF-8 bytes without splitting a character. */
function truncateUtf8(s: string, max: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= max) return s;
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

export function firstUserSnippet(messages: readonly Message[]): string | null {
  for (const m of messages) {
    if (m.role !== 'user' || m.content === null) continue;
    if (m.content.startsWith('[context update]')) continue;
    return truncateUtf8(m.content, SNIPPET_BYTES).replace(/[\r\n]/g, ' ');
  }
  return null;
}

/** Every readable session, last used first (then created desc, then id desc). A missing directory lists nothing. */
export function listSessions(opts: SessionDirOptions = {}): SessionListRow[] {
  const dir = sessionDir(opts);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new SessionError('EIO', `listing ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const rows: SessionListRow[] = [];
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const id = name.slice(0, -'.jsonl'.length);
    if (!isValidSessionId(id)) continue;
    let loaded: ReturnType<typeof loadSession>;
    try {
      loaded = loadSession(id, { ...opts, dir });
    } catch {
      continue; // unreadable or written by a newer version: not offered
    }
    const { meta, messages } = loaded;
    let used = 0;
    try {
      used = statSync(join(dir, name)).mtimeMs / 1000;
    } catch {
      /* gone since: listed with what was read */
    }
    const row: SessionListRow = {
      id,
      created: meta.created,
      used,
      firstUser: firstUserSnippet(loaded.firstUser ? [loaded.firstUser] : messages),
      messageCount: messages.length,
    };
    if (meta.model !== undefined) row.model = meta.model;
    if (meta.provider !== undefined) row.provider = meta.provider;
    if (meta.agent !== undefined) row.agent = meta.agent;
    rows.push(row);
  }
  rows.sort((a, b) => b.used - a.used || b.created - a.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return rows;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM` in local time, or `?` when the time is unknown. */
export function formatSessionTime(unixSeconds: number): string {
  if (!unixSeconds || !Number.isFinite(unixSeconds)) return '?';
  const d = new Date(unixSeconds * 1000);
  if (Number.isNaN(d.getTime())) return '?';
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/**
 * The picker's rows: "%3zu) %s  %s  %s\n     %s\n" per session (the layout other clm versions
 * print), with the time of last use, by which the list is ordered (the id holds the creation time).
 */
export function formatSessionList(rows: readonly SessionListRow[]): string {
  let out = '';
  rows.forEach((r, i) => {
    out += `${String(i + 1).padStart(3)}) ${r.id}  ${formatSessionTime(r.used)}  ${r.model ?? '?'}\n     ${r.firstUser || '(empty)'}\n`;
  });
  return out;
}
