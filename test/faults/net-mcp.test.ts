// Fault battery, what an MCP server sends (issue 21): a flood of tools/list_changed
// notifications costs a bounded number of tools/list requests, and a result holding content of
// a type clm does not know keeps what it does know and describes the rest.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { connectMcpServers, type McpManager } from '../../src/mcp/index.js';
import { tally } from '../fixtures/tally.js';
import { findTool, invoke } from '../mcp/helpers.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/mcp/${name}`, import.meta.url));
let mcp: McpManager;
before(async () => {
  mcp = connectMcpServers(
    [
      { name: 's', command: [process.execPath, fixture('tool-server.mjs'), '--faults'], timeout_ms: 30_000 },
      { name: 'raw', command: [process.execPath, fixture('raw-server.mjs')], timeout_ms: 30_000 },
    ],
    {},
  );
  assert.deepEqual((await mcp.waitReady(60_000)).ready.sort(), ['raw', 's']);
});
after(() => mcp.close());

const call = async (name: string, args: object = {}, server = 's') =>
  invoke(findTool(mcp.tools(), `mcp__${server}__${name}`), args, { timeoutMs: 30_000 });

test('20,000 tools/list_changed notifications: one tools/list in flight and one waiting, no more', async () => {
  const lists = Number((await call('lists')).text);
  assert.deepEqual(await call('flood', { n: 20_000 }), { ok: true, text: 'sent 20000' });
  // The answer to the last tools/list is the tool set in force: wait until the server stops
  // being asked (two quiet reads in a row), then count.
  let seen = -1;
  for (let now = Number((await call('lists')).text); now !== seen; now = Number((await call('lists')).text)) {
    seen = now;
    await new Promise((r) => setTimeout(r, 300));
  }
  const asked = seen - lists;
  assert.ok(asked >= 1 && asked <= 3, `${asked} tools/list requests for 20,000 notifications`);
  assert.ok(
    mcp.tools().some((t) => t.name === 'mcp__s__flood'),
    'the tools are still there',
  );
  tally('faults', 1);
});

test('content parts of an unknown type: the known parts are kept, the others described', async () => {
  assert.deepEqual(await call('odd', {}, 'raw'), {
    ok: true,
    text: [
      'before',
      '[unsupported content: video, audio/ogg, 12 KiB]',
      '[unsupported content: hologram]',
      '[unsupported content: text]',
      '[unsupported content: string]',
      'after',
    ].join('\n'),
  });
  assert.deepEqual(await call('echo', { text: 'still fine' }, 'raw'), { ok: true, text: 'still fine' });
  tally('faults', 1);
});
