// strerror(3)-style texts for Node's error codes, so messages read like a Unix tool's
// ("cannot open 'x': No such file or directory") instead of Node's "ENOENT: no such file…, open 'x'".

const TEXT: Record<string, string> = {
  ENOENT: 'No such file or directory',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
  EEXIST: 'File exists',
  ELOOP: 'Too many levels of symbolic links',
  ENAMETOOLONG: 'File name too long',
  EMFILE: 'Too many open files',
  ENFILE: 'Too many open files in system',
  ENOSPC: 'No space left on device',
  EROFS: 'Read-only file system',
  EBUSY: 'Device or resource busy',
  EIO: 'Input/output error',
  EINVAL: 'Invalid argument',
  ETXTBSY: 'Text file busy',
  EFBIG: 'File too large',
  EDQUOT: 'Disk quota exceeded',
  ENXIO: 'No such device or address',
  EAGAIN: 'Resource temporarily unavailable',
  ENOTREG: 'Not a regular file (a pipe or device could block forever)',
  ENVIRON: 'Permission denied (a process environment holds credentials)',
};

export function errnoText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err?.code && TEXT[err.code]) return TEXT[err.code]!;
  // Node's own form is "CODE: text, syscall 'path'": keep the text.
  const m = /^[A-Z0-9_]+: (.*?)(?:, \w+ '.*')?$/.exec(err?.message ?? '');
  return m?.[1] ?? err?.message ?? String(e);
}
