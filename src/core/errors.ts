// Error numbers as in clm_agent(3): turn outcomes are 0 or a negative errno (Linux numbers,
// so C and TypeScript users read the same values); synchronous refusals throw ClmError.

export const EIO = -5;
export const ENOMEM = -12;
export const EBUSY = -16;
export const EEXIST = -17;
export const EINVAL = -22;
export const E2BIG = -7;
export const EAGAIN = -11;
export const ENOENT = -2;
export const EALREADY = -114;
export const ECANCELED = -125;
export const ETIMEDOUT = -110;

export type ClmErrorCode = 'EBUSY' | 'EINVAL' | 'EALREADY' | 'ENOMEM' | 'EEXIST' | 'ENOENT' | 'EIO';

const numbers: Record<ClmErrorCode, number> = {
  EBUSY,
  EINVAL,
  EALREADY,
  ENOMEM,
  EEXIST,
  ENOENT,
  EIO,
};

export class ClmError extends Error {
  readonly code: ClmErrorCode;
  /** The negative errno of clm_agent(3)'s C API for this failure. */
  readonly errno: number;
  constructor(code: ClmErrorCode, message: string) {
    super(message);
    this.name = 'ClmError';
    this.code = code;
    this.errno = numbers[code];
  }
}

/** What a thrown value says: an Error's message, anything else as text. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Human name of a turn status, for messages and logs. */
export function statusName(status: number): string {
  switch (status) {
    case 0:
      return 'ok';
    case ECANCELED:
      return 'ECANCELED';
    case EIO:
      return 'EIO';
    case E2BIG:
      return 'E2BIG';
    case EAGAIN:
      return 'EAGAIN';
    case ENOMEM:
      return 'ENOMEM';
    default:
      return String(status);
  }
}
