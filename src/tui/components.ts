// Ready-made blocks for the transcript: fixed lines, wrapped text, streamed markdown. Each caches
// its lines per width; call transcript.changed(block) after changing one.

import { highlightGeneration } from './highlight.js';
import { MarkdownStream } from './markdown-stream.js';
import type { MarkdownOptions } from './markdown.js';
import { sanitize } from './sanitize.js';
import type { Block } from './transcript.js';
import { type WrapOptions, wrapText } from './wrap.js';

/** Lines drawn as given (each cut to the width by the renderer). */
export class LinesBlock implements Block {
  final = true;
  constructor(public lines: string[]) {}
  render(): string[] {
    return this.lines;
  }
}

/** Text wrapped to the width; `styled` text may carry SGR, anything else in it is made safe. */
export class TextBlock implements Block {
  final = false;
  private cache: { width: number; lines: string[] } | null = null;
  private value: string;

  constructor(
    text: string,
    private readonly wrap: WrapOptions = {},
  ) {
    this.value = sanitize(text, { keepStyles: true });
  }

  get text(): string {
    return this.value;
  }

  set text(t: string) {
    this.value = sanitize(t, { keepStyles: true });
    this.cache = null;
  }

  append(t: string): void {
    this.text = this.value + t;
  }

  render(width: number): string[] {
    if (!this.cache || this.cache.width !== width) this.cache = { width, lines: wrapText(this.value, width, this.wrap) };
    return this.cache.lines;
  }
}

/** A markdown reply, streamed in with append() and closed with finish(). */
export class MarkdownBlock implements Block {
  final = false;
  readonly stream: MarkdownStream;
  private cache: { width: number; lines: string[]; gen: number } | null = null;

  constructor(opts: MarkdownOptions = {}, text = '') {
    this.stream = new MarkdownStream(opts, text);
  }

  append(delta: string): void {
    this.stream.append(delta);
    this.cache = null;
  }

  finish(): void {
    this.stream.finish();
    this.cache = null;
    this.final = true;
  }

  /** Draw again from scratch (after the highlighter loaded). */
  invalidate(): void {
    this.stream.invalidate();
    this.cache = null;
  }

  /** Code was drawn plain until the highlighter is ready for it: draw the block again then. */
  awaitsHighlighter(): boolean {
    return this.stream.drawsCodePlain;
  }

  /** Cached per width, and drawn again once code highlighting has loaded. */
  render(width: number): string[] {
    const gen = highlightGeneration();
    if (!this.cache || this.cache.width !== width || this.cache.gen !== gen) this.cache = { width, lines: this.stream.render(width), gen };
    return this.cache.lines;
  }
}
