// Keys typed before a permission question was shown must not answer it: a person who types
// "yes, go on" while the model thinks has not seen the question yet. What the terminal holds
// then (whole lines of a cooked terminal, or the half-typed one that raw mode releases) is read
// and dropped before the question is written. Node cannot tcflush(3) and its stdin descriptor
// blocks, so the terminal is opened a second time, non-blocking, and read until it is empty:
// a terminal's input queue belongs to the device, not to one descriptor.

import { closeSync, constants, openSync, readSync } from 'node:fs';

/** At most this much is dropped (a paste that never ends cannot hold up the question). */
const MAX_DISCARD = 1 << 20;

/** Drop what the terminal behind `input` has buffered; how many bytes. Call it with the terminal already in raw mode. */
export function discardTypeAhead(input: NodeJS.ReadStream): number {
  const own = (input as unknown as { fd?: unknown }).fd;
  const fd = typeof own === 'number' ? own : 0;
  let tty: number;
  try {
    tty = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch {
    return 0; // no /proc (not Linux): nothing to drop with
  }
  let dropped = 0;
  try {
    const buf = Buffer.alloc(4096);
    while (dropped < MAX_DISCARD) {
      const n = readSync(tty, buf, 0, buf.length, null);
      if (n <= 0) break;
      dropped += n;
    }
  } catch {
    /* EAGAIN: nothing (more) to read */
  } finally {
    closeSync(tty);
  }
  return dropped;
}
