// The highlighter thread (highlight-thread.ts): highlight.js with the same languages as the main
// thread, answering one block at a time with its HTML; it says when it is ready for them.

import { parentPort } from 'node:worker_threads';
import hljs from 'highlight.js/lib/core';
import { ALIASES, LANGUAGES } from './highlight-languages.js';
import type { HighlightReply, HighlightRequest } from './highlight-thread.js';

for (const [name, language] of LANGUAGES) hljs.registerLanguage(name, language);
for (const [alias, name] of ALIASES) hljs.registerAliases(alias, { languageName: name });

parentPort?.on('message', ({ id, code, lang }: HighlightRequest) => {
  let html: string | null = null;
  try {
    if (hljs.getLanguage(lang)) html = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  } catch {
    // A grammar that fails on this code: it stays plain.
  }
  parentPort?.postMessage({ t: 'html', id, html } satisfies HighlightReply);
});
parentPort?.postMessage({ t: 'ready' } satisfies HighlightReply);
