// The append-only JSONL session store. One file `<id>.jsonl` per conversation, created
// exclusively with mode 0600; each line is written with a single write on an O_APPEND descriptor
// so a crash leaves at most one truncated last line, which loading skips.
//
// Only what the caller appends is stored: the meta line (id, time, model, provider, agent) and
// messages. Nothing here reads configuration, so API keys reach a session file only if a caller
// puts one into a message — callers must not.
//
// Session files are never followed through a symbolic link (a link planted in the state
// directory would make clm append to, or read, whatever it points at) and only regular files
// are opened: a FIFO or device in the directory is an error, not a hang.

import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../host/regular-file.js';
import type { CompactionRecord, Message } from '../core/types.js';
import { SessionError } from './errors.js';
import {
  encodeCompactLine,
  encodeMessageLine,
  encodeMetaLine,
  parseSessionText,
  SESSION_FORMAT_VERSION,
  type SessionMeta,
} from './format.js';
import { assertValidSessionId, newSessionId } from './id.js';
import { ensureSessionDir, sessionDir, type SessionDirOptions } from './paths.js';

export interface CreateSessionOptions extends SessionDirOptions {
  model?: string;
  provider?: string;
  /** The agent profile chosen with -a (not the configured default). */
  agent?: string;
  /** Creation time (tests). */
  now?: Date;
}

export interface LoadedSession {
  /** The first meta line; a file without one yields {v:1, id, created:0}. */
  meta: SessionMeta;
  /** The conversation, with saved compactions replayed. */
  messages: Message[];
  /** Every message as it was logged, compactions not applied (to replay the whole conversation on screen). */
  transcript: Message[];
  /** The transcript's first prompt, even when a compaction folded it away. */
  firstUser: Message | null;
  /** Lines that could not be read (damaged, cut by a crash, unknown): their content is not restored. */
  skipped: number;
}

/** Session files above this size are refused (a JavaScript string could not hold much more). */
export const MAX_SESSION_BYTES = 256 * 1024 * 1024;

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND;
// Read-write so the last byte can be checked on the same descriptor; O_NONBLOCK so a FIFO opens
// at once (and is then refused) instead of waiting for a reader.
const APPEND_FLAGS = constants.O_RDWR | constants.O_APPEND | NOFOLLOW | NONBLOCK;

/** Why a session file cannot be opened, in words (a link, not a regular file, …). */
function openProblem(id: string, e: unknown): string {
  const code = errnoCode(e);
  if (code === 'ELOOP') return `session ${id} is a symbolic link; clm does not follow links to session files`;
  if (code === 'ENOTREG' || code === 'ENXIO' || code === 'EISDIR') return `session ${id} is not a regular file`;
  if (code === 'EFBIG') return `session ${id} is larger than ${MAX_SESSION_BYTES >> 20} MiB`;
  return '';
}

function sessionPath(id: string, opts: SessionDirOptions): string {
  return join(sessionDir(opts), `${id}.jsonl`);
}

function errnoCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException)?.code;
}

/** Write a whole buffer; a regular file takes it in one write, the loop only guards short writes. Returns the bytes written. */
function writeAll(fd: number, text: string): number {
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  return buf.length;
}

/** An open session file, appended to as the conversation goes. */
export class Session {
  readonly id: string;
  readonly path: string;
  private fd: number | null;
  private hasMessages: boolean;
  /** Bytes in the file after the last complete line: a failed write is cut back to here. */
  private size: number;

  /** @internal use createSession / openSession. */
  constructor(id: string, path: string, fd: number, hasMessages: boolean, size: number) {
    this.id = id;
    this.path = path;
    this.fd = fd;
    this.hasMessages = hasMessages;
    this.size = size;
  }

  /** One whole line or nothing: a write that fails half way (a full disk) leaves no partial line behind. */
  private writeLine(text: string): void {
    const fd = this.fd!;
    try {
      this.size += writeAll(fd, text);
    } catch (e) {
      try {
        ftruncateSync(fd, this.size);
      } catch {
        /* the line stays cut; loading skips it */
      }
      throw new SessionError('EIO', `writing session ${this.id}: ${(e as Error).message}`, { cause: e });
    }
  }

  /** False once a user or assistant message was appended (or the session was reopened). */
  get isEmpty(): boolean {
    return !this.hasMessages;
  }

  get closed(): boolean {
    return this.fd === null;
  }

  /** Append one message as one line. System messages are not logged (returns false). */
  append(msg: Message): boolean {
    if (this.fd === null) throw new SessionError('EINVAL', `session ${this.id} is closed`);
    if (msg.role === 'system') return false;
    this.writeLine(encodeMessageLine(msg));
    if (msg.role === 'user' || msg.role === 'assistant') this.hasMessages = true;
    return true;
  }

  /** Record a compaction (see format.ts) so a resumed session continues compacted. */
  appendCompaction(c: CompactionRecord): void {
    if (this.fd === null) throw new SessionError('EINVAL', `session ${this.id} is closed`);
    this.writeLine(encodeCompactLine(c));
  }

  /** Close the file; an empty session (no user/assistant message) is deleted. Returns whether the file was kept. */
  close(): boolean {
    if (this.fd === null) return this.hasMessages;
    closeSync(this.fd);
    this.fd = null;
    if (!this.hasMessages) {
      removeFile(this.path);
      return false;
    }
    return true;
  }

  /** Close and delete the file whatever it holds (/clear of an empty session, tests). */
  discard(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.hasMessages = false;
    removeFile(this.path);
  }
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw new SessionError('EIO', `deleting ${path}: ${(e as Error).message}`, { cause: e });
  }
}

/** Start a new session: a fresh id, the file created exclusively (0600) with its meta line. */
export function createSession(opts: CreateSessionOptions = {}): Session {
  const dir = ensureSessionDir(opts);
  const now = opts.now ?? new Date();
  // The 8 random hex digits make a clash unlikely; O_EXCL makes it harmless.
  for (let attempt = 0; ; attempt++) {
    const id = newSessionId(now);
    const path = join(dir, `${id}.jsonl`);
    let fd: number;
    try {
      fd = openSync(path, CREATE_FLAGS, 0o600);
    } catch (e) {
      if (errnoCode(e) === 'EEXIST' && attempt < 8) continue;
      throw new SessionError(errnoCode(e) === 'EEXIST' ? 'EEXIST' : 'EIO', `creating session file ${path}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    let size: number;
    try {
      size = writeAll(
        fd,
        encodeMetaLine({ id, created: Math.floor(now.getTime() / 1000), model: opts.model, provider: opts.provider, agent: opts.agent }),
      );
    } catch (e) {
      closeSync(fd);
      removeFile(path);
      throw new SessionError('EIO', `writing session file ${path}: ${(e as Error).message}`, { cause: e });
    }
    return new Session(id, path, fd, false, size);
  }
}

/**
 * Reopen an existing session for appending (after resuming it). A truncated last line left by
 * a crash is terminated first, so the next message starts on a line of its own.
 */
export function openSession(id: string, opts: SessionDirOptions = {}): Session {
  assertValidSessionId(id);
  const path = sessionPath(id, opts);
  let fd: number;
  try {
    fd = openSync(path, APPEND_FLAGS);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') throw new SessionError('ENOENT', `no such session: ${id}`, { cause: e });
    throw new SessionError('EIO', openProblem(id, e) || `opening session ${id}: ${(e as Error).message}`, { cause: e });
  }
  let size: number;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTREG' });
    size = st.size;
    if (size > 0 && !endsWithNewline(fd, size)) size += writeAll(fd, '\n');
  } catch (e) {
    closeSync(fd);
    throw new SessionError('EIO', openProblem(id, e) || `opening session ${id}: ${(e as Error).message}`, { cause: e });
  }
  return new Session(id, path, fd, true, size);
}

function endsWithNewline(fd: number, size: number): boolean {
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, size - 1);
  return b[0] === 0x0a;
}

/** Read a session: its meta and every readable message. ENOENT if missing, EPROTONOSUPPORT if newer. */
export function loadSession(id: string, opts: SessionDirOptions = {}): LoadedSession {
  assertValidSessionId(id);
  const path = sessionPath(id, opts);
  let text: string;
  try {
    text = readRegularFileSync(path, MAX_SESSION_BYTES, { noFollow: true }).toString('utf8');
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') throw new SessionError('ENOENT', `no such session: ${id}`, { cause: e });
    throw new SessionError('EIO', openProblem(id, e) || `reading session ${id}: ${(e as Error).message}`, { cause: e });
  }
  const { meta, messages, transcript, firstUser, skipped } = parseSessionText(text);
  return { meta: meta ?? { type: 'meta', v: SESSION_FORMAT_VERSION, id, created: 0 }, messages, transcript, firstUser, skipped };
}

/** Delete a session file. ENOENT if it does not exist. */
export function deleteSession(id: string, opts: SessionDirOptions = {}): void {
  assertValidSessionId(id);
  const path = sessionPath(id, opts);
  try {
    unlinkSync(path);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') throw new SessionError('ENOENT', `no such session: ${id}`, { cause: e });
    throw new SessionError('EIO', `deleting session ${id}: ${(e as Error).message}`, { cause: e });
  }
}
