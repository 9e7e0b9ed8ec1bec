// How a tool call reads in the transcript, as the original writes it: a verb per builtin
// (`executing shell command: ls`, `reading file: a.txt`, `writing file: b.txt`), else the tool's
// name and its arguments as `k=v` pairs clamped to 32 characters; and the tally of a finished
// batch (`-- ran 1 command, read 2 files, wrote 1 file, called 3 tools`), which counts the calls
// that ran and says apart those denied or cancelled before they ran (`-- ran 1 command, 2 cancelled`).

import type { NotRun } from '../../core/types.js';

/** The whole summary line is clamped to about this many characters (then `...`). */
export const SUMMARY_MAX = 195;
/** The `k=v` arguments of a tool without a verb are clamped to this many characters. */
export const ARGS_MAX = 32;

/** Newlines and tabs become spaces; longer than `max` ⇒ cut, with `...`. */
export function clampLine(s: string, max: number): string {
  const t = s.replace(/[\r\n\t]/g, ' ');
  return t.length <= max ? t : `${cutAt(t, max - 3)}...`;
}

/** The first n UTF-16 units of s, one fewer when that would split a surrogate pair. */
function cutAt(s: string, n: number): string {
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

function parseObject(args: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(args);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

const VERBS: Record<string, [string, string, string?]> = {
  shell_exec: ['executing shell command', 'command'],
  bg_exec: ['starting background command', 'command'],
  read_file: ['reading file', 'path'],
  write_file: ['writing file', 'path'],
  list_dir: ['listing directory', 'path', '.'],
};

/** The one line shown when a call begins (without the leading indent). */
export function toolSummary(name: string, args: string): string {
  const obj = parseObject(args);
  const verb = VERBS[name];
  if (verb && obj) {
    const [what, key, dflt] = verb;
    const v = obj[key] ?? dflt;
    if (v !== undefined) return clampLine(`${what}: ${text(v)}`, SUMMARY_MAX);
  }
  let detail: string;
  if (obj)
    detail = Object.entries(obj)
      .map(([k, v]) => `${k}=${text(v)}`)
      .join(' ');
  else detail = args.trim() === '{}' ? '' : args.trim();
  detail = detail.replace(/[\r\n\t]/g, ' ');
  if (detail.length > ARGS_MAX) detail = `${cutAt(detail, ARGS_MAX)}...`;
  return clampLine(detail ? `${name}: ${detail}` : name, SUMMARY_MAX);
}

/** What a batch (or a run of batches) did, counted by kind; and the calls that never ran. */
export interface RoundCounts {
  commands: number;
  background: number;
  read: number;
  written: number;
  listed: number;
  other: number;
  denied: number;
  cancelled: number;
}

export const emptyRoundCounts = (): RoundCounts => ({
  commands: 0,
  background: 0,
  read: 0,
  written: 0,
  listed: 0,
  other: 0,
  denied: 0,
  cancelled: 0,
});

/** Count a finished call: by kind when it ran, else by why not (a call of no known tool is not counted). */
export function countCall(t: RoundCounts, name: string, notRun?: NotRun): void {
  if (notRun) {
    if (notRun === 'denied') t.denied++;
    else if (notRun === 'cancelled') t.cancelled++;
    return;
  }
  switch (name) {
    case 'shell_exec':
      t.commands++;
      break;
    case 'bg_exec':
      t.background++;
      break;
    case 'read_file':
      t.read++;
      break;
    case 'write_file':
      t.written++;
      break;
    case 'list_dir':
      t.listed++;
      break;
    default:
      t.other++;
  }
}

export function addTally(into: RoundCounts, t: RoundCounts): void {
  for (const k of Object.keys(into) as (keyof RoundCounts)[]) into[k] += t[k];
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** `ran 1 command, read 2 files, …, 1 denied, 2 cancelled` (empty when no call was counted). */
export function tallyText(t: RoundCounts): string {
  const parts: string[] = [];
  if (t.commands) parts.push(`ran ${plural(t.commands, 'command', 'commands')}`);
  if (t.background) parts.push(`started ${plural(t.background, 'background command', 'background commands')}`);
  if (t.read) parts.push(`read ${plural(t.read, 'file', 'files')}`);
  if (t.written) parts.push(`wrote ${plural(t.written, 'file', 'files')}`);
  if (t.listed) parts.push(`listed ${plural(t.listed, 'directory', 'directories')}`);
  if (t.other) parts.push(`called ${plural(t.other, 'tool', 'tools')}`);
  for (const [n, what] of [
    [t.denied, 'denied'],
    [t.cancelled, 'cancelled'],
  ] as const) {
    // The first part says what it counts: `1 call denied`, then `, 2 cancelled`.
    if (n) parts.push(parts.length ? `${n} ${what}` : `${plural(n, 'call', 'calls')} ${what}`);
  }
  return parts.join(', ');
}
