// Text from a model, a tool or a server made safe to print on a terminal: every control
// character except newline and tab is shown in caret notation (ESC as ^[, BEL as ^G, a lone CR
// as ^M), C1 controls, the bidirectional-override characters and invisible characters as
// <U+XXXX>. So an OSC 52 clipboard write, a title change or cursor movement in a reply is seen,
// not obeyed, and text hidden between zero-width characters is seen too. Each character is
// handled on its own, so text streamed in pieces needs no state: an escape split across two
// pieces is neutralised in the piece that holds the ESC.
//
// For what a person reads (the text output, the REPL, the debug log); never for json or
// stream-json values, which keep the bytes as they are.

// Invisible characters: the default-ignorable code points (zero-width spaces, word joiners, tag
// characters, variation selectors beyond the emoji ones, …) but the zero-width (non-)joiner and
// the text/emoji presentation selectors, which emoji and several scripts need to read right.
const INVISIBLE = /(?!\u200c|\u200d|\ufe0e|\ufe0f)\p{Default_Ignorable_Code_Point}/gu;

// C0 controls but \t and \n, DEL, C1 controls, the bidi embedding/override/isolate controls,
// a CR that is not the first half of CRLF (which becomes a plain newline), and the invisibles.
// Made on first use: a page that never calls forTerminal leaves it out of its bundle.
let unsafe: RegExp | undefined;
const unsafeRe = () =>
  (unsafe ??= new RegExp(`\\r\\n|[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069]|${INVISIBLE.source}`, 'gu'));

/** `<U+XXXX>` for one character. */
function codeOf(ch: string): string {
  return `<U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`;
}

function shown(ch: string): string {
  if (ch === '\r\n') return '\n';
  const c = ch.charCodeAt(0);
  if (c < 0x20) return `^${String.fromCharCode(c + 64)}`;
  if (c === 0x7f) return '^?';
  return codeOf(ch);
}

/** `text` with every terminal control and invisible character shown instead of interpreted (see above). */
export function forTerminal(text: string): string {
  const re = unsafeRe();
  re.lastIndex = 0;
  return re.test(text) ? text.replace(re, shown) : text;
}

/** `text` with its invisible characters shown as `<U+XXXX>`, controls left as they are (for a painter that removes those itself). */
export function showInvisible(text: string): string {
  INVISIBLE.lastIndex = 0;
  return INVISIBLE.test(text) ? text.replace(INVISIBLE, codeOf) : text;
}
