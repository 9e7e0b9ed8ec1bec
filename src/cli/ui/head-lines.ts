// The first lines of a text for display, and how many were left out (a long prompt's echo).

/** Lines cut from `text` for display: at most `max`, and what was left out. */
export function headLines(text: string, max: number): { lines: string[]; more: number } {
  const lines: string[] = [];
  let at = 0;
  while (lines.length < max) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) {
      lines.push(text.slice(at));
      at = text.length + 1;
      break;
    }
    lines.push(text.slice(at, nl));
    at = nl + 1;
  }
  let more = 0;
  if (at <= text.length) {
    more = 1;
    for (let i = text.indexOf('\n', at); i >= 0; i = text.indexOf('\n', i + 1)) more++;
    // A final newline ends the last line; it does not begin an empty one.
    if (text.endsWith('\n')) more--;
  }
  return { lines, more };
}
