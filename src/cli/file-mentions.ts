// File mentions: `@path` in a prompt (at its start or after a blank or an opening bracket) names a
// file or directory, relative to the workspace (`~/…` and absolute paths too; a space in a name
// written `\ `, as TAB completes it). The prompt goes to the model as typed, followed by the
// content of each file (its listing for a directory), each under its path. A file over the cap is
// cut at a character boundary, a binary one is left out, and each of these is said in a notice;
// so is a path with a `/` that names nothing (a bare `@word` that names nothing is just text).
// Everything is read through the regular-file reader: a FIFO or a device is refused, never waited on.

import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { errnoText } from '../host/errno-text.js';
import { readRegularFileHeadSync } from '../host/regular-file.js';
import { wholeChars } from './text-head.js';

/** The most of one file that is attached. */
export const MENTION_FILE_BYTES = 64 * 1024;
/** The most attached to one prompt altogether. */
export const MENTION_TOTAL_BYTES = 256 * 1024;
/** The most entries of a directory listed. */
export const MENTION_DIR_ENTRIES = 500;

/** Where the attachments begin in the text sent: a replay of the conversation shows what comes before it. */
export const MENTIONS_MARKER = '\n\n[files mentioned with @, attached by clm]\n';

export interface MentionOptions {
  cwd: string;
  home?: string;
  /** Applied to what is attached (the run's secrets). */
  mask?(text: string): string;
}

export interface Mentions {
  /** The prompt with the attachments after it (the prompt itself when nothing was attached). */
  text: string;
  /** What was attached, for the person: `src/a.ts (1234 bytes)`, `src/ (12 entries)`. */
  attached: string[];
  /** What was cut or left out, and why. */
  notices: string[];
}

/** The `@path` words of a prompt, as written (without the `@`, escapes undone). */
export function mentionedPaths(prompt: string): string[] {
  const out: string[] = [];
  const re = /(?:^|[\s([{])@((?:\\.|[^\s\\])+)/g;
  for (let m = re.exec(prompt); m; m = re.exec(prompt)) out.push(m[1]!.replace(/\\(.)/g, '$1'));
  return out;
}

function resolvePath(p: string, o: MentionOptions): string | null {
  if (p === '~' || p.startsWith('~/')) return o.home ? join(o.home, p.slice(1)) : null;
  return isAbsolute(p) ? p : resolve(o.cwd, p);
}

type Found = { path: string; written: string; dir: boolean };

/** The path a mention names: as written, else without trailing punctuation (`see @a.ts,` → a.ts). */
function find(written: string, o: MentionOptions): Found | null {
  for (let w = written; w; w = w.slice(0, -1)) {
    const path = resolvePath(w, o);
    if (path) {
      try {
        return { path, written: w, dir: statSync(path).isDirectory() };
      } catch {
        /* not this one */
      }
    }
    if (!/[.,;:!?)\]}'"]$/.test(w)) break;
  }
  return null;
}

function listing(path: string): { text: string; count: number } {
  const entries = readdirSync(path, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const shown = entries.slice(0, MENTION_DIR_ENTRIES);
  const more = entries.length - shown.length;
  return { text: shown.join('\n') + (more ? `\n[${more} more entries not listed]` : ''), count: entries.length };
}

/** What is being gathered for one prompt. */
interface Gathered {
  attached: string[];
  notices: string[];
  parts: string[];
  /** Bytes the attachments may still take. */
  left: number;
}

/** Attach one file (as far as the caps allow), or say why not. */
function attachFile(f: Found, g: Gathered, mask: (s: string) => string): void {
  const name = f.written;
  if (g.left <= 0) {
    g.notices.push(`@${name}: not attached; the attachments reached ${MENTION_TOTAL_BYTES} bytes`);
    return;
  }
  const { data, size } = readRegularFileHeadSync(f.path, Math.min(MENTION_FILE_BYTES, g.left));
  if (data.subarray(0, 8192).includes(0)) {
    g.notices.push(`@${name}: a binary file; not attached`);
    return;
  }
  const body = size > data.length ? wholeChars(data) : data;
  g.left -= body.length;
  const cut = body.length < size;
  if (cut) g.notices.push(`@${name}: attached its first ${body.length} of ${size} bytes`);
  const note = cut ? `\n[cut: the first ${body.length} of ${size} bytes]` : '';
  g.parts.push(`<file path="${name}">\n${mask(body.toString('utf8'))}${note}\n</file>`);
  g.attached.push(`${name} (${size} bytes${cut ? `, ${body.length} attached` : ''})`);
}

/** Attach what the prompt's mentions name. */
export function attachMentions(prompt: string, o: MentionOptions): Mentions {
  const mask = o.mask ?? ((s: string) => s);
  const g: Gathered = { attached: [], notices: [], parts: [], left: MENTION_TOTAL_BYTES };
  const seen = new Set<string>();
  for (const written of mentionedPaths(prompt)) {
    const f = find(written, o);
    if (!f) {
      if (written.includes('/')) g.notices.push(`@${written}: no such file or directory; sent as typed`);
      continue;
    }
    if (seen.has(f.path)) continue;
    seen.add(f.path);
    try {
      if (f.dir) {
        const l = listing(f.path);
        g.parts.push(`<directory path="${f.written}">\n${mask(l.text)}\n</directory>`);
        g.attached.push(`${f.written} (${l.count} entries)`);
      } else attachFile(f, g, mask);
    } catch (e) {
      g.notices.push(`@${f.written}: not attached (${errnoText(e)})`);
    }
  }
  const { attached, notices, parts } = g;
  return { text: parts.length ? `${prompt}${MENTIONS_MARKER}${parts.join('\n')}` : prompt, attached, notices };
}

/** What the person wrote, of a prompt sent with attachments (for showing a conversation again). */
export function typedPart(content: string): string {
  const at = content.indexOf(MENTIONS_MARKER);
  return at < 0 ? content : content.slice(0, at);
}
