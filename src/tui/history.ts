// Prompt history for the line editor: Up/Down walk it, consecutive duplicates are kept once, and
// the line being typed is saved when the walk starts and given back when it ends.

export class History {
  private entries: string[] = [];
  /** Index of the entry shown; entries.length = the live line. */
  private pos = 0;
  private live = '';

  constructor(
    entries: readonly string[] = [],
    private readonly max = 1000,
  ) {
    for (const e of entries) this.add(e);
  }

  get size(): number {
    return this.entries.length;
  }

  list(): readonly string[] {
    return this.entries;
  }

  /** Remember a submitted line (empty lines and a repeat of the last one are not kept). */
  add(line: string): void {
    if (line.trim() !== '' && this.entries[this.entries.length - 1] !== line) {
      this.entries.push(line);
      if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max);
    }
    this.pos = this.entries.length;
    this.live = '';
  }

  /** The entry before the one shown, given what is in the editor now; null at the oldest. */
  prev(current: string): string | null {
    if (this.pos === 0) return null;
    if (this.pos === this.entries.length) this.live = current;
    this.pos--;
    return this.entries[this.pos]!;
  }

  /** The entry after the one shown; the saved live line after the newest; null when on the live line. */
  next(): string | null {
    if (this.pos >= this.entries.length) return null;
    this.pos++;
    return this.pos === this.entries.length ? this.live : this.entries[this.pos]!;
  }

  /** Back to the live line without changing it (after an edit or a submit). */
  reset(): void {
    this.pos = this.entries.length;
    this.live = '';
  }
}
