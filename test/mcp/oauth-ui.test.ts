// The interactive screen's `/mcp` with an OAuth-protected server, over the real runtime: the
// server needs a login and says so (its tools not offered), `/mcp login NAME` drives the browser
// (a BROWSER script) through the loopback callback and connects it again, and the tokens are
// masked in what the screen shows.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runtimeSuite } from '../fixtures/command-context.js';
import { startOAuthMcp } from '../fixtures/oauth-server.js';
import { waitFor } from '../fixtures/run-cli.js';
import { runCommand } from '../../src/cli/ui/commands.js';
import { complete } from '../../src/cli/ui/completion.js';

const s = runtimeSuite();
const srv = await startOAuthMcp();
after(() => srv.close());
const BROWSER = `${process.execPath} ${fileURLToPath(new URL('../fixtures/oauth-browser.mjs', import.meta.url))}`;

const rowOf = (text: string, name: string) =>
  text
    .split('\n')
    .map((l) => l.trim().split(/ {2,}/))
    .find((r) => r[0] === name);

test('/mcp shows a server that needs login; /mcp login NAME logs in and connects it; its tokens are masked', async () => {
  s.dirs.write(
    'config.lua',
    `return { model = "m/x", providers = { m = { url = "${s.mock.base}" } },
  mcp_servers = { { name = "remote", transport = "http", url = "${srv.mcpUrl}" } } }\n`,
  );
  const { rt, ctx, printed, texts } = await s.start([], { env: { BROWSER } });
  await waitFor(() => rt.mcpServers().every((x) => x.state !== 'connecting'), 'the server up or failed');
  await runCommand('/mcp', ctx);
  assert.deepEqual(rowOf(printed.at(-1)!.text, 'remote'), ['remote', 'http', '0 tools', 'needs login — run clm mcp login remote']);
  assert.ok(!rt.agent.toolNames.some((n) => n.startsWith('mcp__')));
  assert.deepEqual(complete('/mcp lo', ctx).now, { replace: 2, insert: 'login ', candidates: [] });

  await runCommand('/mcp login remote', ctx);
  assert.match(
    texts().join('\n'),
    /^\[mcp: remote: the browser is open for the login; if it did not come up, open:\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?/m,
  );
  assert.deepEqual(printed.at(-1), { text: '[mcp: remote: logged in; connected, 8 tools]', kind: 'notice' });
  assert.ok(rt.agent.toolNames.includes('mcp__remote__echo'), rt.agent.toolNames.join(' '));
  for (const t of [...srv.issued.access, ...srv.issued.refresh]) assert.equal(rt.secrets.mask(`x ${t} y`), 'x [REDACTED] y');

  await runCommand('/mcp login nope', ctx);
  assert.deepEqual(printed.at(-1), { text: "mcp: nope: login failed: no MCP server 'nope' (configured: remote)", kind: 'error' });
});
