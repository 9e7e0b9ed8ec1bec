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
    case 'ollama':
    case 'anthropic':
    case 'openai-responses':
      return kind;
    default:
      return 'openai';
  }
}

export function adapterFor(kind: ProviderKind): ProviderAdapter {
  switch (kind) {
    case 'anthropic':
      return anthropicAdapter;
    case 'openai-responses':
      return responsesAdapter;
    case 'ollama':
      return ollamaAdapter;
    default:
      return openaiAdapter;
  }
}

/** Base URL (e.g. http://host/v1) + the dialect's endpoint path. */
export function buildUrl(base: string, kind: ProviderKind): string {
  return `${base.replace(/\/+$/, '')}/${adapterFor(kind).endpointPath}`;
}

/** What precedes the path (scheme://authority, or '' for a relative endpoint) and the path, without query or fragment. */
function splitEndpoint(endpoint: string): { origin: string; path: string } {
  const q = endpoint.replace(/[?#].*$/s, '');
  const origin = /^([a-z][a-z0-9+.-]*:)?\/\/[^/]*/i.exec(q)?.[0] ?? '';
  return { origin, path: q.slice(origin.length) };
}

/** The endpoint's folder: …/v1/chat/completions → …/v1, …/v1/messages → …/v1; null without a path. */
function endpointDir(path: string): string | null {
  if (path.endsWith('/chat/completions')) return path.slice(0, -'/chat/completions'.length);
  const slash = path.lastIndexOf('/');
  return slash < 0 ? null : path.slice(0, slash);
}

/** …/chat/completions → …/models; otherwise the last path segment is replaced (…/v1/messages → …/v1/models). */
export function modelsUrl(endpoint: string): string {
  const { origin, path } = splitEndpoint(endpoint);
  const dir = endpointDir(path);
  return dir === null ? origin + path : `${origin}${dir}/models`;
}

/**
 * llama.cpp serves /props beside its v1 folder: http://h:8080/v1/chat/completions →
 * http://h:8080/props. A path before it (a proxy's prefix) is kept: /llm/v1/… → /llm/props.
 */
export function propsUrl(endpoint: string): string {
  const { origin, path } = splitEndpoint(endpoint);
  const dir = (endpointDir(path) ?? '').replace(/\/v1$/i, '');
  return `${origin}${dir}/props`;
}
