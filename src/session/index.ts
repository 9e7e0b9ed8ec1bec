// Session persistence: append-only JSONL files under the XDG state directory.
// Light on purpose (node:fs only) so every mode can log without paying for it.

export { SessionError, type SessionErrorCode } from './errors.js';
export { sessionDir, ensureSessionDir, makeDirs, type SessionDirOptions } from './paths.js';
export { newSessionId, isValidSessionId, assertValidSessionId } from './id.js';
export {
  SESSION_FORMAT_VERSION,
  encodeMetaLine,
  encodeMessageLine,
  encodeCompactLine,
  encodeRewindLine,
  parseSessionLine,
  parseSessionText,
  type SessionMeta,
  type ParsedLine,
} from './format.js';
export {
  Session,
  createSession,
  openSession,
  loadSession,
  loadSessionInSteps,
  deleteSession,
  forkSession,
  sessionLockHolder,
  sessionBusyMessage,
  type CreateSessionOptions,
  type LoadedSession,
  type SessionLockHolder,
} from './store.js';
export { listSessions, formatSessionList, formatSessionTime, firstUserSnippet, type SessionListRow } from './list.js';
