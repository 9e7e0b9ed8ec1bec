// Secrets (API keys, secrets.lua values) never reach the screen: text is masked as the session
// log masks it ("[REDACTED]"). Streamed text is masked across deltas: the end of a delta that
// could be the start of a secret is held back until the next delta tells.

import { maskSecrets } from '../../host/redact.js';

/** Secrets shorter than this are not masked (as in the logs). */
const MIN_SECRET_LENGTH = 4;

export class SecretList {
  private list: string[] = [];

  constructor(secrets: readonly string[] = []) {
    this.add(secrets);
  }

  add(secrets: readonly string[]): void {
    for (const s of secrets) if (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH && !this.list.includes(s)) this.list.push(s);
  }

  get values(): readonly string[] {
    return this.list;
  }

  mask(text: string): string {
    return this.list.length ? maskSecrets(text, this.list) : text;
  }

  /** How many characters at the end of `text` could begin a secret (0 when none can). */
  heldBack(text: string): number {
    let keep = 0;
    for (const s of this.list) {
      for (let n = Math.min(s.length - 1, text.length); n > keep; n--) {
        if (text.endsWith(s.slice(0, n))) {
          keep = n;
          break;
        }
      }
    }
    return keep;
  }
}

/** One stream of deltas (a reply, a reasoning run) masked as it comes. */
export class MaskedStream {
  private pending = '';

  constructor(private readonly secrets: SecretList) {}

  /** The part of everything pushed so far that can be shown now. */
  push(delta: string): string {
    if (!this.secrets.values.length) return delta;
    // Whole secrets first; then the end that may begin one waits for more.
    const text = this.secrets.mask(this.pending + delta);
    const keep = this.secrets.heldBack(text);
    this.pending = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  /** The stream ended: whatever was held back. */
  flush(): string {
    const t = this.pending;
    this.pending = '';
    return this.secrets.mask(t);
  }
}
