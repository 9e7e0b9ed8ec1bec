// Turning SDK and system errors into the short messages users and the model see.

const CLOSED_CODES = new Set(['CONNECTION_CLOSED', 'NOT_CONNECTED', 'SEND_FAILED']);

interface ErrorLike {
  name?: string;
  code?: unknown;
  message?: string;
  syscall?: string;
  path?: string;
  cause?: { code?: unknown; message?: string };
}

const asErr = (e: unknown): ErrorLike => (e !== null && typeof e === 'object' ? (e as ErrorLike) : { message: String(e) });

export function isTimeout(e: unknown): boolean {
  return asErr(e).code === 'REQUEST_TIMEOUT';
}

export function isConnectionClosed(e: unknown): boolean {
  const c = asErr(e).code;
  return typeof c === 'string' && CLOSED_CODES.has(c);
}

/** The stdio transport read a message over its size limit (and is closing the connection). */
export function isMessageTooLarge(e: unknown): boolean {
  return /^ReadBuffer exceeded maximum size/.test(asErr(e).message ?? '');
}

/** An HTTP server's reply over the message limit (transport.ts cappedFetch). */
export function isReplyTooLarge(e: unknown, code: number): boolean {
  const err = asErr(e);
  return err.name === 'ReplyTooLarge' || err.code === code;
}

/**
 * Why the server needs an OAuth login, when that is what `e` says (mcp-oauth.ts NeedsLogin,
 * perhaps wrapped by the SDK), else null. Recognised by name so this module need not load OAuth.
 */
export function needsLoginText(e: unknown): string | null {
  for (let x: unknown = e, i = 0; x !== null && typeof x === 'object' && i < 5; x = (x as ErrorLike).cause, i++) {
    const err = x as ErrorLike;
    if (err.name === 'McpNeedsLogin' && err.message) return err.message;
  }
  return null;
}

export function isAbort(e: unknown): boolean {
  return asErr(e).name === 'AbortError';
}

/** A failure to spawn the command (ENOENT, EACCES, …), as "command not found: foo". */
export function spawnFailure(e: unknown, command: string): string | null {
  const err = asErr(e);
  if (typeof err.syscall !== 'string' || !err.syscall.startsWith('spawn')) return null;
  if (err.code === 'ENOENT') return `command not found: ${command}`;
  if (err.code === 'EACCES') return `permission denied: ${command}`;
  return `${command}: ${err.message ?? String(err.code)}`;
}

/** Any other error: its message, with the network cause (ECONNREFUSED, …) when fetch hid it. */
export function errorText(e: unknown): string {
  const err = asErr(e);
  let msg = err.message || String(err.code ?? 'unknown error');
  const cause = err.cause;
  if (cause && typeof cause === 'object') {
    const detail = typeof cause.code === 'string' ? cause.code : cause.message;
    if (detail && !msg.includes(detail)) msg += ` (${detail})`;
  }
  return msg;
}
