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

import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../host/regular-file.js';
import type { CompactionRecord, Message } from '../core/types.js';
import { SessionError } from './errors.js';
import {
  encodeCompactLine,
  encodeToolRunLine,
  encodeMessageLine,
  encodeMetaLine,
  encodeRewindLine,
  parseSessionLine,
  SessionReader,
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

/**
 * `<id>.lock` beside the session file holds the pid of the clm that has it open, and that clm
 * keeps the lock file open while it runs: a second clm resuming it at the same time would
 * interleave two conversations in one file. The pid alone proves nothing — it may be pid 1, or
 * reused by another program after a crash or `kill -9` — so a holder counts only while it has
 * this very lock file open (on Linux, one of /proc/PID/fd is its inode; where that cannot be
 * read, a live pid whose command line is not clm's does not count). Any other lock is stale and
 * taken over. Without /proc a live pid cannot be told apart and counts as the holder,
 * unverified. Where no lock can be made (a directory that takes no new file) the session is
 * used unlocked, as before there were locks.
 */
function lockPathOf(path: string): string {
  return path.replace(/\.jsonl$/, '.lock');
}

/** Who holds a session's lock. */
export interface SessionLockHolder {
  pid: number;
  /** The lock file: deleting it takes the session over. */
  lockFile: string;
  /** Seen to be a process with the lock file open (Linux); false: a live pid this system cannot inspect. */
  verified: boolean;
}

const PROC = '/proc';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) === 'EPERM'; // someone else's process, alive
  }
}

function lockPid(lock: string): number | null {
  try {
    const pid = Number.parseInt(readRegularFileSync(lock, 64, { noFollow: true }).toString('utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether a command line (NUL-separated) is clm's: the launcher, or node running clm's bundle. */
function clmCommandLine(cmdline: string): boolean {
  return cmdline.split('\0').some((a) => /(^|\/)(clm|clm\.cjs)$/.test(a) || /(^|\/)dist\/cli\.js$/.test(a));
}

/**
 * Whether `pid` holds the lock whose inode is `ino` on `dev`: true (it has it open), false (it
 * does not, or it is not clm), null (this system cannot tell).
 */
function holdsLock(pid: number, dev: number, ino: number, proc: string): boolean | null {
  if (!existsSync(`${proc}/self/fd`)) return null;
  let fds: string[];
  try {
    fds = readdirSync(`${proc}/${pid}/fd`);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false; // gone meanwhile
    // Another user's process: its descriptors are not ours to read, its command line is.
    try {
      return clmCommandLine(readFileSync(`${proc}/${pid}/cmdline`, 'latin1')) ? null : false;
    } catch {
      return null;
    }
  }
  for (const fd of fds) {
    try {
      const st = statSync(`${proc}/${pid}/fd/${fd}`);
      if (st.ino === ino && st.dev === dev) return true;
    } catch {
      /* closed meanwhile */
    }
  }
  return false;
}

function lockHolder(lock: string, proc: string): SessionLockHolder | null {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(lock);
  } catch {
    return null;
  }
  const pid = lockPid(lock);
  if (pid === null || pid === process.pid || !processAlive(pid)) return null;
  const holds = holdsLock(pid, st.dev, st.ino, proc);
  return holds === false ? null : { pid, lockFile: lock, verified: holds === true };
}

/** Why a session cannot be taken, and how to take it anyway. */
export function sessionBusyMessage(id: string, h: SessionLockHolder): string {
  const who = h.verified
    ? `is in use by another clm (pid ${h.pid})`
    : `is locked by pid ${h.pid}, which is running (this system cannot tell whether it is a clm)`;
  return `session ${id} ${who}; resume it once that one has ended, or take it over by deleting its lock file ${h.lockFile}`;
}

/** Who holds session `id`'s lock, or null when it is free (no lock, or a stale one). */
export function sessionLockHolder(id: string, opts: SessionDirOptions & { proc?: string } = {}): SessionLockHolder | null {
  assertValidSessionId(id);
  return lockHolder(lockPathOf(sessionPath(id, opts)), opts.proc ?? PROC);
}

/** Take the session's lock; whether it is held (false: no lock could be made). Throws EBUSY when a live clm holds it. */
function takeLock(id: string, path: string): boolean {
  const lock = lockPathOf(path);
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(lock, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
    } catch (e) {
      if (errnoCode(e) !== 'EEXIST') return false;
      const holder = lockHolder(lock, PROC);
      if (holder) throw new SessionError('EBUSY', sessionBusyMessage(id, holder));
      try {
        unlinkSync(lock); // stale: its clm is gone
      } catch {
        /* taken over by another clm meanwhile: the next attempt says so */
      }
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } catch {
      /* an empty lock is stale to others: they read no pid and take it */
    }
    holdLock(lock, fd);
    return true;
  }
  return false;
}

/** The locks this process holds, each kept open (that is what marks it held), removed however it exits. */
const heldLocks = new Map<string, number>();
let exitHook = false;

function holdLock(lock: string, fd: number): void {
  heldLocks.set(lock, fd);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const l of heldLocks.keys()) removeLock(l);
  });
}

function removeLock(lock: string): void {
  const fd = heldLocks.get(lock);
  if (fd === undefined) return;
  heldLocks.delete(lock);
  try {
    // Still ours: the file at the path is the one this process opened (not a new clm's lock).
    const mine = fstatSync(fd);
    const there = statSync(lock);
    if (mine.ino === there.ino && mine.dev === there.dev) unlinkSync(lock);
  } catch {
    /* already gone */
  } finally {
    closeSync(fd);
  }
}

function releaseLock(path: string): void {
  removeLock(lockPathOf(path));
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
  constructor(
    id: string,
    path: string,
    fd: number,
    hasMessages: boolean,
    size: number,
    private readonly locked = false,
  ) {
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

  /** Record how a tool call ran (see format.ts). */
  appendToolRun(r: { id: string; tool: string; sandbox: string }): void {
    if (this.fd === null) throw new SessionError('EINVAL', `session ${this.id} is closed`);
    this.writeLine(encodeToolRunLine(r));
  }

  /** Record a compaction (see format.ts) so a resumed session continues compacted. */
  appendCompaction(c: CompactionRecord): void {
    if (this.fd === null) throw new SessionError('EINVAL', `session ${this.id} is closed`);
    this.writeLine(encodeCompactLine(c));
  }

  /** Record that the conversation went back to where it stood with `messages` messages (see format.ts). */
  appendRewind(messages: number): void {
    if (this.fd === null) throw new SessionError('EINVAL', `session ${this.id} is closed`);
    this.writeLine(encodeRewindLine(messages));
  }

  /** Close the file; an empty session (no user/assistant message) is deleted. Returns whether the file was kept. */
  close(): boolean {
    if (this.fd === null) return this.hasMessages;
    closeSync(this.fd);
    this.fd = null;
    if (this.locked) releaseLock(this.path);
    if (!this.hasMessages) {
      removeFile(this.path);
      return false;
    }
    return true;
  }

  /** Close and delete the file whatever it holds (/clear of an empty session, tests). */
  discard(): void {
    if (this.fd !== null) {
      closeSync(this.fd);
      if (this.locked) releaseLock(this.path);
    }
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

/** A file under a fresh id, created exclusively (0600), with `head` written; removed again when writing fails. */
function createFresh(dir: string, now: Date, head: (id: string) => string): { id: string; path: string; fd: number; size: number } {
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
    try {
      return { id, path, fd, size: writeAll(fd, head(id)) };
    } catch (e) {
      closeSync(fd);
      removeFile(path);
      throw new SessionError('EIO', `writing session file ${path}: ${(e as Error).message}`, { cause: e });
    }
  }
}

/** Start a new session: a fresh id, the file created exclusively (0600) with its meta line. */
export function createSession(opts: CreateSessionOptions = {}): Session {
  const now = opts.now ?? new Date();
  const created = Math.floor(now.getTime() / 1000);
  const { id, path, fd, size } = createFresh(ensureSessionDir(opts), now, (id) =>
    encodeMetaLine({ id, created, model: opts.model, provider: opts.provider, agent: opts.agent }),
  );
  // A fresh id is this clm's alone; the lock keeps a `clm -r ID` elsewhere out while it runs.
  let locked = false;
  try {
    locked = takeLock(id, path);
  } catch {
    /* a stale lock of a reused id that its clm holds still: go on unlocked */
  }
  return new Session(id, path, fd, false, size, locked);
}

/**
 * Reopen an existing session for appending (after resuming it). A truncated last line left by
 * a crash is terminated first, so the next message starts on a line of its own.
 */
export function openSession(id: string, opts: SessionDirOptions = {}): Session {
  assertValidSessionId(id);
  const path = sessionPath(id, opts);
  let fd: number;
  // Locked before the file is touched: a session in use is left exactly as it is.
  const locked = existsSync(path) ? takeLock(id, path) : false;
  try {
    fd = openSync(path, APPEND_FLAGS);
  } catch (e) {
    if (locked) releaseLock(path);
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
    if (locked) releaseLock(path);
    throw new SessionError('EIO', openProblem(id, e) || `opening session ${id}: ${(e as Error).message}`, { cause: e });
  }
  return new Session(id, path, fd, true, size, locked);
}

function endsWithNewline(fd: number, size: number): boolean {
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, size - 1);
  return b[0] === 0x0a;
}

/** A session file's bytes; ENOENT if missing, EIO naming the problem otherwise. */
function readSessionFile(id: string, opts: SessionDirOptions): Buffer {
  assertValidSessionId(id);
  const path = sessionPath(id, opts);
  try {
    return readRegularFileSync(path, MAX_SESSION_BYTES, { noFollow: true });
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') throw new SessionError('ENOENT', `no such session: ${id}`, { cause: e });
    throw new SessionError('EIO', openProblem(id, e) || `reading session ${id}: ${(e as Error).message}`, { cause: e });
  }
}

function loaded(id: string, reader: SessionReader): LoadedSession {
  const { meta, messages, transcript, firstUser, skipped } = reader.content();
  return { meta: meta ?? { type: 'meta', v: SESSION_FORMAT_VERSION, id, created: 0 }, messages, transcript, firstUser, skipped };
}

/** Read a session: its meta and every readable message. ENOENT if missing, EPROTONOSUPPORT if newer. */
export function loadSession(id: string, opts: SessionDirOptions = {}): LoadedSession {
  const reader = new SessionReader();
  for (const line of readSessionFile(id, opts).toString('utf8').split('\n')) reader.add(line);
  return loaded(id, reader);
}

/** Bytes decoded and read at a time between looks at the clock. */
const STEP_BYTES = 64 * 1024;

/**
 * loadSession in steps of about `stepMs` of work each, awaiting `pause()` after each: a front end
 * that reads a long session (megabytes: tens of milliseconds of JSON) keeps answering keys
 * meanwhile. The file is read at once; its lines are decoded and parsed step by step (a piece
 * always ends at a newline, which no UTF-8 sequence contains, so the text is the same).
 */
export async function loadSessionInSteps(
  id: string,
  opts: SessionDirOptions & { pause: () => Promise<void>; stepMs?: number },
): Promise<LoadedSession> {
  const bytes = readSessionFile(id, opts);
  const reader = new SessionReader();
  const stepMs = opts.stepMs ?? 4;
  let since = performance.now();
  for (let at = 0; at < bytes.length; ) {
    const nl = bytes.indexOf(0x0a, Math.min(at + STEP_BYTES, bytes.length) - 1);
    const end = nl < 0 ? bytes.length : nl + 1;
    for (const line of bytes.toString('utf8', at, end).split('\n')) reader.add(line);
    at = end;
    if (at < bytes.length && performance.now() - since >= stepMs) {
      await opts.pause();
      since = performance.now();
    }
  }
  return loaded(id, reader);
}

/**
 * Copy session `id` under a fresh id: its conversation and compactions line for line, after a
 * meta line of its own that names the original (`forked_from`). The original is only read, so a
 * session in use can be forked. Returns the new id; the copy is not opened.
 */
export function forkSession(id: string, opts: SessionDirOptions & { now?: Date } = {}): string {
  // ENOENT, a link, a newer format: refused before anything is written. Only lines that may be
  // meta lines are parsed (a long conversation is copied, not read); the meta lines are left out.
  let meta: SessionMeta | null = null;
  let body = '';
  for (const l of readSessionFile(id, opts).toString('utf8').split('\n')) {
    if (!l.trim()) continue;
    const p = /"type"\s*:\s*"meta"/.test(l) ? parseSessionLine(l) : null;
    if (p?.kind === 'meta') meta ??= p.meta;
    else body += `${l}\n`;
  }
  meta ??= { type: 'meta', v: SESSION_FORMAT_VERSION, id, created: 0 };
  const now = opts.now ?? new Date();
  const created = Math.floor(now.getTime() / 1000);
  const fresh = createFresh(ensureSessionDir(opts), now, (to) => encodeMetaLine({ ...meta, id: to, created, forkedFrom: id }) + body);
  closeSync(fresh.fd);
  return fresh.id;
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
