// Session store errors. The C library returned negative errnos (-EINVAL, -ENOENT,
// -EPROTONOSUPPORT); ClmError's code set is the engine's contract and lacks EPROTONOSUPPORT,
// so the store has its own error class carrying the same names and numbers.

export type SessionErrorCode = 'EINVAL' | 'ENOENT' | 'EEXIST' | 'EPROTONOSUPPORT' | 'EIO' | 'EBUSY';

const numbers: Record<SessionErrorCode, number> = {
  EINVAL: -22,
  ENOENT: -2,
  EEXIST: -17,
  EPROTONOSUPPORT: -93,
  EIO: -5,
  EBUSY: -16,
};

export class SessionError extends Error {
  readonly code: SessionErrorCode;
  /** The negative errno of clm_agent(3)'s C API for this failure. */
  readonly errno: number;
  constructor(code: SessionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SessionError';
    this.code = code;
    this.errno = numbers[code];
  }
}
