// OAuth for HTTP MCP servers, end to end against a real authorization server and a protected MCP
// server on loopback (test/fixtures/oauth-server.ts): login through the loopback callback, the
// tools after it, refresh before expiry, a revoked login sending the person back to login, a
// wrong `state` refused, the file's mode, and the bad cases (server down, silent, malformed
// metadata, a login never completed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { execFileSync } from 'node:child_process';
import { connectMcpServers, type McpServerSpec } from '../../src/mcp/index.js';
import { login, logout } from '../../src/mcp/mcp-oauth.js';
import { startCallbackListener } from '../../src/mcp/oauth-callback.js';
import { OAuthStore } from '../../src/mcp/oauth-store.js';
import { browserCommand, openBrowser } from '../../src/mcp/open-browser.js';
import { startOAuthMcp, type OAuthMcpServer } from '../fixtures/oauth-server.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { findTool, invoke } from './helpers.js';

const READY_MS = 60_000;

const specOf = (srv: OAuthMcpServer, timeoutMs = 5000): McpServerSpec => ({
  name: 'remote',
  transport: 'http',
  command: [],
  url: srv.mcpUrl,
  timeoutMs,
});

/** The "browser": fetches the authorization URL and follows its redirect to the loopback listener. */
const fetchingBrowser =
  (seen: string[] = []) =>
  async (url: string) => {
    seen.push(url);
    void fetch(url).then(
      (r) => r.text(),
      () => {},
    );
    return true;
  };

async function loggedIn(srv: OAuthMcpServer, stateDir: string, say: string[] = []) {
  await login(specOf(srv), { stateDir, open: fetchingBrowser(), say: (t) => say.push(t), timeoutMs: 30_000 });
}

test('login through the loopback callback; the tools work after it; the file is 0600 and holds the tokens', async () => {
  const srv = await startOAuthMcp();
  const dir = tempDir('clm-oauth-');
  const notices: string[] = [];
  try {
    // Before the login: the server says it needs one, and offers no tools.
    const before = connectMcpServers([{ name: 'remote', transport: 'http', url: srv.mcpUrl, timeout_ms: 5000 }], {
      oauth: { stateDir: dir },
      onNotice: (t) => notices.push(t),
    });
    const r0 = await before.waitReady(READY_MS);
    await before.close();
    assert.deepEqual(r0.ready, []);
    assert.equal(before.connections[0]!.state, 'closed');
    assert.ok(notices.includes('mcp: remote: needs login — run clm mcp login remote'), notices.join('\n'));

    const said: string[] = [];
    await loggedIn(srv, dir, said);
    assert.equal(srv.stats.registrations, 1);
    assert.equal(srv.stats.codeGrants, 1);
    assert.match(said.join('\n'), /browser is open/);
    const store = new OAuthStore(dir, 'remote', srv.mcpUrl);
    assert.equal(statSync(store.file).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'mcp-oauth')).mode & 0o777, 0o700);
    assert.equal(store.load()?.tokens?.access_token, srv.issued.access[0]);

    const secrets: string[] = [];
    const mcp = connectMcpServers([{ name: 'remote', transport: 'http', url: srv.mcpUrl, timeout_ms: 5000 }], {
      oauth: { stateDir: dir, onSecret: (v) => secrets.push(v) },
    });
    try {
      assert.deepEqual((await mcp.waitReady(READY_MS)).ready, ['remote']);
      assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__remote__echo'), { text: 'with a token' }), {
        ok: true,
        text: 'with a token',
      });
      assert.ok(secrets.includes(srv.issued.access[0]!) && secrets.includes(srv.issued.refresh[0]!), 'the tokens are masked');
    } finally {
      await mcp.close();
    }
  } finally {
    await srv.close();
  }
});

test('an expired access token is refreshed before the request, without asking; the rotated tokens are saved', async () => {
  const srv = await startOAuthMcp({ accessTtlS: 1 });
  const dir = tempDir('clm-oauth-');
  try {
    await loggedIn(srv, dir);
    srv.accessTtlS = 3600;
    await new Promise((r) => setTimeout(r, 1100));
    const mcp = connectMcpServers([{ name: 'remote', transport: 'http', url: srv.mcpUrl, timeout_ms: 5000 }], { oauth: { stateDir: dir } });
    try {
      assert.deepEqual((await mcp.waitReady(READY_MS)).ready, ['remote']);
      assert.equal(srv.stats.refreshGrants, 1);
      assert.equal(srv.stats.unauthorized, 0, 'refreshed before the server had to refuse the old token');
      assert.ok(!srv.stats.served.includes(srv.issued.access[0]!), 'the expired token was not sent');
      // Expired at the server before its time: the 401 brings one refresh, and the call goes through.
      srv.expireAccess();
      assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__remote__echo'), { text: 'again' }), { ok: true, text: 'again' });
      assert.equal(srv.stats.refreshGrants, 2);
      assert.equal(new OAuthStore(dir, 'remote', srv.mcpUrl).load()?.tokens?.refresh_token, srv.issued.refresh[2]);
    } finally {
      await mcp.close();
    }
  } finally {
    await srv.close();
  }
});

test('a revoked login sends the person back to login: the call says so, the tools go, the tokens are forgotten', async () => {
  const srv = await startOAuthMcp();
  const dir = tempDir('clm-oauth-');
  const notices: string[] = [];
  try {
    await loggedIn(srv, dir);
    const mcp = connectMcpServers([{ name: 'remote', transport: 'http', url: srv.mcpUrl, timeout_ms: 5000 }], {
      oauth: { stateDir: dir },
      onNotice: (t) => notices.push(t),
    });
    try {
      assert.deepEqual((await mcp.waitReady(READY_MS)).ready, ['remote']);
      srv.revokeAll();
      const r = await invoke(findTool(mcp.tools(), 'mcp__remote__echo'), { text: 'x' });
      assert.equal(r.ok, false);
      assert.equal(
        r.text,
        "MCP server 'remote': the login is no longer accepted (the authorization server refused the refresh: invalid_grant) — run clm mcp login remote",
      );
      const c = mcp.get('remote')!;
      assert.equal(c.state, 'needs-login');
      assert.deepEqual(mcp.tools(), []);
      assert.ok(
        notices.some((n) => /^mcp: remote: the login is no longer accepted/.test(n)),
        notices.join('\n'),
      );
      const rec = new OAuthStore(dir, 'remote', srv.mcpUrl).load();
      assert.ok(rec && !rec.tokens && rec.client, 'the tokens are forgotten, the registration kept');
      // Logged in again, a reconnect brings the tools back.
      await loggedIn(srv, dir);
      assert.equal(srv.stats.registrations, 1, 'the registration is used again');
      await c.reconnect();
      assert.equal(c.state, 'ready');
      assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__remote__echo'), { text: 'back' }), { ok: true, text: 'back' });
    } finally {
      await mcp.close();
    }
  } finally {
    await srv.close();
  }
});

test('a wrong state is refused with a clear message and no token is stored', async () => {
  const srv = await startOAuthMcp();
  const dir = tempDir('clm-oauth-');
  try {
    srv.mode = 'wrong-state';
    await assert.rejects(loggedIn(srv, dir), {
      message: 'the answer to the login did not carry the state this login sent; refused, nothing stored',
    });
    assert.equal(srv.stats.codeGrants, 0);
    assert.equal(new OAuthStore(dir, 'remote', srv.mcpUrl).load()?.tokens, undefined);
  } finally {
    await srv.close();
  }
});

test('logout revokes the tokens at the authorization server and removes the file', async () => {
  const srv = await startOAuthMcp();
  const dir = tempDir('clm-oauth-');
  try {
    await loggedIn(srv, dir);
    assert.equal(await logout(specOf(srv), { stateDir: dir }), 'mcp: remote: logged out (tokens revoked at the authorization server)');
    assert.equal(srv.stats.revocations, 2);
    assert.deepEqual(readdirSync(join(dir, 'mcp-oauth')), []);
    assert.equal(await logout(specOf(srv), { stateDir: dir }), 'mcp: remote: not logged in');
  } finally {
    await srv.close();
  }
});

test('bad input: the authorization server down, silent, or with malformed metadata; a login never completed', {
  timeout: 120_000,
}, async () => {
  const srv = await startOAuthMcp();
  const dir = tempDir('clm-oauth-');
  try {
    srv.mode = 'malformed-metadata';
    await assert.rejects(login(specOf(srv), { stateDir: dir, open: fetchingBrowser(), say: () => {} }), (e: Error) => {
      assert.equal(
        // Node 22 and later add where the fault is, as line and column, to V8's message.
        e.message.replace(/ \(line \d+ column \d+\)\)$/, ')'),
        `${srv.asUrl}/.well-known/oauth-authorization-server: the answer is not JSON (Expected ',' or '}' after property value in JSON at position 65)`,
      );
      return true;
    });
    srv.mode = 'silent';
    await assert.rejects(login(specOf(srv, 300), { stateDir: dir, open: fetchingBrowser(), say: () => {} }), {
      message: `${srv.asUrl} did not answer within 300 ms`,
    });
    srv.mode = 'ok';
    // The browser never comes back: the listener closes after its time, and says so.
    const said: string[] = [];
    await assert.rejects(login(specOf(srv), { stateDir: dir, open: async () => false, say: (t) => said.push(t), timeoutMs: 300 }), {
      message: 'no answer from the browser within 300 ms; the login listener is closed',
    });
    assert.match(said.join('\n'), /open this address in a browser to log in:\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
  } finally {
    await srv.close();
  }
  // Down: nothing listens on the authorization server's port any more.
  await assert.rejects(login(specOf(srv), { stateDir: dir, open: fetchingBrowser(), say: () => {} }), (e: Error) => {
    assert.match(e.message, /^cannot reach http:\/\/127\.0\.0\.1:\d+ \(.*ECONNREFUSED.*\)$/);
    return true;
  });
});

test('the callback listener: another path is not found, an error answer ends the login, a taken port falls back', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const taken = (blocker.address() as { port: number }).port;
  try {
    const l = await startCallbackListener({ state: 's1', timeoutMs: 10_000, port: taken });
    assert.notEqual(new URL(l.redirectUrl).port, String(taken));
    assert.equal((await fetch(new URL('/other', l.redirectUrl))).status, 404);
    const res = await fetch(`${l.redirectUrl}?state=s1&error=access_denied&error_description=no%20thanks`);
    assert.equal(res.status, 400);
    await assert.rejects(l.answer, { message: 'the authorization server refused: access_denied (no thanks)' });
  } finally {
    blocker.close();
  }
});

test('the login file of another URL, or a FIFO in its place, counts as none (no hang)', () => {
  const dir = tempDir('clm-oauth-');
  const a = new OAuthStore(dir, 'remote', 'http://127.0.0.1:1/mcp');
  a.save({ v: 1, url: 'http://127.0.0.1:1/mcp', tokens: { access_token: 'tok-a', token_type: 'Bearer' } });
  assert.equal(new OAuthStore(dir, 'remote', 'http://127.0.0.1:2/mcp').load(), null);
  assert.equal(a.load()?.tokens?.access_token, 'tok-a');
  assert.match(readFileSync(a.file, 'utf8'), /tok-a/);
  const fifo = new OAuthStore(dir, 'piped', 'http://127.0.0.1:1/mcp');
  execFileSync('mkfifo', [fifo.file]);
  assert.equal(fifo.load(), null);
  fifo.save({ v: 1, url: 'http://127.0.0.1:1/mcp', tokens: { access_token: 'tok-b', token_type: 'Bearer' } });
  assert.equal(fifo.load()?.tokens?.access_token, 'tok-b', 'a login replaces it');
});

test('the browser: BROWSER (with %s or the URL last), open on macOS, xdg-open with a display, else none; only http(s) is opened', async () => {
  const url = 'https://as.example/authorize?x=1';
  assert.deepEqual(browserCommand(url, { BROWSER: 'firefox --new-tab' }), ['firefox', '--new-tab', url]);
  assert.deepEqual(browserCommand(url, { BROWSER: 'w3m %s -dump' }), ['w3m', url, '-dump']);
  assert.deepEqual(browserCommand(url, {}, 'darwin'), ['open', url]);
  assert.deepEqual(browserCommand(url, { DISPLAY: ':0' }, 'linux'), ['xdg-open', url]);
  assert.equal(browserCommand(url, {}, 'linux'), null, 'no display: the URL is printed instead');
  // A program started on the address: it records that it ran, and what it got.
  const dir = tempDir('clm-browser-');
  const marker = join(dir, 'ran');
  const script = join(dir, 'browser.mjs');
  writeFileSync(
    script,
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, process.argv[2] + '\\n' + (process.env.CLM_API_KEY ?? 'no key'));\n`,
  );
  const env = { ...process.env, BROWSER: `${process.execPath} ${script}`, CLM_API_KEY: 'sk-secret-key' };
  assert.equal(await openBrowser('file:///etc/passwd', env), false, 'a file: address from a server is not opened');
  assert.equal(await openBrowser('http://127.0.0.1:1/authorize', env), true);
  for (let i = 0; i < 500 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(readFileSync(marker, 'utf8'), 'http://127.0.0.1:1/authorize\nno key', 'the browser gets the URL and not the API key');
});

test('a refresh the authorization server does not answer ends the connect with a clear error; the login is kept', async () => {
  const srv = await startOAuthMcp({ accessTtlS: 1 });
  const dir = tempDir('clm-oauth-');
  const notices: string[] = [];
  try {
    await loggedIn(srv, dir);
    await new Promise((r) => setTimeout(r, 1100));
    srv.mode = 'silent';
    const mcp = connectMcpServers([{ name: 'remote', transport: 'http', url: srv.mcpUrl, timeout_ms: 1000 }], {
      oauth: { stateDir: dir },
      onNotice: (t) => notices.push(t),
    });
    try {
      assert.deepEqual((await mcp.waitReady(READY_MS)).ready, []);
      assert.equal(mcp.get('remote')!.state, 'failed');
      assert.ok(
        notices.includes(
          `mcp: remote: connect failed (initialize: refreshing the access token failed: ${srv.asUrl} did not answer within 500 ms)`,
        ),
        notices.join('\n'),
      );
      assert.equal(new OAuthStore(dir, 'remote', srv.mcpUrl).load()?.tokens?.refresh_token, srv.issued.refresh[0], 'the login is kept');
    } finally {
      await mcp.close();
    }
  } finally {
    await srv.close();
  }
});
