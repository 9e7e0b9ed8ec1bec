// Server-sent events framing over a byte stream, as the event-stream format has it: lines end in
// CRLF, LF or CR; `data:` lines are joined with "\n"; `event:` names the event; a blank line
// dispatches it (when it has data); comments and the other fields (id, retry, unknown ones) are
// ignored; one space after the colon is dropped. The decoder drops a leading BOM. A last event
// without its blank line is still delivered at end().

const LINE_END = /\r\n|\r|\n/;

export class SseReader {
  readonly #decoder = new TextDecoder('utf-8');
  /** The text after the last complete line. */
  #rest = '';
  #event = '';
  #data: string[] = [];

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
    const s = this.#rest + text;
    // A CR at the end may be the first half of a CRLF: its line waits for the next chunk.
    const upTo = s.endsWith('\r') ? s.length - 1 : s.length;
    const lines = s.slice(0, upTo).split(LINE_END);
    this.#rest = lines.pop()! + s.slice(upTo);
    for (const line of lines) this.#line(line);
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
