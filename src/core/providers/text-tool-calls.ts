// Tool calls a model wrote as text instead of `tool_calls`: what local servers leave in the
// content when their template or parser did not catch the model's own call syntax.
//
// - Hermes / Qwen: `<tool_call>{"name": …, "arguments": …}</tool_call>`, one or more;
// - Qwen3-Coder: `<function=NAME><parameter=P>value</parameter>…</function>`, bare or inside
//   `<tool_call>`;
// - Mistral: `[TOOL_CALLS][{"name": …, "arguments": …}]`, or `[TOOL_CALLS]NAME[ARGS]{…}`;
// - Llama 3.x: `<|python_tag|>{"name": …, "parameters": …}`, several separated by `;`;
// - a bare JSON object `{"name": …, "arguments"|"parameters": …}` (or a list of them), perhaps
//   in a ```json fence, that is the whole reply.
//
// The calls must be where the reply ends (end-of-turn tokens aside), and a tag counts only
// outside code (a ``` fence, `inline code`): prose that quotes a call, or goes on after one,
// stays prose. Text before the calls is kept as the reply's text.
//
// The scanner reads the text as it streams, a character at a time, and says how much of it is
// certainly not a call: from the first place a call may begin, text is held back until the
// reply decides it (a quoted tag followed by more prose, a JSON reply whose first key is not a
// call's, releases it at once). It reads the whole text the same way however it was cut into
// pieces, so a streamed reply and the same reply whole give the same calls.

import { parseLoose } from './tool-arguments.js';

/** One call as written: the tool name as the model spelt it, and its arguments (a parsed value, or text). */
export interface TextCall {
  name: string;
  args: unknown;
}

export interface TextCalls {
  /** Where the calls begin in the text (what precedes them is the reply's text). */
  start: number;
  /** Which syntax they came in, for the log. */
  format: string;
  calls: TextCall[];
}

interface Opener {
  tag: string;
  /** null: the block runs to the end of the reply. */
  closer: string | null;
  format: string;
}

const OPENERS: readonly Opener[] = [
  { tag: '<tool_call>', closer: '</tool_call>', format: '<tool_call> (Hermes, Qwen)' },
  { tag: '<function=', closer: '</function>', format: '<function=…> (Qwen3-Coder)' },
  { tag: '[TOOL_CALLS]', closer: null, format: '[TOOL_CALLS] (Mistral)' },
  { tag: '<|python_tag|>', closer: null, format: '<|python_tag|> (Llama 3)' },
];
/** End-of-turn tokens a server may leave after the calls. */
const TRAILERS = ['<|im_end|>', '<|eot_id|>', '<|eom_id|>', '<|end|>', '</s>'];
/** A call object's first key, when the reply is a bare JSON object. */
const CALL_KEYS = new Set(['name', 'arguments', 'parameters']);
const BLANK = /\s/;

/** 'partial' when `s` ends inside one of `tags` begun at `i`; the tag when one begins there; else null. */
function tagAt<T extends string>(s: string, i: number, tags: readonly T[]): T | 'partial' | null {
  for (const t of tags) {
    if (s.startsWith(t, i)) return t;
    if (s.length - i < t.length && t.startsWith(s.slice(i))) return 'partial';
  }
  return null;
}
// Written out, not mapped from OPENERS: a top-level call would keep this module in every page's bundle.
const OPENER_TAGS = ['<tool_call>', '<function=', '[TOOL_CALLS]', '<|python_tag|>'];

interface Place {
  lineStart: boolean;
  inFence: boolean;
  /** Backticks so far on the line (odd: inside inline code). */
  ticks: number;
  /** A non-blank character came before. */
  content: boolean;
}

interface MarkerHold {
  kind: 'marker';
  start: number;
  at: Place;
  pos: number;
  /** Inside a block: the tag that closes it (null: it runs to the end); undefined between blocks. */
  closer: string | null | undefined;
  searchFrom: number;
}

interface JsonHold {
  kind: 'json';
  start: number;
  at: Place;
  pos: number;
  phase: 'fence' | 'value' | 'inside' | 'after';
  fenced: boolean;
  brackets: Brackets;
  keyChecked: boolean;
}

type Hold = MarkerHold | JsonHold;
type Step = 'wait' | 'fail';

export class TextCallScanner {
  /** The text from #base on: what is scanned and ruled out, with no hold on it, is dropped. */
  #s = '';
  #base = 0;
  #i = 0;
  #at: Place = { lineStart: true, inFence: false, ticks: 0, content: false };
  #hold: Hold | null = null;
  /** The character at #i is read as ordinary text (a call that began there was ruled out). */
  #plain = false;

  /** Add streamed text; returns how much of the text so far is certainly not a call (may be shown). */
  push(text: string): number {
    // Reading a concatenated string by index makes V8 copy it whole: a reply kept whole here
    // would cost a copy of everything so far per streamed chunk. Holds keep positions in #s, so
    // only text before #i with no hold is dropped.
    if (!this.#hold && this.#i > 0) {
      this.#base += this.#i;
      this.#s = this.#s.slice(this.#i);
      this.#i = 0;
    }
    this.#s += text;
    this.#scan();
    return this.#base + (this.#hold ? this.#hold.start : this.#i);
  }

  /** The whole text is in: the calls it ends with, or null when it is no call. */
  end(): TextCalls | null {
    const h = this.#hold;
    if (!h) return null;
    const s = this.#s;
    if (h.kind === 'json') {
      const v = parseLoose(
        s
          .slice(h.start)
          .trim()
          .replace(/^```[a-z]*\s*/i, '')
          .replace(/\s*```$/, ''),
      );
      const calls = v && jsonCalls(v.value, true);
      return calls ? { start: this.#base + h.start, format: 'a bare JSON call', calls } : null;
    }
    const got = markerCalls(s, h.start);
    return got ? { start: this.#base + h.start, ...got } : null;
  }

  #scan(): void {
    const s = this.#s;
    for (;;) {
      if (this.#hold && !this.#settle(this.#hold)) return;
      if (this.#i >= s.length) return;
      const began = this.#plain ? false : this.#begin();
      if (began === 'partial') return;
      if (began) continue;
      this.#plain = false;
      const n = advance(this.#at, s, this.#i);
      if (n === 0) return;
      this.#i += n;
    }
  }

  /** Whether the hold is decided: false while it waits; when it is no call, the text from its start is read again as ordinary text. */
  #settle(h: Hold): boolean {
    if ((h.kind === 'marker' ? markerStep(this.#s, h) : jsonStep(this.#s, h)) === 'wait') return false;
    this.#hold = null;
    this.#at = h.at;
    this.#i = h.start;
    this.#plain = true;
    return true;
  }

  /** Hold from #i when a call may begin there (outside code); 'partial' when a tag may begin but the text ends first. */
  #begin(): boolean | 'partial' {
    const s = this.#s;
    const i = this.#i;
    const c = s[i]!;
    const at = this.#at;
    if (at.inFence || at.ticks % 2 !== 0) return false;
    if (c === '<' || c === '[') {
      const t = tagAt(s, i, OPENER_TAGS);
      if (t === 'partial') return 'partial';
      if (t) {
        this.#hold = { kind: 'marker', start: i, at: { ...at }, pos: i, closer: undefined, searchFrom: i };
        return true;
      }
    }
    if (at.content || !(c === '{' || c === '[' || c === '`')) return false;
    const fenced = c === '`';
    const brackets = { depth: 0, inString: false, escaped: false };
    this.#hold = { kind: 'json', start: i, at: { ...at }, pos: i, phase: fenced ? 'fence' : 'value', fenced, brackets, keyChecked: false };
    return true;
  }
}

/**
 * Move `at` past the character at `i` of `s`: how many characters that took (a ``` fence is
 * three), 0 when the text ends where a fence may begin.
 */
function advance(at: Place, s: string, i: number): number {
  const c = s[i]!;
  if (c === '\n') {
    at.lineStart = true;
    at.ticks = 0;
    return 1;
  }
  if (at.lineStart && c === '`') return lineStartTick(at, s, i);
  if (!(at.lineStart && (c === ' ' || c === '\t'))) {
    at.lineStart = false;
    if (c === '`' && !at.inFence) at.ticks++;
  }
  if (!BLANK.test(c)) at.content = true;
  return 1;
}

/** A backtick first on its line: a fence opens or closes, or inline code begins. */
function lineStartTick(at: Place, s: string, i: number): number {
  if (s.length - i < 3 && '```'.startsWith(s.slice(i))) return 0;
  at.lineStart = false;
  at.content = true;
  if (s.startsWith('```', i)) {
    at.inFence = !at.inFence;
    return 3;
  }
  if (!at.inFence) at.ticks++;
  return 1;
}

/** Tag-led blocks, then only blanks and end-of-turn tokens. */
function markerStep(s: string, h: MarkerHold): Step {
  for (;;) {
    if (h.closer === null) return 'wait';
    const step = h.closer === undefined ? nextBlock(s, h) : closeBlock(s, h);
    if (step !== 'go') return step;
  }
}

/** Inside a block: on past its closing tag, or wait for it. */
function closeBlock(s: string, h: MarkerHold): Step | 'go' {
  const closer = h.closer!;
  const k = s.indexOf(closer, h.searchFrom);
  if (k < 0) {
    h.searchFrom = Math.max(h.pos, s.length - closer.length + 1);
    return 'wait';
  }
  h.pos = k + closer.length;
  h.closer = undefined;
  return 'go';
}

/** Between blocks: the next block's tag, or an end-of-turn token after one; anything else is not a call's. */
function nextBlock(s: string, h: MarkerHold): Step | 'go' {
  while (h.pos < s.length && BLANK.test(s[h.pos]!)) h.pos++;
  if (h.pos >= s.length) return 'wait';
  const o = tagAt(s, h.pos, OPENER_TAGS);
  if (o === 'partial') return 'wait';
  if (o) {
    h.pos += o.length;
    h.searchFrom = h.pos;
    h.closer = OPENERS.find((x) => x.tag === o)!.closer;
    return 'go';
  }
  const t = h.pos > h.start ? tagAt(s, h.pos, TRAILERS) : null;
  if (t === 'partial') return 'wait';
  if (!t) return 'fail';
  h.pos += t.length;
  return 'go';
}

/** A reply that is one JSON value, perhaps fenced: held while it may be a call. */
function jsonStep(s: string, h: JsonHold): Step {
  while (h.pos < s.length) {
    const step = jsonPhase(s, h);
    if (step !== 'go') return step;
  }
  return firstKey(s, h);
}

/** One step through the JSON hold's text: it moves on ('go'), or the hold waits or fails. */
function jsonPhase(s: string, h: JsonHold): Step | 'go' {
  const c = s[h.pos]!;
  switch (h.phase) {
    case 'fence':
      return fenceLine(s, h);
    case 'value':
      if (BLANK.test(c)) break;
      if (c !== '{' && c !== '[') return 'fail';
      h.phase = 'inside';
      return 'go';
    case 'inside':
      if (bracket(h.brackets, c)) h.phase = 'after';
      break;
    case 'after':
      if (BLANK.test(c)) break;
      return closingFence(s, h);
  }
  h.pos++;
  return 'go';
}

/** The ```json line before a fenced value. */
function fenceLine(s: string, h: JsonHold): Step | 'go' {
  const nl = s.indexOf('\n', h.pos);
  const line = nl < 0 ? s.slice(h.pos) : s.slice(h.pos, nl);
  if (!(line.length < 3 ? '```'.startsWith(line) : /^```[a-z]*\s*$/i.test(line))) return 'fail';
  if (nl < 0) return 'wait';
  h.pos = nl + 1;
  h.phase = 'value';
  return 'go';
}

/** After the value: only the fence that closes the one it opened with. */
function closingFence(s: string, h: JsonHold): Step | 'go' {
  if (!h.fenced || s[h.pos] !== '`') return 'fail';
  if (s.length - h.pos < 3) return '```'.startsWith(s.slice(h.pos)) ? 'wait' : 'fail';
  if (!s.startsWith('```', h.pos)) return 'fail';
  h.fenced = false;
  h.pos += 3;
  return 'go';
}

/** The first key says early whether a JSON reply may be a call at all. */
function firstKey(s: string, h: JsonHold): Step {
  if (h.keyChecked) return 'wait';
  const m = /^\s*(?:```[a-z]*\s*)?\[?\s*\{\s*"((?:[^"\\]|\\.)*)"/i.exec(s.slice(h.start, h.start + 400));
  if (m) {
    h.keyChecked = true;
    return CALL_KEYS.has(m[1]!) ? 'wait' : 'fail';
  }
  if (s.length - h.start > 400) h.keyChecked = true;
  return 'wait';
}

/** Where a JSON value's brackets stand, read a character at a time (strings and their escapes skipped). */
interface Brackets {
  depth: number;
  inString: boolean;
  escaped: boolean;
}

/** Read `c`; true when it closes the outermost bracket. */
function bracket(b: Brackets, c: string): boolean {
  if (b.inString) {
    if (b.escaped) b.escaped = false;
    else if (c === '\\') b.escaped = true;
    else if (c === '"') b.inString = false;
    return false;
  }
  if (c === '"') b.inString = true;
  else if (c === '{' || c === '[') b.depth++;
  else if (c === '}' || c === ']') return --b.depth === 0;
  return false;
}

/** The calls of tag-led blocks from `start` to the end, or null when one of them is not a call. */
function markerCalls(s: string, start: number): { format: string; calls: TextCall[] } | null {
  const calls: TextCall[] = [];
  let format = '';
  for (let pos = skipBlanks(s, start); pos < s.length; pos = skipBlanks(s, pos)) {
    const t = calls.length ? TRAILERS.find((x) => s.startsWith(x, pos)) : undefined;
    const o = t ? undefined : OPENERS.find((x) => s.startsWith(x.tag, pos));
    if (t) pos += t.length;
    else if (!o) return null;
    else {
      format ||= o.format;
      const b = block(s, pos, o);
      const got = blockCalls(o.tag, b.body);
      if (!got?.length) return null;
      calls.push(...got);
      pos = b.next;
    }
  }
  return calls.length ? { format, calls } : null;
}

const skipBlanks = (s: string, pos: number) => {
  while (pos < s.length && BLANK.test(s[pos]!)) pos++;
  return pos;
};

/** The block `o` opens at `pos`: its body, and where what follows it begins. */
function block(s: string, pos: number, o: Opener): { body: string; next: number } {
  const from = pos + o.tag.length;
  const k = o.closer ? s.indexOf(o.closer, from) : -1;
  return k < 0 ? { body: withoutTrailers(s.slice(from)), next: s.length } : { body: s.slice(from, k), next: k + o.closer!.length };
}

/** The calls in the body of a block opened by `tag`. */
function blockCalls(tag: string, body: string): TextCall[] | null {
  if (tag === '<function=') return functionCall(body);
  if (tag === '<tool_call>') return toolCallBody(body);
  if (tag === '[TOOL_CALLS]') return mistralCalls(body);
  return jsonValues(body);
}

function withoutTrailers(s: string): string {
  let t = s.trimEnd();
  for (let again = true; again; ) {
    again = false;
    for (const x of TRAILERS)
      if (t.endsWith(x)) {
        t = t.slice(0, -x.length).trimEnd();
        again = true;
      }
  }
  return t;
}

/** `<tool_call>`'s body: a JSON call (or a list of them), or a Qwen3-Coder function. */
function toolCallBody(body: string): TextCall[] | null {
  const b = body.trim();
  if (b.startsWith('<function=')) return functionCall(b.slice('<function='.length).replace(/<\/function>\s*$/, ''));
  const v = parseLoose(b);
  return v ? jsonCalls(v.value, false) : null;
}

/** Qwen3-Coder: `NAME>` then `<parameter=P>value</parameter>`…; each value is text (the schema types it later). */
function functionCall(body: string): TextCall[] | null {
  const m = /^\s*([^>\s]+)\s*>/.exec(body);
  if (!m) return null;
  const args: Record<string, string> = {};
  const rest = body.slice(m[0].length);
  for (const p of rest.matchAll(/<parameter=\s*([^>\n]+?)\s*>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|$)/g)) {
    args[p[1]!] = p[2]!.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
  }
  // Whatever is left besides the parameters must be blank: prose there means this is not a call.
  if (rest.replace(/<parameter=[\s\S]*?(?:<\/parameter>|(?=<parameter=)|$)/g, '').trim()) return null;
  return [{ name: m[1]!, args }];
}

/** After `[TOOL_CALLS]`: a JSON list of calls, or `NAME[ARGS]{…}` (`[CALL_ID]id` between), each led by `[TOOL_CALLS]`. */
function mistralCalls(body: string): TextCall[] | null {
  const out: TextCall[] = [];
  for (const part of body.split('[TOOL_CALLS]')) {
    const p = part.trim();
    if (!p) continue;
    if (p.startsWith('[') || p.startsWith('{')) {
      const v = parseLoose(p);
      const calls = v && jsonCalls(v.value, false);
      if (!calls) return null;
      out.push(...calls);
      continue;
    }
    const m = /^([\w.-]+)\s*(?:\[CALL_ID\]\s*[^[\s]*\s*)?\[ARGS\]([\s\S]*)$/.exec(p);
    if (!m) return null;
    out.push({ name: m[1]!, args: m[2]!.trim() || '{}' });
  }
  return out.length ? out : null;
}

/** JSON calls one after another, separated by blanks, `;` or `,` (Llama 3's `<|python_tag|>`). */
function jsonValues(body: string): TextCall[] | null {
  const out: TextCall[] = [];
  let i = 0;
  for (;;) {
    while (i < body.length && /[\s;,]/.test(body[i]!)) i++;
    if (i >= body.length) break;
    if (body[i] !== '{' && body[i] !== '[') return null;
    const e = jsonEnd(body, i);
    const v = parseLoose(body.slice(i, e));
    const calls = v && jsonCalls(v.value, false);
    if (!calls) return null;
    out.push(...calls);
    i = e;
  }
  return out.length ? out : null;
}

/** Where the JSON value at `i` ends (past its closing bracket), or the end of `s` when it does not close. */
function jsonEnd(s: string, i: number): number {
  const b: Brackets = { depth: 0, inString: false, escaped: false };
  for (; i < s.length; i++) if (bracket(b, s[i]!)) return i + 1;
  return s.length;
}

/**
 * A call object `{"name": …, "arguments"|"parameters": …}`, or a list of them. `argsRequired`:
 * the object must carry its arguments (a bare JSON reply; inside a tag the name alone will do).
 */
function jsonCalls(v: unknown, argsRequired: boolean): TextCall[] | null {
  const list = Array.isArray(v) ? v : [v];
  if (!list.length) return null;
  const out: TextCall[] = [];
  for (const o of list) {
    if (typeof o !== 'object' || o === null || Array.isArray(o)) return null;
    const c = o as Record<string, unknown>;
    if (typeof c.name !== 'string' || !c.name) return null;
    const args = c.arguments !== undefined ? c.arguments : c.parameters;
    if (args === undefined && argsRequired) return null;
    out.push({ name: c.name, args: args ?? {} });
  }
  return out;
}
