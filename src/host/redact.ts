// The one masker of clm. The run's secrets (API keys, secrets.lua values, credential headers) are
// one Secrets list, and everything clm shows or writes — the events every front end gets, the
// debug log, session files, caches, what tools return — is masked with it.
//
// A secret is found however clm itself may have written it: as it is, JSON-escaped (request
// bodies, session lines, caches) and URL-encoded (query strings); and with invisible characters
// (default-ignorable code points such as U+200B) anywhere inside it, which are skipped when
// matching, so a secret with a zero-width space in it is masked like the secret.

export const MASK = '[REDACTED]';

/** Secrets shorter than this are ignored: masking every "ab" would wreck the text and hide nothing. */
const MIN_SECRET_LENGTH = 4;

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
const IGNORABLES = /\p{Default_Ignorable_Code_Point}+/gu;

// Credentials that look like credentials even when nobody registered them as secrets (the log only).
const PATTERNS: RegExp[] = [
  /(\bBearer\s+)[^\s"',;]+/gi,
  /((?:"|\b)(?:api[_-]?key|x-api-key|access[_-]?token|authorization)"?\s*[:=]\s*"?)(?!Bearer\s)[^\s"',;}&]+/gi,
];

/** Every way clm writes the value: as it is, JSON-escaped, URL-encoded (also with `+` for spaces). */
function spellings(secret: string): string[] {
  const plain = secret.replace(IGNORABLES, '');
  const url = encodeURIComponent(plain);
  return [plain, JSON.stringify(plain).slice(1, -1), url, url.replace(/%20/g, '+')];
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The run's secrets: one list that every output path masks with. Values can be added at any time. */
export class Secrets {
  #values: string[] = [];
  /** Every spelling of every value, longest first (so a secret that contains another is masked whole). */
  #needles: string[] = [];
  #find: RegExp | null = null;
  /** The same, with invisible characters allowed between any two characters (built when first needed). */
  #findAcross: RegExp | null = null;

  constructor(values: Iterable<string> = []) {
    this.add(values);
  }

  /** More values to mask (a profile switch, a credential header); short and repeated ones are ignored. */
  add(values: Iterable<string> | string): void {
    let changed = false;
    for (const v of typeof values === 'string' ? [values] : values) {
      if (typeof v !== 'string' || v.replace(IGNORABLES, '').length < MIN_SECRET_LENGTH || this.#values.includes(v)) continue;
      this.#values.push(v);
      for (const n of spellings(v)) if (!this.#needles.includes(n)) this.#needles.push(n);
      changed = true;
    }
    if (!changed) return;
    this.#needles.sort((a, b) => b.length - a.length);
    this.#find = new RegExp(this.#needles.map(escapeRe).join('|'), 'g');
    this.#findAcross = null;
  }

  /** The values as registered. */
  get values(): readonly string[] {
    return this.#values;
  }

  get empty(): boolean {
    return this.#find === null;
  }

  /** `text` with every secret, in any of its spellings, replaced by "[REDACTED]". */
  mask(text: string): string {
    if (!this.#find || text.length < MIN_SECRET_LENGTH) return text;
    if (!IGNORABLE.test(text)) return text.replace(this.#find, MASK);
    this.#findAcross ??= new RegExp(
      this.#needles.map((n) => Array.from(n, escapeRe).join('\\p{Default_Ignorable_Code_Point}*')).join('|'),
      'gu',
    );
    return text.replace(this.#findAcross, MASK);
  }
  /** Bytes with every secret masked: text is masked as text; what is not UTF-8 has each spelling's bytes replaced. */
  maskBytes(b: Uint8Array): Uint8Array {
    if (!this.#find) return b;
    let text: string | null = null;
    try {
      text = UTF8.decode(b);
    } catch {
      /* binary: byte by byte below */
    }
    if (text !== null) {
      const masked = this.mask(text);
      return masked === text ? b : Buffer.from(masked);
    }
    let buf: Buffer | null = null;
    for (const s of this.#needles) {
      const needle = Buffer.from(s);
      const view = buf ?? Buffer.from(b.buffer, b.byteOffset, b.byteLength);
      let at = view.indexOf(needle);
      if (at < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at >= 0) {
        parts.push(view.subarray(from, at), MASK_BYTES);
        from = at + needle.length;
        at = view.indexOf(needle, from);
      }
      parts.push(view.subarray(from));
      buf = Buffer.concat(parts);
    }
    return buf ?? b;
  }

  /**
   * How many characters at the end of `text` could be the start of a secret (0 when none can):
   * the longest ending that is a proper start of some spelling, invisible characters skipped.
   */
  pending(text: string): number {
    if (!this.#find || !text) return 0;
    const longest = this.#needles[0]!.length - 1;
    // The end of the text without its invisible characters, as long as the longest possible start,
    // and where each of its code units is in the text.
    let tail = text.slice(-longest);
    let at: (i: number) => number = (i) => text.length - tail.length + i;
    if (IGNORABLE.test(text.slice(-2 * longest))) {
      const units: number[] = [];
      let plain = '';
      for (let i = text.length; i > 0 && plain.length < longest; ) {
        const j = i > 1 && /[\udc00-\udfff]/.test(text[i - 1]!) && /[\ud800-\udbff]/.test(text[i - 2]!) ? i - 2 : i - 1;
        const ch = text.slice(j, i);
        if (!IGNORABLE.test(ch)) {
          plain = ch + plain;
          units.unshift(...Array.from({ length: ch.length }, (_, k) => j + k));
        }
        i = j;
      }
      tail = plain;
      at = (i) => units[i]!;
    }
    const last = tail.charCodeAt(tail.length - 1);
    let keep = 0;
    for (const s of this.#needles) {
      for (let n = Math.min(s.length - 1, tail.length); n > keep; n--) {
        if (s.charCodeAt(n - 1) === last && tail.endsWith(s.slice(0, n))) {
          keep = n;
          break;
        }
      }
    }
    return keep ? text.length - at(tail.length - keep) : 0;
  }

  /** A masker for text that arrives in pieces (a streamed reply). */
  stream(): SecretStream {
    return new SecretStream(this);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const MASK_BYTES = Buffer.from(MASK);

/**
 * Secrets masked in text that arrives in pieces: a secret split across pieces is masked too.
 * push() returns what is safe to show now and holds back only an ending that could be the start
 * of a secret; flush() returns the rest when the text is complete.
 */
export class SecretStream {
  private held = '';
  private readonly secrets: () => Secrets;

  /** `secrets`: the run's list, or (for library callers) a function giving the values at each piece. */
  constructor(secrets: Secrets | (() => readonly string[])) {
    this.secrets = secrets instanceof Secrets ? () => secrets : () => new Secrets(secrets());
  }

  push(piece: string): string {
    const secrets = this.secrets();
    const text = this.held + piece;
    if (secrets.empty) {
      this.held = '';
      return text;
    }
    const masked = secrets.mask(text);
    const keep = secrets.pending(masked);
    this.held = masked.slice(masked.length - keep);
    return masked.slice(0, masked.length - keep);
  }

  flush(): string {
    const out = this.held;
    this.held = '';
    return out && this.secrets().mask(out);
  }
}

/** Replace every occurrence of each given secret by "[REDACTED]" (and nothing else). */
export function maskSecrets(text: string, secrets: readonly string[] | Secrets): string {
  return (secrets instanceof Secrets ? secrets : new Secrets(secrets)).mask(text);
}

/**
 * For log lines: every secret masked, the start of one that ends the text (an excerpt cut at a
 * length) too, and anything shaped like a bearer token or api key.
 */
export function redact(text: string, secrets: readonly string[] | Secrets = []): string {
  const list = secrets instanceof Secrets ? secrets : new Secrets(secrets);
  let out = list.mask(text);
  const cut = list.pending(out);
  if (cut && out.slice(out.length - cut).replace(IGNORABLES, '').length >= MIN_SECRET_LENGTH) out = out.slice(0, out.length - cut) + MASK;
  for (const re of PATTERNS) out = out.replace(re, (_m, keep: string) => keep + MASK);
  return out;
}
