// Fault battery, Lua plugins through the real CLI: a tool that throws, loops, allocates without
// end, recurses without end, or runs a pattern bomb. Each call fails with a message naming the
// problem, the model sees it, the other calls of the batch and the turn go on, and the session
// holds every result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { show } from '../fixtures/run-cli.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { tally } from '../fixtures/tally.js';

const { mock, dirs, run } = await faultSuite();

const PLUGIN = `
local function reg(name, invoke, extra)
  local def = extra or {}
  def.invoke = invoke
  def.no_prompt = true
  clm.tool_register(name, def)
end
reg("throws", function(args, ctx) error("the plugin gave up") end)
reg("loops", function() while true do end end, { timeout_ms = 300 })
reg("allocates", function() local t = {} for i = 1, 1e8 do t[i] = string.rep("x", 64) .. i end end)
reg("recurses", function() local function f(n) return f(n + 1) + 1 end return f(1) end)
reg("bomb", function(args, ctx) ctx:complete(tostring(string.find(string.rep("a", 40) .. "b", string.rep("a*", 30) .. "c"))) end)
reg("fine", function(args, ctx) ctx:complete("still fine") end)
`;

test('plugins that throw, loop, allocate, recurse or run a pattern bomb: each call fails by name, the turn goes on', async () => {
  const plugins = join(dirs.root, 'plugins');
  mkdirSync(plugins);
  writeFileSync(join(plugins, 'faulty.lua'), PLUGIN);
  // The bomb gets a round of its own: the watchdog restarts the plugin worker, which fails
  // whatever else was running in it with a retryable error.
  const rounds = [
    ['throws', 'loops', 'allocates', 'recurses', 'fine'],
    ['bomb', 'fine'],
  ];
  mock.push(...rounds.map((names, k) => oa.toolCalls(names.map((name, i) => ({ id: `r${k}c${i}`, name, args: {} })))), oa.text('survived'));
  const r = await run(['-o', 'break things', '-p', plugins], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'survived\n');
  const results = new Map<string, string>();
  for (const m of mock.posts[2]!.json.messages) {
    if (m.role !== 'tool') continue;
    const [, k, i] = /^r(\d)c(\d)$/.exec(m.tool_call_id)!;
    results.set(`${rounds[Number(k)]![Number(i)]}${k}`, m.content);
  }
  assert.match(results.get('throws0')!, /^\[tool failed: .*the plugin gave up\]$/);
  assert.match(results.get('loops0')!, /^\[tool failed: .*(execution time budget|timed out after 300 ms)/);
  assert.match(results.get('allocates0')!, /^\[tool failed: .*not enough memory/);
  assert.match(results.get('recurses0')!, /^\[tool failed: .*(stack overflow|not enough memory)/);
  assert.equal(results.get('fine0'), 'still fine');
  assert.match(
    results.get('bomb1')!,
    /^\[tool failed: plugin faulty: a single Lua library call \(e\.g\. string\.find or string\.match with a pathological pattern\) ran for [\d.]+ s without yielding; the call was aborted\]$/,
  );
  assert.match(results.get('fine1')!, /^still fine$|^\[tool failed: aborted: the plugin host was restarted/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  const [file] = readdirSync(dirs.sessions).filter((n) => n.endsWith('.jsonl'));
  const saved = readFileSync(join(dirs.sessions, file!), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(saved.filter((l) => l.role === 'tool').length, 7, 'every result is in the session');
  assert.equal(saved.at(-1).content, 'survived');
  tally('faults', 5);
});
