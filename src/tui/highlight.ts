// Syntax highlighting of fenced code blocks with highlight.js core and a short list of languages,
// loaded on first use (most answers have no code) and drawn plain until then; listeners hear when
// more can be highlighted, to draw again.
//
// The load and each grammar's compilation (tens of milliseconds for TypeScript's) run a step at
// a time, each in a task of its own (next-task.ts), never inside a frame: a key typed as the
// first code block of a session is drawn waits for one step, not for all of them. A streamed
// fence starts them as soon as it opens, so a block of code is usually ready to be highlighted
// by the time it closes.
//
// Code of more than OFF_THREAD_AT characters is highlighted in a worker thread
// (highlight-thread.ts), since highlight.js takes tens of milliseconds on a few hundred lines; it
// is drawn plain until its colours are back, and the listeners hear then too.

import type { HLJSApi } from 'highlight.js';
import { HighlightThread, type HighlightThreadOptions } from './highlight-thread.js';
import { nextTask } from './next-task.js';
import type { Span } from './spans.js';
import { DEFAULT_STYLE, mergeStyles, type Style, style } from './style.js';

let hljs: HLJSApi | null = null;
let loading: Promise<void> | null = null;
let failed = false;
let generation = 0;
/** Grammars being compiled (in tasks of their own), by highlight.js's name for them. */
const compiling = new Map<string, Promise<void>>();
/** Grammars that failed to compile: their code stays plain (and is not compiled again). */
const broken = new Set<string>();
/** Code drawn plain that will be highlighted later: blocks compare it around a render. */
let plainDraws = 0;

/** Bumped when more can be highlighted: caches of drawn code compare it. */
export function highlightGeneration(): number {
  return generation;
}

/** Counts code drawn plain only because the highlighter or its grammar is not ready yet. */
export function plainCodeDraws(): number {
  return plainDraws;
}
const listeners = new Set<() => void>();

/** Whether highlight.js and its languages are loaded (grammars compile on first use). */
export function highlighterReady(): boolean {
  return hljs !== null;
}

/**
 * Load highlight.js (once), a module a task, and compile the grammar of `lang` when given;
 * resolves when code in `lang` can be highlighted (or nothing could be loaded).
 */
export function loadHighlighter(lang?: string): Promise<void> {
  loading ??= load();
  return lang ? loading.then(() => compile(lang)) : loading;
}

async function load(): Promise<void> {
  try {
    await nextTask();
    const core = (await import('highlight.js/lib/core')).default;
    const { ALIASES, LANGUAGES } = await import('./highlight-languages.js');
    for (const [name, language] of LANGUAGES) {
      await nextTask();
      core.registerLanguage(name, language);
    }
    for (const [alias, name] of ALIASES) core.registerAliases(alias, { languageName: name });
    hljs = core;
  } catch {
    failed = true;
  }
  // Short code waits for its grammar, whose compilation tells the listeners; long code only for
  // the load (the worker has grammars of its own).
  if (longCodeWaits) ready();
}

/** Long code was drawn plain for want of the load alone. */
let longCodeWaits = false;

/**
 * Start what highlighting code in `lang` needs (the load, the grammar) in the background, unless
 * it is done or under way: an open fence asks at every frame.
 */
export function prepareHighlighter(lang: string): void {
  const language = hljs?.getLanguage(lang);
  if (language && (compiled(language) || compiling.has(language.name ?? lang))) return;
  void loadHighlighter(lang);
}

/** Compile the grammar of `lang` in a task of its own, once; then tell the listeners. */
function compile(lang: string): Promise<void> {
  const language = hljs?.getLanguage(lang);
  if (!hljs || !language || compiled(language)) return Promise.resolve();
  const name = language.name ?? lang;
  let done = compiling.get(name);
  if (!done) {
    const api = hljs;
    done = nextTask().then(() => {
      try {
        // Highlighting nothing compiles the whole grammar (its modes and their regular expressions).
        api.highlight('', { language: lang, ignoreIllegals: true });
      } catch {
        broken.add(name);
      }
      compiling.delete(name);
      ready();
    });
    compiling.set(name, done);
  }
  return done;
}

/** highlight.js marks a grammar compiled on the language object itself. */
const compiled = (language: object): boolean => (language as { isCompiled?: boolean }).isCompiled === true;

function ready(): void {
  generation++;
  for (const l of [...listeners]) l();
}

/** Called once highlighting becomes available (to redraw code drawn plain meanwhile). */
export function onHighlighterReady(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Whether code in `lang` can be highlighted once the highlighter is loaded. */
export function canHighlight(lang: string): boolean {
  if (failed || !lang) return false;
  if (!hljs) return true;
  const language = hljs.getLanguage(lang);
  return !!language && !broken.has(language.name ?? lang);
}

const CLASS_STYLES: Record<string, Style> = {
  keyword: style({ fg: 'magenta' }),
  built_in: style({ fg: 'cyan' }),
  type: style({ fg: 'cyan' }),
  literal: style({ fg: 'yellow' }),
  number: style({ fg: 'yellow' }),
  string: style({ fg: 'green' }),
  regexp: style({ fg: 'red' }),
  symbol: style({ fg: 'yellow' }),
  comment: style({ fg: 'gray', italic: true }),
  doctag: style({ fg: 'gray', bold: true }),
  meta: style({ fg: 'gray' }),
  title: style({ fg: 'blue' }),
  'title.function': style({ fg: 'blue' }),
  'title.class': style({ fg: 'cyan', bold: true }),
  params: DEFAULT_STYLE,
  attr: style({ fg: 'cyan' }),
  attribute: style({ fg: 'cyan' }),
  property: style({ fg: 'cyan' }),
  variable: style({ fg: 'red' }),
  'variable.language': style({ fg: 'magenta' }),
  tag: style({ fg: 'blue' }),
  name: style({ fg: 'blue' }),
  selector: style({ fg: 'magenta' }),
  'selector-tag': style({ fg: 'magenta' }),
  addition: style({ fg: 'green' }),
  deletion: style({ fg: 'red' }),
  section: style({ fg: 'blue', bold: true }),
  bullet: style({ fg: 'yellow' }),
  emphasis: style({ italic: true }),
  strong: style({ bold: true }),
  subst: DEFAULT_STYLE,
};

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#x27': "'", '#39': "'" };

/** Longer code is highlighted in the worker thread (a couple of milliseconds' work at most here). */
export const OFF_THREAD_AT = 2048;
/** The longest code highlighted here when the thread cannot be used, and in the thread. */
const MAX_HERE = 16_384;
const MAX_OFF_THREAD = 65_536;

let thread: HighlightThread | null = null;
let threadOptions: HighlightThreadOptions = {};

/** The thread's deadline, cache and script (tests); ends a thread already started. */
export function configureHighlightThread(opts: HighlightThreadOptions): void {
  thread?.close();
  thread = null;
  threadOptions = opts;
}

/** Why long code cannot be highlighted off the main thread, or null (also before it is needed). */
export function highlightThreadFailure(): string | null {
  return thread?.failed ?? null;
}

/**
 * Highlighted code as lines of spans, or null when the highlighter is not loaded, does not know
 * the language, or (long code) has not sent the colours back yet: the caller draws the code plain.
 */
export function highlightCode(code: string, lang: string, base: Style = DEFAULT_STYLE): Span[][] | null {
  if (!lang || !canHighlight(lang)) return null;
  const language = hljs?.getLanguage(lang);
  if (!hljs || !language) {
    plainDraws++;
    if (code.length > OFF_THREAD_AT) {
      longCodeWaits = true;
      void loadHighlighter();
    } else prepareHighlighter(lang);
    return null;
  }
  if (code.length > OFF_THREAD_AT) {
    thread ??= new HighlightThread(ready, threadOptions);
    if (!thread.failed) return offThread(thread, code, lang, base);
  }
  if (code.length > MAX_HERE) return null;
  if (!compiled(language)) {
    plainDraws++;
    prepareHighlighter(lang);
    return null;
  }
  let html: string;
  try {
    html = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
  return spansOfHtml(html, base);
}

/**
 * The colours of the code last seen streaming: `lines` colour the complete lines `code` holds;
 * `html` is the answer they came from, and `parsed` where its last line begins, so that the next
 * answer, which starts the same, is turned into spans from there on.
 */
interface Streamed {
  code: string;
  lang: string;
  base: Style;
  lines: Span[][];
  html: string;
  parsed: HtmlLines;
}
let streamed: Streamed | null = null;

/**
 * Colours for the first lines of a block of code still streaming (its fence not closed), or null:
 * its complete lines', as far as they are known. They come from the thread, the newest of the
 * code at a time, so the coloured lines lag the text by a round trip; highlighting here the code
 * that grew by a line, at every line, held keys for milliseconds a line. A reply's code is thus
 * coloured as it comes, and what scrolls into an inline scrollback meanwhile stays coloured.
 * Without the thread, code is plain until its fence closes.
 */
export function highlightStreamingCode(code: string, lang: string, base: Style = DEFAULT_STYLE): Span[][] | null {
  if (!lang || !canHighlight(lang)) return null;
  const whole = code.slice(0, code.lastIndexOf('\n') + 1);
  if (!whole) return null;
  // The colours last seen, when this code goes on from them (else another block's).
  const mine = streamed?.lang === lang && streamed.base === base && whole.startsWith(streamed.code) ? streamed : null;
  if (mine?.code !== whole) streamed = streamingOffThread(whole, lang, base, mine) ?? streamed;
  return streamedLines(code, lang, base);
}

/** The colours last seen for `code`'s first lines while it streamed (a block just closed, until its own come), or null. */
export function streamedLines(code: string, lang: string, base: Style = DEFAULT_STYLE): Span[][] | null {
  const s = streamed;
  return s && s.lang === lang && s.base === base && `${code}\n`.startsWith(s.code) ? s.lines : null;
}

/**
 * The code is asked for once it grew by half a KiB since the colours drawn (a tenth, when that is
 * more): each answer costs this thread its new lines' spans and wrapping, and the worker, on the
 * other core, the whole code again. Asked at every line, a key's echo while 40 lines of code
 * stream took a median 8 ms (5 with the code plain); asked so, 6. Code shorter than that is
 * highlighted once its fence closes.
 */
const grownEnough = (whole: string, have: string) => whole.length - have.length >= Math.max(512, have.length / 10);

/** New colours for streaming code `whole` from the thread (null: none newer than `have`'s). */
function streamingOffThread(whole: string, lang: string, base: Style, have: Streamed | null): Streamed | null {
  if (whole.length > MAX_OFF_THREAD) return null;
  thread ??= new HighlightThread(ready, threadOptions);
  if (thread.failed) return null;
  const got = grownEnough(whole, have?.code ?? '') ? thread.streamingHtml(whole, lang) : thread.lastStreamed;
  // Lines wait for their colours: told when they come, so a stream that pauses is drawn coloured.
  const plainForGood = got?.html === null && whole.startsWith(got.code);
  if (got?.code !== whole && !plainForGood) plainDraws++;
  if (!got?.html || got.lang !== lang || got.code === have?.code || !whole.startsWith(got.code)) return null;
  // What the last answer's lines were turned from, unchanged: only the lines after them are new.
  const from = have && got.html.startsWith(have.html.slice(0, have.parsed.lastLineAt)) ? have : null;
  const parsed = from ? htmlLines(got.html, base, from.parsed.lastLineAt, from.parsed.lastLineStack) : htmlLines(got.html, base);
  // The HTML of code ending with a newline: its last line is the empty one after it.
  const lines = [...(from?.lines ?? []), ...parsed.lines.slice(0, -1)];
  return { code: got.code, lang, base, lines, html: got.html, parsed };
}

function offThread(t: HighlightThread, code: string, lang: string, base: Style): Span[][] | null {
  if (code.length > MAX_OFF_THREAD) return null;
  const html = t.html(code, lang);
  if (html === undefined) plainDraws++;
  return html ? spansOfHtml(html, base) : null;
}

/** highlight.js's HTML (spans with classes, entities) as lines of styled spans. */
function spansOfHtml(html: string, base: Style): Span[][] {
  return htmlLines(html, base).lines;
}

/** Lines of spans from `html`, and where its last line begins: the offset, and the styles open there. */
interface HtmlLines {
  lines: Span[][];
  lastLineAt: number;
  lastLineStack: Style[];
}

/** highlight.js's HTML from offset `from` on, inside the open styles `stack` (a line's start, as HtmlLines tells it). */
function htmlLines(html: string, base: Style, from = 0, open: readonly Style[] = [base]): HtmlLines {
  let line: Span[] = [];
  const lines: Span[][] = [line];
  const stack = open.slice();
  let lastLineAt = from;
  let lastLineStack = open.slice();
  const add = (text: string, at: number) => {
    const st = stack[stack.length - 1]!;
    for (let i = 0; ; ) {
      const nl = text.indexOf('\n', i);
      append(line, nl < 0 ? (i ? text.slice(i) : text) : text.slice(i, nl), st);
      if (nl < 0) return;
      line = [];
      lines.push(line);
      i = nl + 1;
      lastLineAt = at + i;
      lastLineStack = stack.slice();
    }
  };
  const re = /<span class="([^"]*)">|<\/span>|&(amp|lt|gt|quot|#x27|#39);|[^<&]+|[<&]/g;
  re.lastIndex = from;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    if (m[1] !== undefined) stack.push(styleWithin(stack[stack.length - 1]!, m[1]));
    else if (m[0] === '</span>') {
      if (stack.length > 1) stack.pop();
    } else add(m[2] !== undefined ? ENTITIES[m[2]]! : m[0], m.index);
  }
  return { lines, lastLineAt, lastLineStack };
}

/** Text at the end of a line: joins the last span when in its style (an entity, a span that changed nothing). */
function append(line: Span[], text: string, style: Style): void {
  if (!text) return;
  const last = line[line.length - 1];
  if (last?.style === style) last.text += text;
  else line.push({ text, style });
}

/** styleWithin's answers: a block of code has thousands of spans of a few dozen kinds. */
const within = new Map<string, Style>();

/** The style of a span of class `classes` inside one of style `outer`. */
function styleWithin(outer: Style, classes: string): Style {
  const key = `${outer.key}\n${classes}`;
  let st = within.get(key);
  if (!st) {
    const cls = classes
      .split(' ')[0]!
      .replace(/^hljs-/, '')
      .replace(/_+$/, '');
    const own = CLASS_STYLES[cls] ?? CLASS_STYLES[cls.split('.')[0]!] ?? DEFAULT_STYLE;
    st = own === DEFAULT_STYLE ? outer : mergeStyles(outer, own);
    if (within.size >= 4096) within.clear();
    within.set(key, st);
  }
  return st;
}
