// Public API for browsers (pages and Workers): `import { createAgent, createFetchHost,
// openaiAdapter } from 'clm/browser'`. The portable core plus a Host over fetch; nothing here
// imports Node, Lua or MCP. An agent speaks the dialects the page names, so the page's bundler
// keeps those adapters and leaves the others out; what needs every dialect at once (adapterFor,
// buildUrl, listModels(host, endpoint)) is not here.

import { Agent, type AgentOptions } from './core/agent.js';
import { ClmError } from './core/errors.js';
import type { Host } from './core/host.js';
import type { DialectList } from './core/providers/dialects.js';
import type { AgentConfig } from './core/agent-config.js';
import type { AgentCallbacks } from './core/types.js';

export * from './portable-api.js';
export { DIALECTS } from './core/providers/index.js';
export { createFetchHost, type FetchHostOptions } from './browser/fetch-host.js';

/**
 * A new Agent speaking the dialects in `opts.dialects` alone (`cfg.provider` picks one of them):
 * e.g. `{ dialects: [openaiAdapter] }`, or `{ dialects: DIALECTS }` for a page that lets the user choose.
 */
export function createAgent(
  cfg: AgentConfig,
  host: Host,
  callbacks: AgentCallbacks | undefined,
  opts: AgentOptions & { dialects: DialectList },
): Agent {
  // A page without a type checker gets told what to pass, rather than an agent that speaks nothing.
  const dialects: unknown = (opts as Partial<AgentOptions> | null | undefined)?.dialects;
  if (!Array.isArray(dialects) || dialects.length === 0)
    throw new ClmError(
      'EINVAL',
      "clm/browser's createAgent needs opts.dialects, the wire dialects the page speaks: e.g. { dialects: [openaiAdapter] }, or DIALECTS for every one",
    );
  return new Agent(cfg, host, callbacks, opts);
}
