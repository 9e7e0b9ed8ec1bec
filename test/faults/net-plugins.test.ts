// Fault battery, a plugin's network use (issue 21): a request to a server that never answers
// ends by the request's own time limit, and a call by its deadline, which bounds wall time spent
// waiting, each saying which ended it; a call that completed or failed is over: what it does
// afterwards makes no request and waits on nothing.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPlugins, type PluginHost } from '../../src/lua/index.js';
import { DEFAULT_CALL_BUDGET_MS, HTTP_TIMEOUT_MS } from '../../src/lua/limits.js';
import { harness } from '../fixtures/agent-harness.js';
import { startMockLlm, type MockLlm } from '../fixtures/mock-llm.js';
import * as oa from '../fixtures/openai-replies.js';
import { tally } from '../fixtures/tally.js';
import { invoke, pluginDir, sleep, startLoopback, tool, until } from '../lua/helpers.js';

const PLUGIN = `
local function reg(name, invoke, extra)
  local def = extra or {}
  def.invoke = invoke
  def.no_prompt = true
  clm.tool_register(name, def)
end
-- No timeout_ms: the request's own limit ends it, and the plugin reports what it got.
reg("fetch", function(args, ctx)
  local resp, err = http.get(args.url)
  if resp then ctx:complete(resp.body) else ctx:fail(err) end
end)
reg("fetch_brief", function(args, ctx)
  local resp, err = http.get(args.url)
  ctx:complete(tostring(err))
end, { timeout_ms = 1500 })
reg("nap_brief", function(args, ctx)
  clm.sleep(30000)
  ctx:complete("woke")
end, { timeout_ms = 1500 })
reg("idle", function(args, ctx) clm.sleep(1) ctx:complete("idle") end)

-- Keeps going after the result: every later sleep and request must fail at once.
after_errors = {}
reg("complete_then_poll", function(args, ctx)
  ctx:complete("ok")
  for i = 1, 20 do
    local ok, err = pcall(clm.sleep, 300)
    if not ok then after_errors[#after_errors + 1] = err end
    ok, err = pcall(http.get, args.url)
    if not ok then after_errors[#after_errors + 1] = err end
  end
end)
reg("fail_with_task", function(args, ctx)
  clm.spawn(function()
    for i = 1, 20 do
      http.get(args.url)
      clm.sleep(50)
    end
  end)
  clm.sleep(100)
  ctx:fail("gave up")
  local ok, err = pcall(clm.sleep, 300)
  after_errors[#after_errors + 1] = err
end)
reg("after_errors", function(args, ctx) ctx:complete(table.concat(after_errors, "\\n")) end)
`;

let llm: MockLlm;
let web: MockLlm;
let hits: { hanging: number; closed: number };
let host: PluginHost;
const plugins = pluginDir({ 'net.lua': PLUGIN });
before(async () => {
  llm = await startMockLlm();
  ({ server: web, hits } = await startLoopback());
  web.onGet('/count', { body: 'counted' });
  host = await loadPlugins({ dirs: [plugins.dir] });
  assert.deepEqual(host.errors, []);
});
after(async () => {
  await host.close();
  await Promise.all([llm.close(), web.close()]);
  plugins.remove();
});
beforeEach(() => llm.reset());

const counted = () => web.requests.filter((r) => r.path === '/count').length;

test("http.* to a server that never answers, no timeout_ms: the request's own limit ends it, and says so", {
  timeout: 90_000,
}, async () => {
  llm.push(oa.toolCall('fetch', { url: `${web.url}/hang` }, 'f'), oa.text('done'));
  const h = harness(llm, { tools: host.tools });
  const r = await h.agent.run('fetch it');
  assert.equal(r.status, 0, h.agent.lastError);
  assert.deepEqual(h.results, [
    {
      name: 'fetch',
      content: `[tool failed: http.get: no complete response within ${HTTP_TIMEOUT_MS / 1000} s (the limit of one request)]`,
      outcome: 'failed',
    },
  ]);
  await until(() => hits.closed === hits.hanging, 10_000, 'the request to be closed');
  h.agent.close();
  tally('faults', 1);
});

test('the call deadline bounds time spent waiting (http, sleep), and the result says what the call waited on', {
  timeout: 60_000,
}, async () => {
  llm.push(
    oa.toolCalls([
      { id: 'h', name: 'fetch_brief', args: { url: `${web.url}/hang` } },
      { id: 's', name: 'nap_brief', args: {} },
    ]),
    oa.text('done'),
  );
  const h = harness(llm, { tools: host.tools });
  const r = await h.agent.run('wait');
  assert.equal(r.status, 0, h.agent.lastError);
  assert.deepEqual(h.results.map((x) => [x.name, x.content, x.outcome]).sort(), [
    ['fetch_brief', '[tool failed: timed out after 1500 ms (waiting in http.get)]', 'timedout'],
    ['nap_brief', '[tool failed: timed out after 1500 ms (waiting in clm.sleep)]', 'timedout'],
  ]);
  // Without timeout_ms the deadline is the CPU budget's default, in wall time too.
  assert.equal(tool(host, 'idle').timeoutMs, DEFAULT_CALL_BUDGET_MS);
  h.agent.close();
  tally('faults', 2);
});

test('after ctx:complete or ctx:fail the call is over: later sleeps and requests fail at once, its tasks are cancelled', {
  timeout: 60_000,
}, async () => {
  const url = `${web.url}/count`;
  const before = counted();
  assert.deepEqual(await invoke(host, 'complete_then_poll', { url }), { ok: true, out: 'ok' });
  assert.deepEqual(await invoke(host, 'fail_with_task', { url }), { ok: false, error: 'gave up' });
  const afterFail = counted();
  await sleep(1000);
  assert.equal(counted(), afterFail, 'no request after the call failed');
  assert.ok(afterFail - before <= 3, `${afterFail - before} requests, all before the call failed`);
  const errors = await invoke(host, 'after_errors');
  assert.ok(errors.ok);
  const lines = String(errors.out).split('\n');
  assert.equal(lines.length, 41, lines.join('\n'));
  assert.equal(lines.filter((l) => l.endsWith('clm.sleep: the tool call has ended (ctx:complete or ctx:fail was called)')).length, 21);
  assert.equal(lines.filter((l) => l.endsWith('http.get: the tool call has ended (ctx:complete or ctx:fail was called)')).length, 20);
  tally('faults', 2);
});
