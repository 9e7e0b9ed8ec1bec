// Opening files named by a model or a plugin without risking a hang: a FIFO or device blocks in
// open() (no writer/reader) or read() forever, and a thread stuck there keeps the process from
// exiting even on Ctrl-C. O_NONBLOCK makes open() return at once; then only regular files pass.

import { closeSync, constants, fstatSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

const NONBLOCK = constants.O_NONBLOCK ?? 0;
const READ = constants.O_RDONLY | NONBLOCK;
const WRITE = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | NONBLOCK;

function notRegular(isDir: boolean): Error {
  return isDir ? Object.assign(new Error('Is a directory'), { code: 'EISDIR' }) : Object.assign(new Error('not a regular file'), { code: 'ENOTREG' });
}

/** The whole file, or throws (ENOENT, EISDIR, ENOTREG, EFBIG over maxBytes, …). */
export function readRegularFileSync(path: string, maxBytes = Infinity): Buffer {
  const fd = openSync(path, READ);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(st.isDirectory());
    if (st.size > maxBytes) throw Object.assign(new Error(`file too large (${st.size} bytes)`), { code: 'EFBIG' });
    return readFileSync(fd);
  } finally {
    closeSync(fd);
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
