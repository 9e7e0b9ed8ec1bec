// A unified diff coloured line by line for a terminal: file headers, hunk headers, added and
// removed lines each in their style. Pure; the styles are the caller's (SGR sequences, or none).

export interface DiffStyles {
  file(s: string): string;
  hunk(s: string): string;
  added(s: string): string;
  removed(s: string): string;
}

export function colourDiff(text: string, st: DiffStyles): string {
  return text
    .split('\n')
    .map((l) => {
      if (/^(diff --git |index |--- |\+\+\+ |new file|deleted file|old mode|new mode|mode |Binary files )/.test(l)) return st.file(l);
      if (l.startsWith('@@')) return st.hunk(l);
      if (l.startsWith('+')) return st.added(l);
      if (l.startsWith('-')) return st.removed(l);
      return l;
    })
    .join('\n');
}
