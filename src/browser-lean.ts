// Public API for a browser page that names its dialects: `import { createAgent, createFetchHost,
// openaiAdapter } from 'clm/browser/lean'`. The same as clm/browser, but an agent speaks only the
// dialects given in `opts.dialects`, so the page's bundler leaves the others out.

import { Agent, type AgentOptions } from './core/agent.js';
import type { ProviderAdapter } from './core/providers/adapter.js';
import type { AgentCallbacks, AgentConfig } from './core/types.js';
import type { Host } from './core/host.js';

export * from './portable-api.js';
export { createFetchHost, type FetchHostOptions } from './browser/fetch-host.js';

/** createAgent of clm/browser for the dialects in `opts.dialects` alone (`cfg.provider` picks one of them). */
export function createAgent(
  cfg: AgentConfig,
  host: Host,
  callbacks: AgentCallbacks | undefined,
  opts: AgentOptions & { dialects: readonly ProviderAdapter[] },
): Agent {
  return new Agent(cfg, host, callbacks, opts);
}
