// The real UI on a pty with an OAuth-protected MCP server: the status bar says the server needs a
// login, `/mcp login NAME` logs in through the browser (a BROWSER script) and the loopback
// callback, and the bar no longer says so once the server is connected.
import { test, after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { uiSuite } from '../fixtures/ui-suite.js';
import { startOAuthMcp } from '../fixtures/oauth-server.js';

const srv = await startOAuthMcp();
after(() => srv.close());
const ui = await uiSuite({
  config: (m) => `return {
  model = "mock/mock-model",
  providers = { mock = { kind = "openai", url = "${m.base}" } },
  mcp_servers = { { name = "remote", transport = "http", url = "${srv.mcpUrl}" } },
}
`,
});
const BROWSER = `${process.execPath} ${fileURLToPath(new URL('../fixtures/oauth-browser.mjs', import.meta.url))}`;

test('the status bar says a server needs login until /mcp login NAME has logged in', async (t) => {
  const s = await ui.open(t, [], { env: { BROWSER } });
  await s.waitFor('[mcp: remote needs login]', 'the status bar naming the server');
  await s.waitFor('mcp: remote: needs login — run clm mcp login remote', 'the notice');
  s.type('/mcp login remote\r');
  await s.waitFor('[mcp: remote: logged in; connected, 8 tools]', 'the login');
  await s.waitFor((x) => !x.text().includes('needs login]'), 'the status bar without it');
});
