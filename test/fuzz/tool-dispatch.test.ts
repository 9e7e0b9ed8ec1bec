// Fuzzing tool-call dispatch through the agent (over an in-memory host): a model reply with any
// number of calls, any names (known, unknown, empty) and any argument text is dispatched so that
// every call gets exactly one result, only registered tools run, each sees its arguments as
// sent, and the next request pairs every call with its result. Per-call limits taken from the
// arguments are always sane numbers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent } from '../../src/core/agent.js';
import { callLimits } from '../../src/core/tool-registry.js';
import type { ToolDef } from '../../src/core/types.js';
import { parseToolArgs, argInt } from '../../src/builtin-tools/args.js';
import { scriptedHost } from '../fixtures/scripted-host.js';
import { anyText, check, checkAsync, fc } from '../fixtures/fuzz.js';

const argsText = fc.oneof(
  anyText(40),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .dictionary(
      fc.constantFrom('timeout_ms', 'output_cap', 'path', 'command', 'n'),
      fc.oneof(fc.jsonValue(), fc.double(), fc.constantFrom(0.5, -1, 1e-300, 1e300)),
    )
    .map((o) => JSON.stringify(o)),
);
const calls = fc.array(fc.record({ name: fc.oneof(fc.constantFrom('alpha', 'beta', 'gamma', ''), anyText(8)), args: argsText }), {
  minLength: 1,
  maxLength: 6,
});

test('dispatch: any calls, names and arguments — one result each, only registered tools run, arguments as sent', async () => {
  await checkAsync(200, fc.record({ calls, syncFail: fc.boolean() }), async ({ calls: cs, syncFail }) => {
    const seen: { name: string; args: string }[] = [];
    const tool = (name: string): ToolDef => ({
      name,
      noPrompt: true,
      timeoutOverridable: true,
      outputCapOverridable: true,
      invoke: (inv) => {
        seen.push({ name, args: inv.args });
        assert.ok(Number.isSafeInteger(inv.outputCap) && inv.outputCap >= 1, `outputCap ${inv.outputCap}`);
        assert.ok(Number.isSafeInteger(inv.timeoutMs) && inv.timeoutMs >= 0, `timeoutMs ${inv.timeoutMs}`);
        if (name === 'gamma' && syncFail) throw new Error('gamma failed');
        inv.complete(`${name} done`);
      },
    });
    const reply = {
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: cs.map((c, i) => ({ id: `c${i}`, type: 'function', function: { name: c.name, arguments: c.args } })),
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const final = { choices: [{ message: { role: 'assistant', content: 'end' }, finish_reason: 'stop' }] };
    const host = scriptedHost([{ body: JSON.stringify(reply) }, { body: JSON.stringify(final) }]);
    const results: { name: string; outcome: string }[] = [];
    const agent = createAgent({ baseUrl: 'http://x/v1/chat/completions', stream: false }, host, {
      onToolResult: (name, _c, outcome) => results.push({ name, outcome }),
    });
    for (const n of ['alpha', 'beta', 'gamma']) agent.addTool(tool(n));
    const r = await agent.run('go');
    assert.equal(r.status, 0, r.error);
    assert.equal(results.length, cs.length);
    const known = cs.filter((c) => ['alpha', 'beta', 'gamma'].includes(c.name));
    assert.deepEqual(seen.map((s) => s.name).sort(), known.map((c) => c.name).sort());
    for (const s of seen)
      assert.ok(
        known.some((c) => c.name === s.name && (c.args || '{}') === s.args),
        `args of ${s.name}: ${s.args}`,
      );
    // The history pairs each call with exactly one result.
    const tools = agent.messages.filter((m) => m.role === 'tool');
    assert.deepEqual(tools.map((m) => m.toolCallId).sort(), cs.map((_, i) => `c${i}`).sort());
    agent.close();
  });
});

test('callLimits: any argument values give an output cap of at least one byte and a whole, non-negative timeout', () => {
  const def: ToolDef = { name: 't', invoke: () => {}, timeoutOverridable: true, outputCapOverridable: true };
  check(
    1000,
    fc.oneof(
      fc.jsonValue(),
      fc.record(
        { output_cap: fc.oneof(fc.double(), fc.jsonValue()), timeout_ms: fc.oneof(fc.double(), fc.jsonValue()) },
        { requiredKeys: [] },
      ),
    ),
    (args) => {
      const l = callLimits(def, args);
      assert.ok(Number.isSafeInteger(l.outputCap) && l.outputCap >= 1, `outputCap ${l.outputCap}`);
      assert.ok(Number.isSafeInteger(l.timeoutMs) && l.timeoutMs >= 0, `timeoutMs ${l.timeoutMs}`);
    },
  );
});

test('builtin argument helpers: any text parses to an object or undefined; integers are whole or the fallback', () => {
  check(1000, fc.record({ raw: argsText, key: fc.constantFrom('n', 'timeout_ms', 'path', '__proto__') }), ({ raw, key }) => {
    const a = parseToolArgs(raw);
    if (a === undefined) return;
    assert.ok(a !== null && typeof a === 'object' && !Array.isArray(a));
    const n = argInt(a, key, 7);
    assert.ok(Number.isInteger(n), `${key} → ${n}`);
  });
});
