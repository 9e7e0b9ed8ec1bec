// How a tool call reads in the transcript, as the original writes it: a verb per builtin
// (`executing shell command: ls`, `reading file: a.txt`, `writing file: b.txt`), else the tool's
// name and its arguments as `k=v` pairs clamped to 32 characters; and the tally of a finished
// batch (`-- ran 1 command, read 2 files, wrote 1 file, called 3 tools`).

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

/** What a batch (or a run of batches) did, counted by kind. */
export interface Tally {
  commands: number;
  background: number;
  read: number;
  written: number;
  listed: number;
  other: number;
}

export const emptyTally = (): Tally => ({ commands: 0, background: 0, read: 0, written: 0, listed: 0, other: 0 });

export function countCall(t: Tally, name: string): void {
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

export function addTally(into: Tally, t: Tally): void {
  for (const k of Object.keys(into) as (keyof Tally)[]) into[k] += t[k];
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** `ran 1 command, read 2 files, …` (empty when nothing ran). */
export function tallyText(t: Tally): string {
  const parts: string[] = [];
  if (t.commands) parts.push(`ran ${plural(t.commands, 'command', 'commands')}`);
  if (t.background) parts.push(`started ${plural(t.background, 'background command', 'background commands')}`);
  if (t.read) parts.push(`read ${plural(t.read, 'file', 'files')}`);
  if (t.written) parts.push(`wrote ${plural(t.written, 'file', 'files')}`);
  if (t.listed) parts.push(`listed ${plural(t.listed, 'directory', 'directories')}`);
  if (t.other) parts.push(`called ${plural(t.other, 'tool', 'tools')}`);
  return parts.join(', ');
}
