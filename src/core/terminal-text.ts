// Text from a model, a tool or a server made safe to print on a terminal: every control
// character except newline and tab is shown in caret notation (ESC as ^[, BEL as ^G, a lone CR
// as ^M), C1 controls and the bidirectional-override characters as <U+XXXX>. So an OSC 52
// clipboard write, a title change or cursor movement in a reply is seen, not obeyed. Each
// character is handled on its own, so text streamed in pieces needs no state: an escape split
// across two pieces is neutralised in the piece that holds the ESC.
//
// For what a person reads (the text output, the REPL, the UI); never for json or stream-json
// values, which keep the bytes as they are.

// C0 controls but \t and \n, DEL, C1 controls, the bidi embedding/override/isolate controls,
// and a CR that is not the first half of CRLF (which becomes a plain newline).
const UNSAFE = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function shown(ch: string): string {
  if (ch === '\r\n') return '\n';
  const c = ch.charCodeAt(0);
  if (c < 0x20) return `^${String.fromCharCode(c + 64)}`;
  if (c === 0x7f) return '^?';
  return `<U+${c.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** `text` with every terminal control shown instead of interpreted (see above). */
export function forTerminal(text: string): string {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(text) ? text.replace(UNSAFE, shown) : text;
}
