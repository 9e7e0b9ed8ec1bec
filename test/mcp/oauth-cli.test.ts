// The real `clm` with an OAuth-protected MCP server on loopback: a run before the login (one-shot,
// REPL) says the server needs one and offers none of its tools; `clm mcp login` drives the "browser" (a BROWSER
// script that fetches the URL) through the loopback callback; the tool works in the next run;
// no token reaches the session file or the debug log; `clm mcp logout` revokes and forgets.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as oa from '../fixtures/openai-replies.js';
import { cliSuite } from '../fixtures/cli-suite.js';
import { startOAuthMcp } from '../fixtures/oauth-server.js';
import { runCli, show, spawnCli, waitFor, type RunOptions } from '../fixtures/run-cli.js';

const srv = await startOAuthMcp();
after(() => srv.close());
const { mock, dirs, run } = await cliSuite({
  setup: (d) => d.write('config.lua', `return { mcp_servers = { { name = "remote", transport = "http", url = "${srv.mcpUrl}" } } }\n`),
});
const BROWSER = `${process.execPath} ${fileURLToPath(new URL('../fixtures/oauth-browser.mjs', import.meta.url))}`;

/** Every file under `dir` but the logins, with its text. */
function filesUnder(dir: string, skip: string): [string, string][] {
  const out: [string, string][] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath, e.name);
    if (e.isFile() && !p.startsWith(skip)) out.push([p, readFileSync(p, 'utf8')]);
  }
  return out;
}

/** `clm mcp …`: the command comes first, without the suite's leading -u and -p. */
const mcpCmd = (args: string[], env: RunOptions['env'] = {}) => runCli(['mcp', ...args], { dirs, env });

const toolNames = (i: number): string[] => (mock.posts[i]!.json.tools ?? []).map((t: { function: { name: string } }) => t.function.name);

test('needs login, then clm mcp login through the browser, the tool in a run, no token in session or log, logout', async () => {
  mock.push(oa.text('no tools yet'));
  const before = await run(['-S', '-o', 'hi']);
  assert.equal(before.code, 0, show(before));
  assert.match(before.stderr, /^notice: mcp: remote: needs login — run clm mcp login remote$/m);
  assert.ok(!toolNames(0).some((n) => n.startsWith('mcp__')), toolNames(0).join(' '));
  const repl = await run(['-H'], { input: 'quit\n' });
  assert.equal(repl.code, 0, show(repl));
  assert.match(repl.stderr, /^notice: mcp: remote: needs login — run clm mcp login remote$/m, 'the REPL says so too');

  const login = await mcpCmd(['login', 'remote'], { BROWSER });
  assert.equal(login.code, 0, show(login));
  assert.match(
    login.stdout,
    /^mcp: remote: the browser is open for the login; if it did not come up, open:\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?/m,
  );
  assert.match(login.stdout, /^mcp: remote: logged in$/m);
  const logins = join(dirs.sessions, 'mcp-oauth');
  const [file] = readdirSync(logins);
  assert.equal(statSync(join(logins, file!)).mode & 0o777, 0o600);
  assert.equal(srv.stats.codeGrants, 1);

  const log = join(dirs.root, 'debug.log');
  mock.push(oa.toolCall('mcp__remote__echo', { text: 'through oauth' }, 'e1'), oa.text('done'));
  const first = mock.posts.length;
  const r = await run(['-S', '-o', 'call it'], { env: { CLM_DEBUG_LOG: log } });
  assert.equal(r.code, 0, show(r));
  assert.ok(toolNames(first).includes('mcp__remote__echo'), show(r));
  const result = mock.posts[first + 1]!.json.messages.find((m: { role: string }) => m.role === 'tool');
  assert.equal(result.content, 'through oauth');
  const tokens = [...srv.issued.access, ...srv.issued.refresh];
  const written = [...filesUnder(dirs.state, logins), [log, readFileSync(log, 'utf8')] as [string, string]];
  assert.ok(
    written.some(([p]) => p.endsWith('.jsonl')),
    'a session file was written',
  );
  for (const [p, text] of written) for (const t of tokens) assert.ok(!text.includes(t), `a token in ${p}`);

  const out = await mcpCmd(['logout', 'remote']);
  assert.equal(out.code, 0, show(out));
  assert.equal(out.stdout, 'mcp: remote: logged out (tokens revoked at the authorization server)\n');
  assert.deepEqual(readdirSync(logins), []);
});

test('clm mcp login: an unknown server, a usage error, the browser never coming back', async () => {
  const unknown = await mcpCmd(['login', 'nope']);
  assert.equal(unknown.code, 2, show(unknown));
  assert.equal(unknown.stderr, "clm: no MCP server 'nope' in mcp_servers (configured: remote)\n");
  const usage = await mcpCmd(['login']);
  assert.equal(usage.code, 2, show(usage));
  assert.match(usage.stderr, /^clm: mcp login needs the name of a server in mcp_servers$/m);
  // No display and no BROWSER: the URL is printed for the person.
  const cli = spawnCli(['mcp', 'login', 'remote'], { dirs, env: { BROWSER: undefined, DISPLAY: undefined, WAYLAND_DISPLAY: undefined } });
  await waitFor(() => /waiting for the browser/.test(cli.stdout), 'the login to wait');
  assert.match(cli.stdout, /^mcp: remote: open this address in a browser to log in:\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?/m);
  cli.child.kill('SIGINT');
  assert.equal((await cli.result).code, 130);
});
