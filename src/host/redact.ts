// Scrubs secrets out of text before it reaches a log file. API keys must never be written to
// CLM_DEBUG_LOG, even when a request body or an error message happens to echo them.

export const MASK = '[REDACTED]';

/** Secrets shorter than this are ignored: masking every "ab" would wreck the log and hide nothing. */
const MIN_SECRET_LENGTH = 4;

// Credentials that look like credentials even when nobody registered them as secrets.
const PATTERNS: RegExp[] = [
  /(\bBearer\s+)[^\s"',;]+/gi,
  /((?:"|\b)(?:api[_-]?key|x-api-key|access[_-]?token|authorization)"?\s*[:=]\s*"?)(?!Bearer\s)[^\s"',;}&]+/gi,
];

/** Replace every occurrence of each given secret by "[REDACTED]" (and nothing else: session files). */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so a secret that contains another is masked whole.
  for (const s of usableSecrets(secrets)) if (out.includes(s)) out = out.split(s).join(MASK);
  return out;
}

/** The secrets worth masking, longest first (so a secret that contains another is masked whole). */
export function usableSecrets(secrets: readonly string[]): string[] {
  return secrets.filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/** Replace every occurrence of each secret, and anything shaped like a bearer token or api key, by "[REDACTED]". */
export function redact(text: string, secrets: readonly string[] = []): string {
  const list = usableSecrets(secrets);
  let out = maskSecrets(text, list);
  // Log lines are often excerpts cut at a length: a secret cut in two ends the text with its
  // start, which is masked too.
  for (const s of list) {
    for (let n = s.length - 1; n >= MIN_SECRET_LENGTH; n--) {
      if (out.endsWith(s.slice(0, n))) {
        out = out.slice(0, out.length - n) + MASK;
        break;
      }
    }
  }
  for (const re of PATTERNS) out = out.replace(re, (_m, keep: string) => keep + MASK);
  return out;
}

/**
 * maskSecrets for text that arrives in pieces (a streamed reply): a secret split across two
 * pieces is masked too. push() returns what is safe to show now and holds back an ending that
 * could be the start of a secret; flush() returns the rest when the text is complete.
 */
export class SecretStream {
  private held = '';
  constructor(private readonly secrets: () => readonly string[]) {}

  push(piece: string): string {
    const list = usableSecrets(this.secrets());
    if (!list.length) {
      const out = this.held + piece;
      this.held = '';
      return out;
    }
    const text = maskSecrets(this.held + piece, list);
    // Keep the longest ending that is a proper start of some secret.
    let keep = 0;
    for (const s of list) {
      for (let n = Math.min(s.length - 1, text.length); n > keep; n--) {
        if (text.endsWith(s.slice(0, n))) {
          keep = n;
          break;
        }
      }
    }
    this.held = keep ? text.slice(text.length - keep) : '';
    return keep ? text.slice(0, text.length - keep) : text;
  }

  flush(): string {
    const out = this.held;
    this.held = '';
    return out;
  }
}
