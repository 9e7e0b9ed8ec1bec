// The input box at the bottom of the screen: the line editor behind a `> ` prompt, growing with
// its content (embedded newlines count) up to half the screen, the view following the cursor.

import { LineEditor } from '../../tui/editor.js';
import { paint } from '../../tui/style.js';
import type { Component } from '../../tui/transcript.js';
import { THEME } from './theme.js';

export class InputBox implements Component {
  readonly editor = new LineEditor();

  constructor(private readonly screenRows: () => number) {}

  render(width: number): string[] {
    const maxRows = Math.max(1, Math.floor(this.screenRows() / 2));
    return this.editor.render(width, { prompt: paint('> ', THEME.prompt), indent: '  ', maxRows }).lines;
  }
}
