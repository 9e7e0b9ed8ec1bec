// Syntax highlighting of fenced code blocks with highlight.js core and a short list of languages,
// imported on first use (the import costs tens of milliseconds; most answers have no code).
// Until it has loaded, code is drawn plain; listeners hear when it is ready, to draw again.

import type { HLJSApi, LanguageFn } from 'highlight.js';
import type { Span } from './spans.js';
import { DEFAULT_STYLE, mergeStyles, type Style, style } from './style.js';

let hljs: HLJSApi | null = null;
let loading: Promise<void> | null = null;
let failed = false;
let generation = 0;

/** Bumped when highlighting becomes available: caches of drawn code compare it. */
export function highlightGeneration(): number {
  return generation;
}
const listeners = new Set<() => void>();

/** Languages registered, with the aliases highlight.js knows them by. */
export const HIGHLIGHT_LANGUAGES = [
  'bash',
  'c',
  'cpp',
  'css',
  'diff',
  'go',
  'java',
  'javascript',
  'json',
  'lua',
  'markdown',
  'python',
  'rust',
  'sql',
  'typescript',
  'xml',
  'yaml',
] as const;

export function highlighterReady(): boolean {
  return hljs !== null;
}

/** Load highlight.js (once); resolves when it can be used (or could not be loaded). */
export function loadHighlighter(): Promise<void> {
  loading ??= (async () => {
    try {
      const core = (await import('highlight.js/lib/core')).default;
      const langs: [string, Promise<{ default: LanguageFn }>][] = [
        ['bash', import('highlight.js/lib/languages/bash')],
        ['c', import('highlight.js/lib/languages/c')],
        ['cpp', import('highlight.js/lib/languages/cpp')],
        ['css', import('highlight.js/lib/languages/css')],
        ['diff', import('highlight.js/lib/languages/diff')],
        ['go', import('highlight.js/lib/languages/go')],
        ['java', import('highlight.js/lib/languages/java')],
        ['javascript', import('highlight.js/lib/languages/javascript')],
        ['json', import('highlight.js/lib/languages/json')],
        ['lua', import('highlight.js/lib/languages/lua')],
        ['markdown', import('highlight.js/lib/languages/markdown')],
        ['python', import('highlight.js/lib/languages/python')],
        ['rust', import('highlight.js/lib/languages/rust')],
        ['sql', import('highlight.js/lib/languages/sql')],
        ['typescript', import('highlight.js/lib/languages/typescript')],
        ['xml', import('highlight.js/lib/languages/xml')],
        ['yaml', import('highlight.js/lib/languages/yaml')],
      ];
      for (const [name, mod] of langs) core.registerLanguage(name, (await mod).default);
      core.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
      hljs = core;
      generation++;
    } catch {
      failed = true;
    }
    for (const l of [...listeners]) l();
  })();
  return loading;
}

/** Called once highlighting becomes available (to redraw code drawn plain meanwhile). */
export function onHighlighterReady(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Whether code in `lang` can be highlighted once the highlighter is loaded. */
export function canHighlight(lang: string): boolean {
  if (failed || !lang) return false;
  if (hljs) return !!hljs.getLanguage(lang);
  return true;
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

/**
 * Highlighted code as lines of spans, or null when the highlighter is not loaded or does not know
 * the language (the caller draws the code plain).
 */
export function highlightCode(code: string, lang: string, base: Style = DEFAULT_STYLE): Span[][] | null {
  if (!hljs || !lang || !hljs.getLanguage(lang)) return null;
  let html: string;
  try {
    html = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
  return spansOfHtml(html, base);
}

/** highlight.js's HTML (spans with classes, entities) as lines of styled spans. */
function spansOfHtml(html: string, base: Style): Span[][] {
  const lines: Span[][] = [[]];
  const stack: Style[] = [base];
  const add = (text: string) => {
    const st = stack[stack.length - 1]!;
    text.split('\n').forEach((p, i) => {
      if (i > 0) lines.push([]);
      if (p) lines[lines.length - 1]!.push({ text: p, style: st });
    });
  };
  const re = /<span class="([^"]*)">|<\/span>|&(amp|lt|gt|quot|#x27|#39);|[^<&]+|[<&]/g;
  for (const m of html.matchAll(re)) {
    if (m[1] !== undefined) stack.push(styleWithin(stack[stack.length - 1]!, m[1]));
    else if (m[0] === '</span>') {
      if (stack.length > 1) stack.pop();
    } else add(m[2] !== undefined ? ENTITIES[m[2]]! : m[0]);
  }
  return lines;
}

/** The style of a span of class `classes` inside one of style `outer`. */
function styleWithin(outer: Style, classes: string): Style {
  const cls = classes
    .split(' ')[0]!
    .replace(/^hljs-/, '')
    .replace(/_+$/, '');
  const own = CLASS_STYLES[cls] ?? CLASS_STYLES[cls.split('.')[0]!] ?? DEFAULT_STYLE;
  return own === DEFAULT_STYLE ? outer : mergeStyles(outer, own);
}
