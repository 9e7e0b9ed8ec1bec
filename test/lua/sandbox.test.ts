// The sandbox, memory and CPU limits, completion rules, ctx, files, sleep and concurrency of
// calls, all driven through real Lua states in the worker.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { loadPlugins, type PluginHost } from '../../src/lua/index.js';
import { fixtures, ok, failure, invoke, start, pluginDir } from './helpers.js';
import { SLICE_MS } from '../../src/lua/limits.js';

const BUDGET = 'plugin exceeded execution time budget (300 ms of CPU time)';

let host: PluginHost;
const logs: string[] = [];
before(async () => {
  // No watchdog test here: a watchdog far above any honest call (a full GC of a nearly full state
  // on a loaded machine) so that only the limits under test stop a call.
  host = await loadPlugins({ dirs: [join(fixtures, 'lua-sandbox')], watchdogMs: 10_000, log: (l) => logs.push(l) });
  assert.deepEqual(host.errors, []);
});
after(() => host.close());

describe('sandbox', () => {
  test('removed globals are unreachable through _G and _ENV', async () => {
    assert.equal(await ok(host, 'escape', { case: 'removed' }), 'none');
  });

  test('the string metatable is locked (methods still work)', async () => {
    assert.equal(await ok(host, 'escape', { case: 'string_metatable' }), 'locked false X');
  });

  test('__gc metamethods are refused; one added later is never run', async () => {
    assert.equal(await ok(host, 'escape', { case: 'gc_refused' }), 'false setmetatable: __gc metamethods are not allowed in plugins');
    assert.equal(await ok(host, 'escape', { case: 'gc_added_later' }), 'survived');
  });

  test('ctx cannot be altered', async () => {
    assert.equal(await ok(host, 'escape', { case: 'ctx_locked' }), 'false false');
  });

  test('C-stack abuse ends in a clean Lua error', async () => {
    assert.match(await ok(host, 'escape', { case: 'c_stack' }), /^false escape\.lua:\d+: C stack overflow/);
  });

  test('yielding across a C boundary is a clean error', async () => {
    assert.match(await ok(host, 'escape', { case: 'yield_in_sort' }), /^false .*attempt to yield across a C-call boundary/);
  });

  test('each plugin has its own globals and its own string library', async () => {
    assert.equal(await ok(host, 'iso_a'), 'a-secret hijacked');
    assert.equal(await ok(host, 'iso_b'), 'nil X');
    assert.equal(await ok(host, 'escape', { case: 'globals_are_own' }), 'nil');
  });
});

describe('memory', () => {
  for (const kind of ['table', 'string', 'concat', 'recursion', 'json']) {
    test(`a ${kind} memory bomb fails the call cleanly and the state stays usable`, async () => {
      assert.equal(await failure(host, 'mem_bomb', { kind }), 'not enough memory');
      assert.equal(await ok(host, 'mem_bomb_pcall', { kind }), 'false not enough memory');
      assert.equal(await ok(host, 'ok'), 'ok');
    });
  }

  test('a state that is nearly full refuses new calls', async () => {
    assert.equal(await ok(host, 'hog'), 'filled');
    assert.equal(await failure(host, 'hog_ok'), 'plugin is low on memory, refusing to start a new invocation to avoid crashing');
    // Other plugins are unaffected.
    assert.equal(await ok(host, 'ok'), 'ok');
  });
});

describe('CPU deadline', () => {
  /**
   * The runtime's own account of a call that hit its deadline (its budget line in the log), so
   * the test can tell "killed near the budget" from "killed at ten times it" without a wall clock:
   * the budget is CPU time inside Lua, so a loaded machine makes time slices longer, never more.
   */
  const budgetLine = (name: string): { cpu: number; limit: number; resumes: number } => {
    const line = logs.filter((l) => l.startsWith(`lua budget [${name}]: `)).at(-1);
    assert.ok(line, `no budget line for ${name}`);
    const m = /cpu=([\d.]+)\/(\d+) ms resumes=(\d+) /.exec(line);
    assert.ok(m, line);
    return { cpu: Number(m[1]), limit: Number(m[2]), resumes: Number(m[3]) };
  };
  /** Killed once its CPU time passed the budget, and within a few time slices of it. */
  const killedNearBudget = (name: string, waits = 0) => {
    const b = budgetLine(name);
    assert.equal(b.limit, 300);
    assert.ok(b.cpu >= b.limit, `${name} was stopped after ${b.cpu} ms of its ${b.limit} ms`);
    // Every time slice lasts at least SLICE_MS, so the budget is spent within this many resumes
    // (plus one per wait the tool did itself); a deadline ten times too long takes ten times more.
    const most = Math.ceil(b.limit / SLICE_MS) + waits + 1;
    assert.ok(b.resumes <= most, `${name} ran ${b.resumes} resumes for a ${b.limit} ms budget (at most ${most})`);
    // Where Lua cannot yield (a sort comparator) the call is one resume: the hook stops it at
    // the first check past the budget, so its CPU time stays close to the budget too.
    assert.ok(b.cpu < 3 * b.limit, `${name} used ${b.cpu} ms of CPU time for a ${b.limit} ms budget`);
  };

  for (const name of ['spin', 'spin_pcall', 'spin_xpcall', 'spin_in_sort', 'spin_sort_pcall']) {
    test(`${name}: killed at its timeout_ms, and the next call works`, async () => {
      assert.equal(await failure(host, name), BUDGET);
      killedNearBudget(name);
      assert.equal(await ok(host, 'ok'), 'ok');
    });
  }

  test('the deadline keeps counting after a yield (re-armed on every resume)', async () => {
    assert.equal(await failure(host, 'spin_after_sleep'), BUDGET);
    killedNearBudget('spin_after_sleep', 3);
  });

  test('time spent waiting does not count against it', async () => {
    assert.equal(await ok(host, 'sleeps_past_budget'), 'slept');
  });

  test('a long computation is time-sliced: other calls, in this plugin and others, run meanwhile', async () => {
    const order: string[] = [];
    const busy = invoke(host, 'busy', { n: 3e7 }).then((r) => {
      order.push('busy');
      return r;
    });
    await new Promise((r) => setTimeout(r, 20));
    const other = invoke(host, 'iso_b').then((r) => {
      order.push('other plugin');
      return r;
    });
    const same = invoke(host, 'ok').then((r) => {
      order.push('same plugin');
      return r;
    });
    await Promise.all([busy, other, same]);
    assert.deepEqual(order.slice(-1), ['busy']);
  });
});

describe('completion rules and ctx', () => {
  test('returning without completing fails the call, also after a yield', async () => {
    assert.equal(await failure(host, 'returns_nothing'), 'plugin returned without calling ctx:complete/ctx:fail');
    assert.equal(await failure(host, 'returns_after_yield'), 'plugin returned without calling ctx:complete/ctx:fail');
  });

  test('a runtime error fails the call with the Lua message', async () => {
    assert.match(await failure(host, 'raises'), /^limits\.lua:\d+: kaboom$/);
    assert.equal(await failure(host, 'raises_table'), '(error object is a table value)');
  });

  test('ctx:fail reports the message', async () => {
    assert.equal(await failure(host, 'fails'), 'it did not work');
  });

  test('completing twice is a Lua error; the first result stands', async () => {
    assert.equal(await ok(host, 'complete_twice'), 'first');
    assert.equal(await ok(host, 'last'), 'tool already completed | tool already completed');
  });

  test('an error after completing is logged, not reported', async () => {
    assert.equal(await ok(host, 'error_after_complete'), 'done');
    assert.ok(logs.some((l) => l.includes('late error')));
  });

  test('ctx:complete needs a string', async () => {
    assert.match(await failure(host, 'bad_complete'), /ctx:complete: result must be a string, got table/);
  });

  test('malformed JSON arguments fail before any Lua runs', async () => {
    assert.equal(await failure(host, 'ok', '{"a":'), 'invalid tool arguments (malformed JSON)');
  });

  test('ctx:args_raw gives the raw text, "{}" when there were none', async () => {
    assert.equal(await ok(host, 'echo_raw', '{ "a" : [1, 2] }'), '{ "a" : [1, 2] }');
    assert.equal(await ok(host, 'echo_raw', ''), '{}');
  });

  test('arguments decode to Lua values; JSON null is json.null', async () => {
    assert.equal(await ok(host, 'args_json', '{"n":null,"i":3,"s":"x"}'), '{"i":3,"n":null,"s":"x"} true integer');
  });

  test('output is binary-safe: valid UTF-8 (even with NUL) is text, anything else is bytes', async () => {
    assert.equal(await ok(host, 'nul_text'), 'a\0b');
    const r = await invoke(host, 'binary_out');
    assert.ok(r.ok);
    assert.deepEqual([...(r.out as Uint8Array)], [97, 0, 98, 255]);
  });

  test('ctx:log goes to the log callback', async () => {
    assert.equal(await ok(host, 'log'), 'logged');
    assert.ok(logs.includes('lua plugin log: hello from lua'));
    // Each call ends with a budget report in the debug log.
    assert.ok(
      logs.some((l) => /^lua budget \[log\]: cpu=[\d.]+\/30000 ms resumes=\d+ mem=\d+\/8388608 peak=\d+ http=0 tasks=0$/.test(l)),
      logs.join('\n'),
    );
  });

  test('a ctx kept past its call cannot complete anything', async () => {
    assert.equal(await ok(host, 'save_ctx'), 'saved');
    assert.equal(await ok(host, 'reuse_ctx'), 'false ctx:complete: this ctx belongs to a tool call that has ended');
  });

  test('clm.sleep clamps its argument and needs a number', async () => {
    assert.equal(await ok(host, 'sleep_clamp'), 'clm.sleep: ms must be a number');
  });
});

describe('files', () => {
  test('clm.write_file and clm.read_file, binary-safe; errors as nil, err', async () => {
    const d = pluginDir({});
    try {
      const p = join(d.dir, 'out.txt');
      assert.equal(await ok(host, 'files', { op: 'write', path: p, content: 'hello' }), 'true nil');
      assert.equal(readFileSync(p, 'utf8'), 'hello');
      assert.equal(await ok(host, 'files', { op: 'read', path: p }), 'read:hello');
      assert.equal(await ok(host, 'files', { op: 'read', path: join(d.dir, 'missing') }), 'nil No such file or directory');
      assert.equal(
        await ok(host, 'files', { op: 'write', path: join(d.dir, 'no/such/dir'), content: 'x' }),
        'nil No such file or directory',
      );
      assert.equal(await ok(host, 'files_binary', { path: join(d.dir, 'bin') }), '4 true');
    } finally {
      d.remove();
    }
  });
});

describe('concurrency', () => {
  test('two concurrent calls of one plugin keep their own state', async () => {
    const a = start(host, 'slow_echo', { ms: 80, v: 'A' });
    const b = start(host, 'slow_echo', { ms: 10, v: 'B' });
    const order: string[] = [];
    const [ra, rb] = await Promise.all([
      a.result.then((r) => {
        order.push('A');
        return r;
      }),
      b.result.then((r) => {
        order.push('B');
        return r;
      }),
    ]);
    assert.deepEqual(ra, { ok: true, out: 'A {"ms":80,"v":"A"}' });
    assert.deepEqual(rb, { ok: true, out: 'B {"ms":10,"v":"B"}' });
    assert.deepEqual(order, ['B', 'A']);
  });

  test('many concurrent sleeping calls all complete', async () => {
    const calls = Array.from({ length: 50 }, (_, i) => invoke(host, 'slow_echo', { ms: 20, v: `v${i}` }));
    const results = await Promise.all(calls);
    results.forEach((r, i) => assert.deepEqual(r, { ok: true, out: `v${i} {"ms":20,"v":"v${i}"}` }));
  });

  test('cancelling a call (abort) fails it and leaves the others running', async () => {
    const a = start(host, 'slow_echo', { ms: 5000, v: 'A' });
    const b = start(host, 'slow_echo', { ms: 30, v: 'B' });
    a.abort();
    assert.deepEqual(await a.result, { ok: false, error: 'cancelled (waiting in clm.sleep)' });
    assert.equal((await b.result).ok, true);
  });
});
