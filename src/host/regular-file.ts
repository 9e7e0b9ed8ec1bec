// The one way clm opens files it reads or writes: config and secrets, session files, caches,
// and files named by a model or a plugin. A FIFO or device blocks in open() (no writer/reader)
// or read() forever, and a thread stuck there keeps the process from exiting even on Ctrl-C.
// O_NONBLOCK makes open() return at once; then only regular files pass, and a read stops at a
// size cap even when the file grows while it is read (or reports size 0, as /proc files do).

import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readlinkSync,
  readSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lazyBuiltin } from './lazy-builtin.js';

// The promise API loads a dozen of Node's modules (watchers, readline): only when a file is read so.
const fsp = lazyBuiltin<typeof import('node:fs/promises')>('node:fs/promises');
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const READ = constants.O_RDONLY | NONBLOCK;
// Truncated only once the opened file passed the checks (a sandbox may refuse what it turns out to be).
const WRITE = constants.O_WRONLY | constants.O_CREAT | NONBLOCK;

export interface ReadOptions {
  /** Refuse a symbolic link as the last path component (ELOOP) instead of following it. */
  noFollow?: boolean;
  /** Called with the descriptor just opened, before anything is read; throws to refuse it (a sandbox's check). */
  opened?(fd: number): void;
}

export interface WriteOptions {
  /**
   * Called with the descriptor just opened and its number of hard links, before it is truncated;
   * throws to refuse it (a sandbox's check). A file the open created is then removed again.
   */
  opened?(fd: number, nlink: number): void;
}

function notRegular(isDir: boolean): Error {
  return isDir
    ? Object.assign(new Error('Is a directory'), { code: 'EISDIR' })
    : Object.assign(new Error('not a regular file'), { code: 'ENOTREG' });
}

/** EFBIG with the size (or, for a file that grew while read, "more than" the limit). */
function tooLarge(size: number | string, maxBytes: number): Error {
  return Object.assign(new Error(`file too large (${size} bytes)`), { code: 'EFBIG', size, limit: maxBytes });
}

// A process's environment holds credentials (CLM_API_KEY for clm itself) that neither a model's
// read_file nor a plugin's clm.read_file may return; /proc files report size 0, so only those
// are looked at, through the opened descriptor (symbolic links and /proc/self included).
const ENVIRON = /^\/proc\/[^/]+\/(?:task\/[^/]+\/)?environ$/;

function refuseEnviron(fd: number, size: number): void {
  if (size !== 0 || process.platform !== 'linux') return;
  let target: string;
  try {
    target = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return;
  }
  if (ENVIRON.test(target)) throw Object.assign(new Error('a process environment is not readable'), { code: 'ENVIRON' });
}

/** The whole file, or throws (ENOENT, EISDIR, ENOTREG, ELOOP with noFollow, ENVIRON for a process environment, EFBIG over maxBytes, …). */
export function readRegularFileSync(path: string, maxBytes = Infinity, opts: ReadOptions = {}): Buffer {
  const fd = openSync(path, READ | (opts.noFollow ? NOFOLLOW : 0));
  try {
    opts.opened?.(fd);
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(st.isDirectory());
    refuseEnviron(fd, st.size);
    if (st.size > maxBytes) throw tooLarge(st.size, maxBytes);
    // Read up to one byte past the cap: more than the cap is an error, not a silent cut.
    const limit = Number.isFinite(maxBytes) ? maxBytes + 1 : Infinity;
    const chunks: Buffer[] = [];
    let total = 0;
    let buf = Buffer.allocUnsafe(Math.min(limit, Math.max(st.size + 1, 8192)));
    for (;;) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, limit - total), null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > maxBytes) throw tooLarge(`more than ${maxBytes}`, maxBytes);
      if (n === buf.length) buf = Buffer.allocUnsafe(Math.min(limit - total, Math.max(65536, buf.length)));
      else buf = buf.subarray(n);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/**
 * At most `maxBytes` from the start of a regular file, and the file's size: a larger file is cut,
 * not refused (the caller says so). Throws as readRegularFileSync does for what is no regular file.
 */
export function readRegularFileHeadSync(path: string, maxBytes: number): { data: Buffer; size: number } {
  const fd = openSync(path, READ);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(st.isDirectory());
    refuseEnviron(fd, st.size);
    // One byte past the cap tells a file that reports no size (/proc) and is longer.
    const buf = Buffer.allocUnsafe(Math.max(0, Math.min(maxBytes + 1, st.size || maxBytes + 1)));
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return { data: buf.subarray(0, Math.min(n, maxBytes)), size: Math.max(st.size, n) };
  } finally {
    closeSync(fd);
  }
}

/** readRegularFileSync's async twin (plugin discovery). */
export async function readRegularFile(path: string, maxBytes = Infinity, opts: ReadOptions = {}): Promise<Buffer> {
  const fh = await fsp().open(path, READ | (opts.noFollow ? NOFOLLOW : 0));
  try {
    opts.opened?.(fh.fd);
    const st = await fh.stat();
    if (!st.isFile()) throw notRegular(st.isDirectory());
    refuseEnviron(fh.fd, st.size);
    if (st.size > maxBytes) throw tooLarge(st.size, maxBytes);
    const limit = Number.isFinite(maxBytes) ? maxBytes + 1 : Infinity;
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const want = Math.min(limit - total, 65536);
      const buf = Buffer.allocUnsafe(want);
      const { bytesRead } = await fh.read(buf, 0, want, null);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(`more than ${maxBytes}`, maxBytes);
    }
    return Buffer.concat(chunks, total);
  } finally {
    await fh.close();
  }
}

/** Undo a creation the checks refused: remove the file the open made (still empty). */
function unmake(path: string, fd: number, existed: boolean): void {
  if (existed) return;
  try {
    if (fstatSync(fd).size === 0) unlinkSync(path);
  } catch {
    /* gone already */
  }
}

/** Create or truncate a regular file and write it; a FIFO, device or directory is refused. */
export function writeRegularFileSync(path: string, data: string | Uint8Array, opts: WriteOptions = {}): void {
  const existed = opts.opened ? existsSync(path) : true;
  const fd = openSync(path, WRITE, 0o666);
  try {
    const st = fstatSync(fd);
    try {
      opts.opened?.(fd, st.nlink);
    } catch (e) {
      unmake(path, fd, existed);
      throw e;
    }
    if (!st.isFile()) throw notRegular(st.isDirectory());
    ftruncateSync(fd, 0);
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** Open a regular file for reading (async); the caller closes it. */
export async function openRegularFile(path: string, opts: Pick<ReadOptions, 'opened'> = {}): Promise<FileHandle> {
  const fh = await fsp().open(path, READ);
  try {
    opts.opened?.(fh.fd);
    const st = await fh.stat();
    if (!st.isFile()) throw notRegular(st.isDirectory());
    refuseEnviron(fh.fd, st.size);
    return fh;
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** writeRegularFileSync's async twin. */
export async function writeRegularFile(path: string, data: string | Uint8Array, opts: WriteOptions = {}): Promise<void> {
  const existed = opts.opened ? existsSync(path) : true;
  const fh = await fsp().open(path, WRITE, 0o666);
  try {
    const st = await fh.stat();
    try {
      opts.opened?.(fh.fd, st.nlink);
    } catch (e) {
      unmake(path, fh.fd, existed);
      throw e;
    }
    if (!st.isFile()) throw notRegular(st.isDirectory());
    await fh.truncate(0);
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}
