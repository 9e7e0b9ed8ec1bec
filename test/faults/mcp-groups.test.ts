// Fault battery, MCP stdio servers and what they start: a server runs in a process group of its
// own, which clm ends with it however clm ends — a normal exit, Ctrl-C, SIGTERM, SIGHUP — even
// when the server and its family ignore every signal but SIGKILL. Reached: a child in the
// server's group and that child's background job (a grandchild).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { REPO, show, waitFor } from '../fixtures/run-cli.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { alive } from '../fixtures/processes.js';
import { tally } from '../fixtures/tally.js';

const SERVER = join(REPO, 'test', 'fixtures', 'mcp', 'family-server.mjs');
const { mock, dirs, run, spawn } = await faultSuite();

const pidFile = () => join(dirs.root, 'family');
/** role → pid, from the server's pid file. */
const family = (): Map<string, number> => {
  const m = new Map<string, number>();
  if (!existsSync(pidFile())) return m;
  for (const line of readFileSync(pidFile(), 'utf8').split('\n')) {
    const [role, pid] = line.split(' ');
    if (role && pid) m.set(role, Number(pid));
  }
  return m;
};

function serverConfig(ignoreSignals: boolean): void {
  const command = ['node', SERVER, pidFile(), ...(ignoreSignals ? ['--ignore-signals'] : [])].map((a) => JSON.stringify(a)).join(', ');
  dirs.write(
    'config.lua',
    `return {
  tools = { web_search = { api_key = clm.secrets.search } },
  mcp_ready_timeout_ms = 60000,
  mcp_servers = { { name = "fam", command = { ${command} } } },
}\n`,
  );
}

async function allGone(): Promise<void> {
  const pids = family();
  assert.deepEqual([...pids.keys()].sort(), ['child', 'grandchild', 'server']);
  await waitFor(() => [...pids.values()].every((p) => !alive(p)), `the server's family ${[...pids.values()].join(' ')} to end`, 30_000);
}

for (const ignoreSignals of [false, true]) {
  const who = ignoreSignals ? 'a server whose family ignores SIGTERM, SIGINT and SIGHUP' : 'a server with a child and a grandchild';
  test(`${who}: all of it ends when clm exits normally`, async () => {
    serverConfig(ignoreSignals);
    mock.push(oa.text('done'));
    const r = await run(['-o', 'hi'], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stdout, 'done\n');
    await allGone();
    tally('faults', 1);
  });

  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    test(`${who}: all of it ends when ${sig} ends clm (${code})`, async () => {
      serverConfig(ignoreSignals);
      mock.push({ hang: true });
      const c = spawn(['-o', 'hi', '--output-format', 'json'], { timeoutMs: 60_000 });
      // The request goes out once the server is ready (mcp_ready_timeout_ms), so its family is up.
      await waitFor(() => mock.posts.length === 1, 'the request', 30_000);
      await waitFor(() => family().size === 3, 'the server and its family', 30_000);
      c.child.kill(sig);
      const r = await c.result;
      assert.equal(r.code, code, show(r));
      assert.equal(JSON.parse(r.stdout).exit_code, code, show(r));
      await allGone();
      tally('faults', 1);
    });
  }
}

test('kill -9 of clm: the watchdog ends the server and its family', async () => {
  serverConfig(true);
  mock.push({ hang: true });
  const c = spawn(['-o', 'hi'], { timeoutMs: 60_000 });
  await waitFor(() => mock.posts.length === 1, 'the request', 30_000);
  await waitFor(() => family().size === 3, 'the server and its family', 30_000);
  c.child.kill('SIGKILL');
  assert.equal((await c.result).signal, 'SIGKILL');
  await allGone();
  tally('faults', 1);
});

test('a server that exits and leaves its family running: its family is ended while clm goes on', async () => {
  serverConfig(true);
  mock.push(oa.toolCall('mcp__fam__crash', {}, 'c1'), { hang: true });
  const c = spawn(['-o', 'crash it'], { timeoutMs: 60_000 });
  await waitFor(() => mock.posts.length === 2, 'the request after the crash', 30_000);
  const first = family();
  assert.deepEqual([...first.keys()].sort(), ['child', 'grandchild', 'server']);
  await waitFor(() => [...first.values()].every((p) => !alive(p)), `the first family ${[...first.values()].join(' ')} to end`, 30_000);
  assert.equal(c.child.exitCode, null, 'clm still runs');
  c.child.kill('SIGTERM');
  const r = await c.result;
  assert.equal(r.code, 143, show(r));
  assert.match(r.stderr, /notice: mcp: fam: server exited; restarting/);
  tally('faults', 1);
});
