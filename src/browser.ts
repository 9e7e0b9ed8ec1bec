// Public API for browsers (pages and Workers): `import { createAgent, createFetchHost } from 'clm/browser'`.
// The portable core plus a Host over fetch; nothing here imports Node, Lua or MCP.

export * from './index.js';
export { createFetchHost, type FetchHostOptions } from './browser/fetch-host.js';
