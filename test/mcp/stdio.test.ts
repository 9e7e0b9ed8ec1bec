// stdio life cycle with test/fixtures/mcp/tool-server.mjs: crash and respawn (tools withdrawn
// then back), the restart budget, a command that does not exist, a server that never answers
// initialize, a slow server that joins after the bound, and close() stopping children.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectMcpServers, RestartBudget } from '../../src/mcp/index.js';
import { findTool, invoke, ToolsRecorder } from './helpers.js';
import { waitFor } from '../fixtures/run-cli.js';
import { alive as running } from '../fixtures/processes.js';
import { tempDir } from '../fixtures/temp-dir.js';

/** A bound on starting a server that a loaded machine never reaches; waitReady returns as soon as it is ready. */
const READY_MS = 60_000;

const fixture = fileURLToPath(new URL('../fixtures/mcp/tool-server.mjs', import.meta.url));
const node = process.execPath;
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('a crashed server is restarted: tools withdrawn, then back; the budget bounds restarts', async () => {
  const rec = new ToolsRecorder();
  const notices: string[] = [];
  const mcp = connectMcpServers([{ name: 'crashy', command: [node, fixture] }], {
    onToolsChanged: rec.onToolsChanged,
    onNotice: (t) => notices.push(t),
    restartBudget: () => new RestartBudget(1, 60_000), // one quick restart, then a long wait
  });
  try {
    assert.deepEqual((await mcp.waitReady(READY_MS)).ready, ['crashy']);
    const conn = mcp.get('crashy')!;
    const firstPid = conn.pid!;
    assert.ok(firstPid > 0);

    const gone = rec.next((n) => n.length === 0);
    const back = rec.next((n) => n.includes('mcp__crashy__echo') && rec.events.some((e) => e.names.length === 0));
    const r = await invoke(findTool(mcp.tools(), 'mcp__crashy__crash'));
    assert.deepEqual(r, { ok: false, text: 'MCP server disconnected' });
    await gone;
    await back;
    assert.equal(conn.state, 'ready');
    assert.notEqual(conn.pid, firstPid);
    assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__crashy__echo'), { text: 'again' }), { ok: true, text: 'again' });
    assert.deepEqual(notices, [
      'mcp: crashy: 8 tools registered',
      'mcp: crashy: server exited; restarting',
      'mcp: crashy: 8 tools registered',
    ]);

    // Budget spent: the next crash leaves it down, waiting for the next token.
    const gone2 = rec.next((n) => n.length === 0);
    await invoke(findTool(mcp.tools(), 'mcp__crashy__crash'));
    await gone2;
    assert.equal(conn.state, 'down');
    // The wait is what is left of the budget's 60 s window (less by however long this test ran).
    const wait = /^mcp: crashy: server exited; restarting in (\d+) s$/.exec(notices.at(-1) ?? '');
    assert.ok(wait && Number(wait[1]) >= 1 && Number(wait[1]) <= 60, notices.at(-1));
    assert.deepEqual(mcp.tools(), []);
  } finally {
    await mcp.close();
  }
});

test('a call through a withdrawn tool while the server is down fails cleanly', async () => {
  const rec = new ToolsRecorder();
  const mcp = connectMcpServers([{ name: 'c2', command: [node, fixture] }], {
    onToolsChanged: rec.onToolsChanged,
    restartBudget: () => new RestartBudget(0, 60_000),
  });
  try {
    await mcp.waitReady(READY_MS);
    const echo = findTool(mcp.tools(), 'mcp__c2__echo')!;
    const gone = rec.next((n) => n.length === 0);
    await invoke(findTool(mcp.tools(), 'mcp__c2__crash'));
    await gone;
    assert.deepEqual(await invoke(echo, { text: 'x' }), { ok: false, text: "MCP server 'c2' is not running" });
  } finally {
    await mcp.close();
  }
});

test('notifications/tools/list_changed replaces the tool set', async () => {
  const rec = new ToolsRecorder();
  const mcp = connectMcpServers([{ name: 'g', command: [node, fixture] }], { onToolsChanged: rec.onToolsChanged });
  try {
    await mcp.waitReady(READY_MS);
    const grown = rec.next((n) => n.includes('mcp__g__grown8'));
    assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__g__grow')), { ok: true, text: 'grown' });
    const names = await grown;
    assert.equal(names.length, 9);
    assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__g__echo'), { text: 'still' }), { ok: true, text: 'still' });
  } finally {
    await mcp.close();
  }
});

test('a command that does not exist fails at once with a clear message', async () => {
  const notices: string[] = [];
  const mcp = connectMcpServers([{ name: 'nope', command: ['clm-no-such-mcp-server-xyz', '--flag'] }], {
    onNotice: (t) => notices.push(t),
  });
  try {
    // A bound far past this file's deadline: returning at all shows the failure ended the wait.
    const report = await mcp.waitReady(3_600_000);
    assert.deepEqual(report.pending, []);
    assert.deepEqual(report.failed, [{ name: 'nope', error: 'failed to start (command not found: clm-no-such-mcp-server-xyz)' }]);
    assert.deepEqual(notices, ['mcp: nope: failed to start (command not found: clm-no-such-mcp-server-xyz)']);
    assert.equal(mcp.get('nope')!.state, 'failed');
  } finally {
    await mcp.close();
  }
});

test('a server that exits during initialize: the error says how it exited and the last it wrote to stderr', async () => {
  // It reads the initialize request, complains on stderr (more lines than are kept) and exits.
  const script = [
    "process.stdin.once('data', () => {",
    "  for (let i = 1; i <= 7; i++) process.stderr.write('line ' + i + '\\n');",
    "  process.stderr.write('fatal: no config at /etc/srv.toml');",
    '  process.exit(3);',
    '});',
  ].join('\n');
  const notices: string[] = [];
  const mcp = connectMcpServers([{ name: 'grumpy', command: [node, '-e', script] }], { onNotice: (t) => notices.push(t) });
  try {
    const report = await mcp.waitReady(READY_MS);
    const error =
      'connect failed (server exited during initialize, status 3; its stderr ends: line 4 | line 5 | line 6 | line 7 | fatal: no config at /etc/srv.toml)';
    assert.deepEqual(report.failed, [{ name: 'grumpy', error }]);
    assert.deepEqual(notices, [`mcp: grumpy: ${error}`]);
  } finally {
    await mcp.close();
  }
});

test('a server that never answers initialize: the wait is bounded, then a clear error', async () => {
  const notices: string[] = [];
  const mcp = connectMcpServers(
    [
      { name: 'mute', command: [node, fixture, '--silent'], timeout_ms: 400 },
      { name: 'mute-long', command: [node, fixture, '--silent'] },
    ],
    { onNotice: (t) => notices.push(t) },
  );
  try {
    const t0 = Date.now();
    const report = await mcp.waitReady(1200);
    const took = Date.now() - t0;
    assert.ok(took >= 1100, `waited only ${took} ms of the 1200 ms bound`);
    assert.deepEqual(report.failed, [{ name: 'mute', error: 'connect failed (no answer to initialize within 400 ms)' }]);
    assert.deepEqual(report.pending, ['mute-long']);
    assert.ok(notices.includes('mcp: mute: connect failed (no answer to initialize within 400 ms)'), notices.join('\n'));
    assert.ok(
      notices.includes('mcp: mute-long: not ready after 1.2 s; continuing without it (its tools are added when it is ready)'),
      notices.join('\n'),
    );
    await assert.rejects(mcp.get('mute')!.ready, /no answer to initialize within 400 ms/);
    // The failed server's child is gone; the pending one is stopped by close().
    const pid = mcp.get('mute-long')!.pid!;
    assert.ok(alive(pid));
    await mcp.close();
    assert.ok(!alive(pid), 'close() stops the child');
    await assert.rejects(mcp.get('mute-long')!.ready, /closed/);
  } finally {
    await mcp.close();
  }
});

test('a slow server not ready within the bound joins later with its tools', async () => {
  const rec = new ToolsRecorder();
  const notices: string[] = [];
  const mcp = connectMcpServers([{ name: 'late', command: [node, fixture, '--start-delay=700'] }], {
    onToolsChanged: rec.onToolsChanged,
    onNotice: (t) => notices.push(t),
  });
  try {
    const joined = rec.next((n) => n.length > 0);
    const report = await mcp.waitReady(100);
    assert.deepEqual(report.pending, ['late']);
    assert.deepEqual(mcp.tools(), []);
    const names = await joined;
    assert.ok(names.includes('mcp__late__echo'));
    assert.deepEqual(notices, [
      'mcp: late: not ready after 0.1 s; continuing without it (its tools are added when it is ready)',
      'mcp: late: 8 tools registered',
    ]);
  } finally {
    await mcp.close();
  }
});

test('close() fails calls in flight and stops the child promptly', async () => {
  const mcp = connectMcpServers([{ name: 'busy', command: [node, fixture] }], {});
  await mcp.waitReady(READY_MS);
  const pid = mcp.get('busy')!.pid!;
  const pending = invoke(findTool(mcp.tools(), 'mcp__busy__slow'), { ms: 10_000 });
  await new Promise((r) => setTimeout(r, 50));
  await mcp.close();
  // The call (a 10 s sleep) was failed by close, not answered; the child is gone when close returns.
  assert.deepEqual(await pending, { ok: false, text: 'MCP client closed' });
  assert.ok(!alive(pid));
  assert.deepEqual(mcp.tools(), []);
});

test('close() and killNow() end the server with its whole process group, signals ignored or not', async () => {
  const family = fileURLToPath(new URL('../fixtures/mcp/family-server.mjs', import.meta.url));
  const dir = tempDir('clm-mcp-family-');
  const pidsOf = (file: string) =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => Number(l.split(' ')[1]))
      : [];
  for (const end of ['close', 'killNow'] as const) {
    const file = join(dir, end);
    const mcp = connectMcpServers([{ name: 'fam', command: [node, family, file, '--ignore-signals'] }], {});
    try {
      await mcp.waitReady(READY_MS);
      await waitFor(() => pidsOf(file).length === 3, 'the family', 30_000);
      const pids = pidsOf(file);
      assert.ok(pids.every(running));
      if (end === 'close') await mcp.close();
      else mcp.killNow();
      await waitFor(() => !pids.some(running), `${end}(): the family ${pids.join(' ')} to end`, 30_000);
    } finally {
      await mcp.close();
    }
  }
});
