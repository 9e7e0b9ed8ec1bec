// Server-sent events framing over a byte stream, as the event-stream format has it: lines end in
// CRLF, LF or CR; `data:` lines are joined with "\n"; `event:` names the event; a blank line
// dispatches it (when it has data); comments and the other fields (id, retry, unknown ones) are
// ignored; one space after the colon is dropped. The decoder drops a leading BOM. A last event
// without its blank line is still delivered at end().

export class SseReader {
  readonly #decoder = new TextDecoder('utf-8');
  /** Its own: an event handler may feed another reader while this one is between lines. */
  readonly #lineEnd = /\r\n?|\n/g;
  /** The line not yet ended, added to as text comes (each piece scanned once, when it arrives). */
  #rest = '';
  /** The text so far ended in CR: an LF that comes next completes that CRLF. */
  #afterCr = false;
  #event = '';
  #data: string[] = [];
  /** Characters examined for line ends: each one received once (the parser's work is linear). */
  scanned = 0;

  readonly #onEvent: (event: string, data: string) => void;

  constructor(onEvent: (event: string, data: string) => void) {
    this.#onEvent = onEvent;
  }

  push(chunk: Uint8Array): void {
    this.#read(this.#decoder.decode(chunk, { stream: true }));
  }

  end(): void {
    // Ends a last line and event that the server left open.
    this.#read(`${this.#decoder.decode()}\n\n`);
  }

  #read(text: string): void {
    if (text === '') return;
    let at = this.#afterCr && text[0] === '\n' ? 1 : 0;
    this.#afterCr = text.endsWith('\r');
    this.scanned += text.length - at;
    const lineEnd = this.#lineEnd;
    lineEnd.lastIndex = at;
    for (let m = lineEnd.exec(text); m; m = lineEnd.exec(text)) {
      const line = this.#rest + text.slice(at, m.index);
      this.#rest = '';
      at = lineEnd.lastIndex;
      this.#line(line);
    }
    this.#rest += text.slice(at);
  }

  #line(line: string): void {
    if (line === '') {
      const event = this.#event;
      const data = this.#data;
      this.#event = '';
      this.#data = [];
      if (data.length) this.#onEvent(event, data.join('\n'));
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return; // a comment (keep-alives)
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
  }
}
