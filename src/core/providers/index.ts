// Every wire dialect: kind string → wire adapter, and the endpoint URLs. What references
// DIALECTS (clm's createAgent, listModels, adapterFor, buildUrl) brings all of them into a bundle;
// a page's bundle that never uses DIALECTS holds only the adapters it names.

import type { ProviderKind } from '../types.js';
import type { ProviderAdapter } from './adapter.js';
import { openaiAdapter, ollamaAdapter } from './openai.js';
import { anthropicAdapter } from './anthropic.js';
import { anthropicRequestPieces } from './anthropic-pieces.js';
import { responsesRequestPieces } from './responses-pieces.js';
import { responsesAdapter } from './responses.js';
import { dialectFor, type DialectList } from './dialects.js';

export type { ProviderAdapter } from './adapter.js';
export { providerFromStr } from './dialects.js';
export { modelsUrl, propsUrl } from './endpoint-urls.js';

/**
 * Every dialect, one adapter per provider kind. Anthropic's and Responses' build their requests in
 * pieces here too (anthropic-pieces.ts, responses-pieces.ts), which a page that names one adapter
 * alone does without.
 */
export const DIALECTS: DialectList = [
  openaiAdapter,
  ollamaAdapter,
  // Pure: a bundle that never uses DIALECTS leaves every dialect out (a spread would be kept).
  /* @__PURE__ */ Object.assign({}, anthropicAdapter, { buildRequestPieces: anthropicRequestPieces }),
  /* @__PURE__ */ Object.assign({}, responsesAdapter, { buildRequestPieces: responsesRequestPieces }),
];

/** The adapter of a provider kind (unknown kinds: 'openai'). */
export function adapterFor(kind: ProviderKind): ProviderAdapter {
  return dialectFor(DIALECTS, kind);
}

/** Base URL (e.g. http://host/v1) + the dialect's endpoint path. */
export function buildUrl(base: string, kind: ProviderKind): string {
  return `${base.replace(/\/+$/, '')}/${adapterFor(kind).endpointPath}`;
}
