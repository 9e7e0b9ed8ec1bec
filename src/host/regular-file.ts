// The one way clm opens files it reads or writes: config and secrets, session files, caches,
// and files named by a model or a plugin. A FIFO or device blocks in open() (no writer/reader)
// or read() forever, and a thread stuck there keeps the process from exiting even on Ctrl-C.
// O_NONBLOCK makes open() return at once; then only regular files pass, and a read stops at a
// size cap even when the file grows while it is read (or reports size 0, as /proc files do).

import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const READ = constants.O_RDONLY | NONBLOCK;
const WRITE = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | NONBLOCK;

export interface ReadOptions {
  /** Refuse a symbolic link as the last path component (ELOOP) instead of following it. */
  noFollow?: boolean;
  /**
   * Refuse (EPERM) a file another user owns or group/other may write: for files whose content
   * clm trusts without checking it (the evaluation cache).
   */
  ownOnly?: boolean;
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

function notOwn(): Error {
  return Object.assign(new Error('owned by another user or writable by group/other'), { code: 'EPERM' });
}

/** The whole file, or throws (ENOENT, EISDIR, ENOTREG, ELOOP with noFollow, EPERM with ownOnly, ENVIRON for a process environment, EFBIG over maxBytes, …). */
export function readRegularFileSync(path: string, maxBytes = Infinity, opts: ReadOptions = {}): Buffer {
  const fd = openSync(path, READ | (opts.noFollow ? NOFOLLOW : 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(st.isDirectory());
    refuseEnviron(fd, st.size);
    if (opts.ownOnly && process.platform !== 'win32' && (st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0)) throw notOwn();
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

/** readRegularFileSync's async twin (plugin discovery). */
export async function readRegularFile(path: string, maxBytes = Infinity, opts: ReadOptions = {}): Promise<Buffer> {
  const fh = await open(path, READ | (opts.noFollow ? NOFOLLOW : 0));
  try {
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

/** Create or truncate a regular file and write it; a FIFO, device or directory is refused. */
export function writeRegularFileSync(path: string, data: string | Uint8Array): void {
  const fd = openSync(path, WRITE, 0o666);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(st.isDirectory());
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** Open a regular file for reading (async); the caller closes it. */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const fh = await open(path, READ);
  try {
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
export async function writeRegularFile(path: string, data: string | Uint8Array): Promise<void> {
  const fh = await open(path, WRITE, 0o666);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notRegular(st.isDirectory());
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}
