// The parameters JSON a tool is advertised with, shared by every dialect. MCP servers send
// schemas with a top-level `$schema` (often draft-07); Anthropic validates input_schema as JSON
// Schema 2020-12 and has failed whole requests over a draft-07 `$schema`
// (anthropics/anthropic-sdk-python#1001), strict OpenAI-compatible validators reject unknown
// keywords, and the model gains nothing from it. So it is dropped when serialising — once per
// ToolSchema (cached), keeping the bytes of `parametersJson` otherwise, so every request
// reuses the identical string and prefixes stay byte-stable.

import type { ToolSchema } from './adapter.js';

const cache = new WeakMap<ToolSchema, string>();

/** `t.parametersJson` without a top-level `$schema` key (the same string when it has none). */
export function parametersWireJson(t: ToolSchema): string {
  let s = cache.get(t);
  if (s !== undefined) return s;
  s = t.parametersJson;
  // Cheap test first: nearly every schema has no "$schema" anywhere.
  if (s.includes('"$schema"')) {
    try {
      const o: unknown = JSON.parse(s);
      if (o !== null && typeof o === 'object' && !Array.isArray(o) && '$schema' in o) {
        const rest: Record<string, unknown> = { ...o };
        delete rest.$schema;
        s = JSON.stringify(rest);
      }
    } catch {
      /* not JSON: sent as given, as before */
    }
  }
  cache.set(t, s);
  return s;
}
