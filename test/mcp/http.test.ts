// Streamable HTTP: an SDK server in this process (SSE and JSON-response modes), a hand-written
// plain-JSON server like the ones the C client spoke to, bearer auth, pagination, errors,
// cancellation and timeouts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { createToolServer } from '../fixtures/mcp/tool-server.mjs';
import { connectMcpServers } from '../../src/mcp/index.js';
import { findTool, invoke, makeInvocation, serveFetch } from './helpers.js';

/** A bound on starting a server that a loaded machine never reaches; waitReady returns as soon as it is ready. */
const READY_MS = 60_000;

/** An SDK server behind node:http; records request methods and auth headers. */
async function sdkServer(opts: { json: boolean; pageSize?: number; extraTools?: number }) {
  const seen: { method: string; cursor?: string; auth: string | null }[] = [];
  const cancelled: string[] = [];
  const server = createToolServer({ pageSize: opts.pageSize, extraTools: opts.extraTools, onCancelled: (n) => cancelled.push(n) });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: opts.json });
  await server.connect(transport);
  const http = await serveFetch(async (req) => {
    if (req.method === 'POST') {
      const body = await req
        .clone()
        .json()
        .catch(() => null);
      for (const m of Array.isArray(body) ? body : [body]) {
        if (m?.method) seen.push({ method: m.method, cursor: m.params?.cursor, auth: req.headers.get('authorization') });
      }
    }
    return transport.handleRequest(req);
  });
  return {
    ...http,
    seen,
    cancelled,
    async close() {
      await server.close().catch(() => {});
      await http.close();
    },
  };
}

test('SSE mode: list, call, bearer key, mixed content, isError and JSON-RPC errors', async () => {
  const srv = await sdkServer({ json: false });
  const notices: string[] = [];
  const mcp = connectMcpServers([{ name: 'web', transport: 'http', url: srv.url, api_key: 'sk-test-123', timeout_ms: 5000 }], {
    onNotice: (t) => notices.push(t),
  });
  try {
    assert.deepEqual((await mcp.waitReady(READY_MS)).ready, ['web']);
    const tools = mcp.tools();
    assert.deepEqual(
      tools.map((t) => t.name),
      [
        'mcp__web__echo',
        'mcp__web__mixed',
        'mcp__web__fail',
        'mcp__web__rpc-error',
        'mcp__web__slow',
        'mcp__web__crash',
        'mcp__web__dotted_name',
        'mcp__web__grow',
      ],
    );
    assert.equal(findTool(tools, 'mcp__web__dotted_name')!.description, 'dotted.name', 'no description: the tool name');
    assert.ok(notices.includes('mcp: web: 8 tools registered'));
    assert.ok(srv.seen.length >= 3 && srv.seen.every((s) => s.auth === 'Bearer sk-test-123'), JSON.stringify(srv.seen));

    assert.deepEqual(await invoke(findTool(tools, 'mcp__web__echo'), { text: 'over http' }), { ok: true, text: 'over http' });
    assert.deepEqual(await invoke(findTool(tools, 'mcp__web__dotted_name')), { ok: true, text: 'dotted ok' }, 'called by its own name');
    assert.deepEqual(await invoke(findTool(tools, 'mcp__web__mixed')), {
      ok: true,
      text:
        'first\n[image: image/png, 70 bytes]\n[audio: audio/wav, 3 bytes]\n[resource: file:///notes.txt]\nnote body\n' +
        '[resource: file:///blob.bin, application/octet-stream, 4 bytes]\n[resource link: file:///linked.md (linked)]\nlast',
    });
    assert.deepEqual(await invoke(findTool(tools, 'mcp__web__fail')), { ok: false, text: 'it went wrong' });
    assert.deepEqual(await invoke(findTool(tools, 'mcp__web__rpc-error')), { ok: false, text: 'custom failure from the server' });
    assert.deepEqual(await invoke(findTool(tools, 'mcp__web__echo'), '{not json'), { ok: false, text: 'arguments are not valid JSON' });
  } finally {
    await mcp.close();
    await srv.close();
  }
});

test('cancel reaches the server; a slow answer times out; late answers are dropped', async () => {
  const srv = await sdkServer({ json: false });
  const mcp = connectMcpServers([{ name: 'web', transport: 'http', url: srv.url }], {});
  try {
    await mcp.waitReady(READY_MS);
    const slow = findTool(mcp.tools(), 'mcp__web__slow')!;

    const call = makeInvocation({ ms: 5000 });
    const running = slow.invoke(call.inv);
    await new Promise((r) => setTimeout(r, 100));
    call.abort();
    await running;
    assert.deepEqual(await call.result, { ok: false, text: 'cancelled' });
    for (let i = 0; i < 50 && !srv.cancelled.length; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(srv.cancelled, ['slow'], 'notifications/cancelled reached the server');

    assert.deepEqual(await invoke(slow, { ms: 3000 }, { timeoutMs: 200 }), {
      ok: false,
      text: "MCP server 'web' did not answer within 200 ms",
    });

    // The agent finished the invocation itself (its own deadline); the answer that still
    // arrives later must not complete it a second time.
    const late = makeInvocation({ ms: 100 });
    let completions = 0;
    const inv = {
      ...late.inv,
      complete: () => void completions++,
      fail: () => void completions++,
      get done() {
        return true;
      },
    };
    await slow.invoke(inv);
    assert.equal(completions, 0);
  } finally {
    await mcp.close();
    await srv.close();
  }
});

test('JSON-response mode with paginated tools/list (nextCursor followed)', async () => {
  const srv = await sdkServer({ json: true, pageSize: 3, extraTools: 5 });
  const mcp = connectMcpServers([{ name: 'paged', transport: 'http', url: srv.url }], {});
  try {
    assert.deepEqual((await mcp.waitReady(READY_MS)).ready, ['paged']);
    const names = mcp.tools().map((t) => t.name);
    assert.equal(names.length, 13);
    assert.deepEqual(names.slice(-5), ['mcp__paged__t000', 'mcp__paged__t001', 'mcp__paged__t002', 'mcp__paged__t003', 'mcp__paged__t004']);
    assert.deepEqual(
      srv.seen.filter((s) => s.method === 'tools/list').map((s) => s.cursor),
      [undefined, '3', '6', '9', '12'],
    );
    assert.equal(srv.seen[0]!.auth, null, 'no api_key, no Authorization header');
    assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__paged__echo'), { text: 'json' }), { ok: true, text: 'json' });
  } finally {
    await mcp.close();
    await srv.close();
  }
});

test('a minimal plain-JSON server (no SSE, no session id, GET refused)', async () => {
  const srv = await serveFetch(async (req) => {
    if (req.method !== 'POST') return new Response('no', { status: 405 });
    const m = await req.json();
    if (m.id === undefined) return new Response(null, { status: 202 });
    const reply = (result: unknown) => Response.json({ jsonrpc: '2.0', id: m.id, result });
    switch (m.method) {
      case 'initialize':
        return reply({
          protocolVersion: m.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'plain', version: '0' },
        });
      case 'tools/list':
        return reply({ tools: [{ name: 'add', inputSchema: { type: 'object' } }] });
      case 'tools/call':
        return reply({ content: [{ type: 'text', text: String(m.params.arguments.a + m.params.arguments.b) }] });
      default:
        return Response.json({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
    }
  });
  const mcp = connectMcpServers([{ name: 'plain', transport: 'http', url: srv.url }], {});
  try {
    assert.deepEqual((await mcp.waitReady(READY_MS)).ready, ['plain']);
    assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__plain__add'), { a: 2, b: 3 }), { ok: true, text: '5' });
  } finally {
    await mcp.close();
    await srv.close();
  }
});

test('an unreachable HTTP server fails with a clear message', async () => {
  const srv = await serveFetch(async () => new Response('x'));
  const url = srv.url;
  await srv.close(); // nothing listens there any more
  const notices: string[] = [];
  const mcp = connectMcpServers([{ name: 'gone', transport: 'http', url }], { onNotice: (t) => notices.push(t) });
  try {
    const report = await mcp.waitReady(READY_MS);
    assert.equal(report.failed.length, 1);
    assert.match(report.failed[0]!.error, /^connect failed \(initialize: .*ECONNREFUSED/);
    assert.match(notices.join('\n'), /mcp: gone: connect failed/);
    await assert.rejects(mcp.get('gone')!.ready, /mcp: gone: connect failed/);
  } finally {
    await mcp.close();
  }
});

/** A plain-JSON MCP server whose `flood` tool answers with a body that never ends (as `sse`: one endless event). */
async function floodServer(sse: boolean) {
  let sent = 0;
  const srv = await serveFetch(async (req) => {
    if (req.method !== 'POST') return new Response('no', { status: 405 });
    const m = await req.json();
    if (m.id === undefined) return new Response(null, { status: 202 });
    const reply = (result: unknown) => Response.json({ jsonrpc: '2.0', id: m.id, result });
    if (m.method === 'initialize')
      return reply({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'flood', version: '0' } });
    if (m.method === 'tools/list')
      return reply({
        tools: [
          { name: 'flood', inputSchema: { type: 'object' } },
          { name: 'small', inputSchema: { type: 'object' } },
        ],
      });
    if (m.params?.name === 'small') return reply({ content: [{ type: 'text', text: 'still here' }] });
    const head = `${sse ? 'event: message\ndata: ' : ''}{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"content":[{"type":"text","text":"`;
    const block = new TextEncoder().encode('x'.repeat(64 * 1024));
    let started = false;
    const body = new ReadableStream<Uint8Array>({
      // Each block after a turn of the event loop: the server shares clm's process here, and a
      // stream that is always ready would keep the loop from reading anything.
      async pull(ctl) {
        await new Promise((r) => setImmediate(r));
        if (!started) {
          started = true;
          ctl.enqueue(new TextEncoder().encode(head));
          return;
        }
        sent += block.length;
        ctl.enqueue(block);
      },
    });
    return new Response(body, { headers: { 'content-type': sse ? 'text/event-stream' : 'application/json' } });
  });
  return { ...srv, sent: () => sent };
}

for (const sse of [false, true]) {
  test(`a reply that never ends (${sse ? 'one SSE event' : 'a JSON body'}) fails the call at the message limit, and the server stays usable`, async () => {
    const srv = await floodServer(sse);
    const mcp = connectMcpServers([{ name: 'flood', transport: 'http', url: srv.url, timeout_ms: 120_000 }], {});
    try {
      assert.deepEqual((await mcp.waitReady(READY_MS)).ready, ['flood']);
      // The call's own deadline is generous: 10 MiB arrive in 64 KiB blocks, one per turn of the
      // event loop, which takes a loaded machine well over the helper's default of 5 s.
      const r = await invoke(findTool(mcp.tools(), 'mcp__flood__flood'), '{}', { timeoutMs: 120_000 });
      assert.deepEqual(r, { ok: false, text: "the MCP server's reply was larger than 10 MiB, the most clm reads from a server" });
      assert.ok(srv.sent() < 64 << 20, `reading stopped (${srv.sent()} bytes sent)`);
      assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__flood__small')), { ok: true, text: 'still here' });
    } finally {
      await mcp.close();
      await srv.close();
    }
  });
}
