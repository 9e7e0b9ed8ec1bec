// Listing saved sessions for the resume picker: the last used first (a session resumed a minute
// ago before one created since), each with a one-line snippet of its first real user prompt.

import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Message } from '../core/types.js';
import { SessionError } from './errors.js';
import { parseSessionLine, type SessionMeta } from './format.js';
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
  const buf = Buffer.allocUnsafe(READ_BYTES);
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const id = name.slice(0, -'.jsonl'.length);
    if (!isValidSessionId(id)) continue;
    try {
      rows.push(rowOf(id, { ...opts, dir }, buf));
    } catch {
      /* unreadable or written by a newer version: not offered */
    }
  }
  rows.sort((a, b) => b.used - a.used || b.created - a.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return rows;
}

/** Bytes read at a time when listing. */
const READ_BYTES = 256 * 1024;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
// How a rewind line starts (format.ts writes it so): one can take the first prompt back.
const REWIND = Buffer.from('{"type":"rewind"');

/**
 * A session's row. Its meta and first prompt are parsed from the head of the file; the rest is
 * only looked through for a rewind line (then, or when the head lacks either, the whole file is
 * read as a resume reads it). The message count is counted when asked for: a long history takes
 * a while to parse, and the picker shows none.
 */
function rowOf(id: string, opts: SessionDirOptions & { dir: string }, buf: Buffer): SessionListRow {
  const path = join(opts.dir, `${id}.jsonl`);
  const fd = openSync(path, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  let head: ReturnType<typeof readHead>;
  let used: number;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error('not a regular file');
    used = st.mtimeMs / 1000;
    head = readHead(fd, buf);
  } finally {
    closeSync(fd);
  }
  let meta: SessionMeta;
  let firstUser: string | null;
  let count: number | undefined;
  if (head) {
    meta = head.meta;
    firstUser = firstUserSnippet([head.firstUser]);
  } else {
    const loaded = loadSession(id, opts);
    meta = loaded.meta;
    firstUser = firstUserSnippet(loaded.firstUser ? [loaded.firstUser] : loaded.messages);
    count = loaded.messages.length;
  }
  const row = { id, created: meta.created, used, firstUser } as SessionListRow;
  Object.defineProperty(row, 'messageCount', {
    enumerable: true,
    get: () => (count ??= messageCount(id, opts)),
  });
  if (meta.model !== undefined) row.model = meta.model;
  if (meta.provider !== undefined) row.provider = meta.provider;
  if (meta.agent !== undefined) row.agent = meta.agent;
  return row;
}

function messageCount(id: string, opts: SessionDirOptions): number {
  try {
    return loadSession(id, opts).messages.length;
  } catch {
    return 0; // gone or changed since it was listed
  }
}

/** The meta line and the first real prompt from the head of a file, or null when the whole file has to be read. */
function readHead(fd: number, buf: Buffer): { meta: SessionMeta; firstUser: Message } | null {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let meta: SessionMeta | null = null;
  let firstUser: Message | null = null;
  let carry = 0; // bytes kept from the last piece, so a rewind line cut between two pieces is seen
  for (;;) {
    const n = readSync(fd, buf, carry, buf.length - carry, null);
    if (n === 0) break;
    const end = carry + n;
    if (buf.subarray(0, end).includes(REWIND)) return null;
    if (!(meta && firstUser)) {
      const lines = (pending + decoder.write(buf.subarray(carry, end))).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        // As SessionReader takes them (a newer format throws: the file is not offered).
        const p = parseSessionLine(line);
        if (p.kind === 'meta') meta ??= p.meta;
        else if (p.kind === 'msg' && !firstUser && p.message.role === 'user' && !p.message.content?.startsWith('[context update]'))
          firstUser = p.message;
        if (meta && firstUser) break;
      }
    }
    carry = Math.min(REWIND.length - 1, end);
    buf.copy(buf, 0, end - carry, end);
  }
  return meta && firstUser ? { meta, firstUser } : null;
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
