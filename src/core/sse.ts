// Server-sent events framing over a byte stream, per the event-stream spec (CRLF/CR/LF line ends,
// multi-line data joined with "\n", comments, `event:` names), through eventsource-parser.
// A last event without its blank line is still delivered at end().

import { createParser, type EventSourceParser } from 'eventsource-parser';

export class SseReader {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser: EventSourceParser;
  events = 0;
  constructor(onEvent: (event: string, data: string) => void) {
    this.parser = createParser({
      onEvent: (ev) => {
        this.events++;
        onEvent(ev.event ?? '', ev.data);
      },
    });
  }
  push(chunk: Uint8Array): void {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
  }
  end(): void {
    const rest = this.decoder.decode();
    if (rest) this.parser.feed(rest);
    // Terminate a last line and event that the server left open.
    this.parser.feed('\n\n');
  }
}
