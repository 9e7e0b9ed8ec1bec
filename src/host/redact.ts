// Scrubs secrets out of text before it reaches a log file. API keys must never be written to
// CLM_DEBUG_LOG, even when a request body or an error message happens to echo them.

const MASK = '[REDACTED]';

/** Secrets shorter than this are ignored: masking every "ab" would wreck the log and hide nothing. */
const MIN_SECRET_LENGTH = 4;

// Credentials that look like credentials even when nobody registered them as secrets.
const PATTERNS: RegExp[] = [
  /(\bBearer\s+)[^\s"',;]+/gi,
  /((?:"|\b)(?:api[_-]?key|x-api-key|access[_-]?token|authorization)"?\s*[:=]\s*"?)(?!Bearer\s)[^\s"',;}&]+/gi,
];

/** Replace every occurrence of each secret, and anything shaped like a bearer token or api key, by "[REDACTED]". */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  // Longest first, so a secret that contains another is masked whole.
  const list = secrets.filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  for (const s of list) if (out.includes(s)) out = out.split(s).join(MASK);
  for (const re of PATTERNS) out = out.replace(re, (_m, keep: string) => keep + MASK);
  return out;
}
