// CLM_DEBUG_LOG: an append-only debug log, one line per event, flushed per line so a crash loses
// nothing. Unset ⇒ no log at all (and no cost). Every line passes through redact() with the run's
// one secrets list, and its control characters are shown, not written (`tail -f` of the log must
// not run a plugin's or a server's escape sequences).

import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs';
import { forTerminal } from '../core/terminal-text.js';
import { redact, Secrets } from './redact.js';

export interface DebugLog {
  (line: string): void;
  /** Register one more value that must never appear in the log (e.g. an API key learnt later). */
  addSecret(secret: string): void;
  readonly path: string;
}

export interface DebugLogOptions {
  /** Values to mask (the run's list, shared: what is added to it later is masked too); CLM_API_KEY from the environment is always added. */
  secrets?: readonly string[] | Secrets;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** "HH:MM:SS.mmm [pid] " in local time. */
function prefix(d: Date): string {
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)} [${process.pid}] `;
}

/** Longest line written; callers pass whole texts (request bodies, tool results) and this cuts them. */
export const MAX_LINE = 4000;

const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

/**
 * Open the log for appending without ever waiting: a FIFO nobody reads would block open(2) on
 * the main thread, where not even SIGTERM gets through. Non-blocking, a FIFO without a reader
 * fails at once (ENXIO: no log); one with a reader (`CLM_DEBUG_LOG=>(grep …)`), like a terminal
 * (`/dev/stderr`), is opened again blocking, so a slow reader slows the log down instead of
 * losing lines.
 */
function openLog(path: string): number {
  const fd = openSync(path, APPEND | (constants.O_NONBLOCK ?? 0), 0o600);
  if (!constants.O_NONBLOCK || fstatSync(fd).isFile()) return fd;
  closeSync(fd);
  return openSync(path, APPEND, 0o600);
}

/** A log function appending to `path`, or undefined when no path is given (the variable is unset or empty). */
export function createDebugLog(path: string | undefined = process.env.CLM_DEBUG_LOG, opts: DebugLogOptions = {}): DebugLog | undefined {
  if (!path) return undefined;
  const secrets = opts.secrets instanceof Secrets ? opts.secrets : new Secrets(opts.secrets ?? []);
  const envKey = process.env.CLM_API_KEY;
  if (envKey) secrets.add(envKey);
  // Opened on the first line, not at creation: a run that never logs never touches the file.
  let fd: number | undefined;
  let broken = false;
  const log = ((line: string) => {
    if (broken) return;
    try {
      // 0600: the log holds whole requests and tool output (secrets are masked, the rest is private too).
      fd ??= openLog(path);
      // Mask first, then cut: a secret straddling the cut would otherwise leak its start.
      let text = forTerminal(redact(line, secrets));
      if (text.length > MAX_LINE) text = `${text.slice(0, MAX_LINE)}… (${text.length} chars)`;
      // writeSync on an O_APPEND descriptor: unbuffered, so each line is on disk when we return.
      writeSync(fd, prefix(new Date()) + (text.endsWith('\n') ? text : text + '\n'));
    } catch {
      broken = true; // an unwritable log must never break the agent
    }
  }) as DebugLog;
  log.addSecret = (s: string) => secrets.add(s);
  Object.defineProperty(log, 'path', { value: path, enumerable: true });
  return log;
}

export function isDebugLog(f: unknown): f is DebugLog {
  return typeof f === 'function' && typeof (f as Partial<DebugLog>).addSecret === 'function';
}
