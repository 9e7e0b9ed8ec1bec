// OAuth stays off the start-up path: the CLI's entry, one-shot, REPL and UI chunks, and the MCP
// client's own, do not load src/mcp/mcp-oauth.ts (or its listener and store) before a configured
// HTTP server without an api_key needs it; `clm mcp login` imports it lazily too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bundleGraph } from '../fixtures/bundle-graph.js';

test('mcp-oauth.ts, oauth-callback.ts and oauth-store.ts are only ever imported lazily', async () => {
  const { holding, closure } = await bundleGraph();
  const oauth = (i: string) => /^src\/mcp\/(mcp-oauth|oauth-callback|oauth-store|open-browser)\.ts$/.test(i);
  for (const input of ['src/cli/main.ts', 'src/cli/oneshot.ts', 'src/cli/repl.ts', 'src/cli/ui/app.ts', 'src/mcp/index.ts']) {
    const chunk = holding(input);
    assert.ok(chunk, `no chunk holds ${input}`);
    assert.deepEqual(closure(chunk).filter(oauth), [], `${input} loads OAuth`);
  }
  assert.ok(holding('src/mcp/mcp-oauth.ts'), 'mcp-oauth.ts is in the bundle');
});
