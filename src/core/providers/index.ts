// Provider registry: kind string → wire adapter, endpoint URLs.

import type { ProviderKind } from '../types.js';
import type { ProviderAdapter } from './adapter.js';
import { openaiAdapter, ollamaAdapter } from './openai.js';
import { anthropicAdapter } from './anthropic.js';
import { responsesAdapter } from './responses.js';

export type { ProviderAdapter } from './adapter.js';

/** clm_provider_from_str: unknown or missing kinds map to 'openai'. */
export function providerFromStr(kind: string | null | undefined): ProviderKind {
  switch (kind) {
    case 'ollama': case 'anthropic': case 'openai-responses': return kind;
    default: return 'openai';
  }
}

export function adapterFor(kind: ProviderKind): ProviderAdapter {
  switch (kind) {
    case 'anthropic': return anthropicAdapter;
    case 'openai-responses': return responsesAdapter;
    case 'ollama': return ollamaAdapter;
    default: return openaiAdapter;
  }
}

/** Base URL (e.g. http://host/v1) + the dialect's endpoint path. */
export function buildUrl(base: string, kind: ProviderKind): string {
  return `${base.replace(/\/+$/, '')}/${adapterFor(kind).endpointPath}`;
}

/** …/chat/completions → …/models; otherwise the last path segment is replaced (…/v1/messages → …/v1/models). */
export function modelsUrl(endpoint: string): string {
  const q = endpoint.replace(/[?#].*$/, '');
  if (q.endsWith('/chat/completions')) return q.slice(0, -'/chat/completions'.length) + '/models';
  const slash = q.lastIndexOf('/');
  if (slash <= q.indexOf('//') + 1) return q;
  return q.slice(0, slash) + '/models';
}

/** llama.cpp /props lives at the server root. */
export function propsUrl(endpoint: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]+)/i.exec(endpoint);
  return (m ? m[1] : endpoint.replace(/\/+$/, '')) + '/props';
}
