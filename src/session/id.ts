// Session ids: `YYYYMMDD-HHMMSS-xxxxxxxx` (local time + 8 random hex digits). Ids reach file
// names, so anything outside [0-9A-Za-z-]{1,64} is refused before the file system is touched.

import { SessionError } from './errors.js';

const VALID_ID = /^[0-9A-Za-z-]{1,64}$/;

export function isValidSessionId(id: unknown): id is string {
  return typeof id === 'string' && VALID_ID.test(id);
}

/** Throws SessionError EINVAL for an id that could escape the session directory or is malformed. */
export function assertValidSessionId(id: unknown): asserts id is string {
  if (!isValidSessionId(id)) throw new SessionError('EINVAL', `invalid session id ${JSON.stringify(id)}`);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

// Math.random, seeded per process by V8 from the system's entropy: an id needs to be unlikely to
// clash (O_EXCL makes a clash harmless), not unpredictable, and node:crypto costs some thirty of
// Node's modules before a run's first request.
function randomBytes4(): Uint8Array {
  const n = Math.floor(Math.random() * 2 ** 32);
  return Uint8Array.of(n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
}

/** A fresh id for a session started at `now` (local time). */
export function newSessionId(now: Date = new Date(), random: Uint8Array = randomBytes4()): string {
  const date = `${pad(now.getFullYear(), 4)}${pad(now.getMonth() + 1)}${pad(now.getDate())}`;
  const time = `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  const hex = Array.from(random.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${date}-${time}-${hex}`;
}
