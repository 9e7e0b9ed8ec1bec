// Which wire dialect speaks for a provider kind. An agent speaks the dialects it is given
// (AgentOptions.dialects): clm's createAgent gives it every one (providers/index.ts); clm/browser's
// takes those the page names, so the page's bundler leaves the others out.

import { ClmError } from '../errors.js';
import type { ProviderKind } from '../types.js';
import type { ProviderAdapter } from './adapter.js';

/** The dialects an agent of clm/browser speaks: at least one adapter. */
export type DialectList = readonly [ProviderAdapter, ...ProviderAdapter[]];

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

/** The dialect for `kind` (unknown or missing: 'openai') among `dialects`; ClmError EINVAL when none of them is. */
export function dialectFor(dialects: readonly ProviderAdapter[], kind: string | null | undefined): ProviderAdapter {
  const k = providerFromStr(kind);
  const d = dialects.find((a) => a.kind === k);
  if (!d) {
    const given = dialects.map((a) => a.kind).join(', ') || 'none';
    throw new ClmError('EINVAL', `provider '${k}' is not among the agent's dialects (${given}): give its adapter in AgentOptions.dialects`);
  }
  return d;
}

let defaults: readonly ProviderAdapter[] = [];

/** What `new Agent(…)` speaks when its options name no dialects: every one once clm (src/index.ts) is imported. */
export function defaultDialects(): readonly ProviderAdapter[] {
  return defaults;
}

export function setDefaultDialects(dialects: readonly ProviderAdapter[]): void {
  defaults = dialects;
}
