// MCP stdio servers and the sandbox: `sandbox = true` opts a server in (its process is confined
// like a command); a bad value, or a mode chosen that cannot be had, starts nothing; over HTTP
// the key is said to be ignored. The attempts an opted-in server makes are in the escape corpus.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseMcpServers } from '../../src/mcp/config.js';
import { connectMcpServers } from '../../src/mcp/index.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { call } from '../builtin-tools/fake-inv.js';
import { bwrapOrSkip } from '../fixtures/bwrap.js';
import { makeTrees } from '../sandbox/trees.js';

const SHELL_SERVER = fileURLToPath(new URL('../fixtures/mcp/shell-server.mjs', import.meta.url));

test('sandbox = true is read for stdio; a bad value skips the server; over HTTP it is ignored with a notice', () => {
  const { servers, errors } = parseMcpServers([
    { name: 'a', command: ['x'], sandbox: true },
    { name: 'b', command: ['x'] },
    { name: 'c', command: ['x'], sandbox: 'yes' },
    { name: 'd', transport: 'http', url: 'http://127.0.0.1:1/mcp', sandbox: true },
  ]);
  assert.deepEqual(
    servers.map((s) => [s.name, s.sandbox ?? false]),
    [
      ['a', true],
      ['b', false],
      ['d', false],
    ],
  );
  assert.deepEqual(errors, [
    "mcp: c: 'sandbox' must be true or false; skipped",
    "mcp: d: 'sandbox' applies to stdio servers only; ignored",
  ]);
});

async function serverRun(sb: Sandbox | null, command: string, cwd: string, sandbox = true) {
  const notices: string[] = [];
  const m = connectMcpServers([{ name: 's', command: [process.execPath, SHELL_SERVER], sandbox }], {
    confine: sb ? (r) => sb.confineServer(r) : undefined,
    onNotice: (n) => notices.push(n),
  });
  try {
    const ready = await m.waitReady(60_000);
    if (!ready.ready.includes('s')) return { text: null, notices: [...notices, ...ready.failed.map((f) => f.error)] };
    const tool = m.tools().find((t) => t.name === 'mcp__s__sh')!;
    return { text: (await call(tool, { command, cwd }, { timeoutMs: 30_000 }).result).text, notices };
  } finally {
    await m.close();
  }
}

test('an opted-in server runs confined; one not opted in runs as before', bwrapOrSkip(), async () => {
  const t = makeTrees();
  const sb = new Sandbox({ settings: { mode: 'workspace-write' }, cwd: t.ws, env: t.env });
  const cmd = `echo in > ${t.ws}/made; echo out > ${t.outside}/target; ls /proc | grep -c '^[0-9]'`;
  const inside = await serverRun(sb, cmd, t.ws);
  assert.match(inside.text!, /Read-only file system/);
  assert.equal(Number(/^(\d+)$/m.exec(inside.text!)?.[1]) < 10, true, 'only the sandbox processes are seen');
  const outside = await serverRun(sb, cmd, t.ws, false);
  assert.doesNotMatch(outside.text!, /Read-only file system/);
});

test('an opted-in server is not started where the mode was chosen and cannot be had', async () => {
  const t = makeTrees();
  const sb = new Sandbox({ settings: { mode: 'workspace-write' }, cwd: t.ws, env: { ...t.env, PATH: '/nonexistent' } });
  const r = await serverRun(sb, 'true', t.ws);
  assert.equal(r.text, null);
  assert.ok(
    r.notices.some((n) => /sandbox: workspace-write is not available \(bwrap \(bubblewrap\) is not installed\); nothing was run/.test(n)),
    r.notices.join('\n'),
  );
});
