// Search in the transcript: the lines that hold a text, and a line with each occurrence of it
// shown in reverse video. Matching ignores case and the lines' styles (it looks at the text as
// shown); a match does not run across a wrapped line's break.

import { scanEscape, stripEscapes } from './escapes.js';
import type { Transcript } from './transcript.js';

const REVERSE = '\x1b[7m';
const REVERSE_OFF = '\x1b[27m';

/** The transcript lines (0-based, at `width`) that hold `query`, in order. */
export function matchingLines(transcript: Transcript, width: number, query: string): number[] {
  const q = query.toLowerCase();
  if (!q) return [];
  const lines = transcript.lines(width, 0, transcript.lineCount(width));
  const out: number[] = [];
  for (let i = 0; i < lines.length; i++) if (holds(lines[i]!, q)) out.push(i);
  return out;
}

/** Whether `line`, as shown, holds `q` (lower case). */
const holds = (line: string, q: string): boolean => stripEscapes(line).toLowerCase().includes(q);

/**
 * The lines of block `index` at `width` that hold `query` (their places in the block, in order):
 * a search can go a block at a time, rendering only the blocks it passes.
 */
export function matchesInBlock(transcript: Transcript, index: number, width: number, query: string): number[] {
  const q = query.toLowerCase();
  const out: number[] = [];
  if (!q) return out;
  const lines = transcript.blockLines(index, width);
  for (let k = 0; k < lines.length; k++) if (holds(lines[k]!, q)) out.push(k);
  return out;
}

/** The text of `line` as shown, and where each of its characters is in the line. */
function shownText(line: string): { text: string; at: number[] } {
  let text = '';
  const at: number[] = [];
  for (let i = 0; i < line.length; ) {
    if (line.charCodeAt(i) === 0x1b) {
      i = scanEscape(line, i).end;
      continue;
    }
    text += line[i];
    at.push(i);
    i++;
  }
  return { text, at };
}

/** Where in `line` each occurrence of `q` (lower case) starts and ends; null when lower-casing changes the length (positions would drift). */
function matchBounds(line: string, q: string): { starts: Set<number>; ends: Set<number> } | null {
  const { text, at } = shownText(line);
  const lower = text.toLowerCase();
  if (lower.length !== text.length) return null;
  const starts = new Set<number>();
  const ends = new Set<number>();
  for (let k = lower.indexOf(q); k >= 0; k = lower.indexOf(q, k + q.length)) {
    starts.add(at[k]!);
    ends.add(k + q.length < at.length ? at[k + q.length]! : line.length);
  }
  return starts.size ? { starts, ends } : null;
}

/** `line` with every occurrence of `query` in reverse video (the line's own styles kept around them). */
export function highlightMatches(line: string, query: string): string {
  const b = query ? matchBounds(line, query.toLowerCase()) : null;
  if (!b) return line;
  let out = '';
  let inside = false;
  for (let i = 0; i < line.length; ) {
    if (inside && b.ends.has(i)) {
      out += REVERSE_OFF;
      inside = false;
    }
    if (b.starts.has(i)) {
      out += REVERSE;
      inside = true;
    }
    const end = line.charCodeAt(i) === 0x1b ? scanEscape(line, i).end : i + 1;
    out += line.slice(i, end);
    // A reset inside a match must not end its highlight.
    if (inside && end > i + 1) out += REVERSE;
    i = end;
  }
  return inside ? out + REVERSE_OFF : out;
}
