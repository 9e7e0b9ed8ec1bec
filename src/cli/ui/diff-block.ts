// A unified diff in the transcript, coloured line by line (file headers bold, hunks cyan, added
// lines green, removed red), each line shown, not obeyed.

import { colourDiff } from '../../checkpoints/diff-colour.js';
import { type Block, paint, sanitize, style, wrapText } from '../../tui/index.js';

const ST = {
  file: style({ bold: true }),
  hunk: style({ fg: 'cyan' }),
  added: style({ fg: 'green' }),
  removed: style({ fg: 'red' }),
};

export class DiffBlock implements Block {
  final = true;
  #cache: { width: number; lines: string[] } | null = null;
  readonly #text: string;

  constructor(text: string) {
    const safe = text
      .replace(/\n$/, '')
      .split('\n')
      .map((l) => sanitize(l))
      .join('\n');
    this.#text = colourDiff(safe, {
      file: (s) => paint(s, ST.file),
      hunk: (s) => paint(s, ST.hunk),
      added: (s) => paint(s, ST.added),
      removed: (s) => paint(s, ST.removed),
    });
  }

  render(width: number): string[] {
    if (this.#cache?.width === width) return this.#cache.lines;
    const lines = ['', ...wrapText(this.#text, width)];
    this.#cache = { width, lines };
    return lines;
  }
}
