// Every task rule of clm-tool(5): spawn, wait, result, cancel, wait_any, await_all, try_all,
// main-coroutine-only operations, and how a call's family ends.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadPlugins, type PluginHost } from '../../src/lua/index.js';
import type { MockLlm } from '../fixtures/mock-llm.js';
import { fixtures, ok, failure, start, until, startLoopback } from './helpers.js';

let host: PluginHost;
let server: MockLlm;
let hits: { hanging: number; closed: number };

before(async () => {
  ({ server, hits } = await startLoopback());
  host = await loadPlugins({ dirs: [join(fixtures, 'lua-tasks')] });
  assert.deepEqual(host.errors, []);
});
after(async () => {
  await host.close();
  await server.close();
});

/** A URL that answers once the server has seen n more requests to /hang than now. */
let gates = 0;
function gate(n = 1): string {
  const target = hits.hanging + n;
  const path = `/gate-${++gates}`;
  server.onGet(path, {
    handle: (_req, res) => {
      void until(() => hits.hanging >= target, 10_000).then(
        () => res.end('open'),
        () => res.end('closed'),
      );
    },
  });
  return `${server.url}${path}`;
}

/** Wait until n more hanging requests arrived. */
async function hangs(n: number, from: number) {
  await until(() => hits.hanging >= from + n, 30_000, `${n} hanging requests`);
}

describe('clm.spawn and outcomes', () => {
  test('a task runs on a later turn, never before clm.spawn returns', async () => {
    assert.equal(await ok(host, 'spawn_later'), 'after spawn, nil, true, ok=true value=v');
  });

  test('outcome tables: one value directly, several as an array, none omitted; failures carry error', async () => {
    assert.equal(
      await ok(host, 'outcomes'),
      'ok=true value=1\nok=true value={a,b,c}\nok=true\nok=false error=bad thing\nok=false error=(error object is a table value)\nstable=true',
    );
  });

  test('tasks may sleep and use http', async () => {
    assert.equal(await ok(host, 'tasks_sleep_and_http', { url: `${server.url}/hello` }), 'slept | 200 hi');
  });

  test('a task may not spawn', async () => {
    assert.match(
      await ok(host, 'task_cannot_spawn'),
      /^ok=false error=task_rules\.lua:\d+: clm\.spawn may only be called from the main tool coroutine, not from a task$/,
    );
  });

  test('only the main coroutine completes, fails, waits, reads or cancels; tasks may read ctx:args_raw', async () => {
    const lines = (await ok(host, 'task_cannot_ctl')).split('\n');
    const expect = ['ctx:complete', 'ctx:fail', 'task:wait', 'task:result', 'task:cancel', 'clm.await_all', 'clm.wait_any', 'clm.try_all'];
    expect.forEach((what, i) => {
      assert.match(
        lines[i],
        new RegExp(
          `^ok=false error=task_rules\\.lua:\\d+: ${what.replace('.', '\\.')} may only be called from the main tool coroutine, not from a task$`,
        ),
        what,
      );
    });
    assert.equal(lines[8], 'ok=true value={}');
  });
});

describe('observing errors', () => {
  test('task:wait does not observe a failure: completing then fails the tool', async () => {
    assert.equal(await failure(host, 'wait_does_not_observe'), 'ctx:complete called with 1 unobserved task error(s): unseen');
  });

  test('reading the failed outcome observes it', async () => {
    assert.equal(await ok(host, 'result_observes'), 'completed after reading: seen');
  });

  test('ctx:fail with an unobserved error is just a failure', async () => {
    assert.equal(await failure(host, 'fail_with_unobserved_is_fine'), 'gave up');
  });

  test('completing with unobserved task errors fails the tool', async () => {
    assert.equal(
      await failure(host, 'complete_with_unobserved_errors'),
      'ctx:complete called with 1 unobserved task error(s): nobody looked',
    );
  });
});

describe('task:cancel', () => {
  test('true for pending or already cancelled, false for finished; reason defaults', async () => {
    assert.equal(
      await ok(host, 'cancel_rules'),
      [
        'pending->true',
        'ok=false error=no longer needed cancelled=true',
        'again->true',
        'succeeded->false',
        'failed->false',
        'ok=false error=task cancelled cancelled=true',
      ].join('\n'),
    );
  });

  test('cancelling a task aborts its HTTP request', async () => {
    const before = hits.closed;
    assert.equal(
      await ok(host, 'cancel_aborts_http', { url: `${server.url}/hang`, gate: gate() }),
      'ok=false error=task cancelled cancelled=true',
    );
    await until(() => hits.closed > before, 30_000, 'the request to be closed');
  });
});

describe('waiting', () => {
  test('clm.wait_any: index of a terminal task, timeout without cancelling, unique handles, at most 128', async () => {
    assert.equal(
      await ok(host, 'wait_any_rules'),
      [
        'index=2',
        'timeout=nil,timeout',
        'still pending=true',
        'zero=nil,timeout',
        'dup=clm.wait_any: task at index 2 appears more than once',
        'max=clm.wait_any: at most 128 tasks may be waited on at once (got 129)',
        'bad=clm.wait_any (element 2): expected a task handle',
        'empty=clm.wait_any: no tasks given',
      ].join('\n'),
    );
  });

  test('clm.wait_any accepts 128 tasks', async () => {
    assert.equal(await ok(host, 'wait_any_128'), '128');
  });

  test('handles of another call are refused', async () => {
    assert.equal(await ok(host, 'keep_task'), 'kept');
    const lines = (await ok(host, 'foreign_task')).split('\n');
    assert.equal(lines.length, 4);
    for (const l of lines) assert.match(l, /the task does not belong to this tool call/);
  });

  test('clm.await_all: ordered outcomes; a failure does not affect the others', async () => {
    assert.equal(await ok(host, 'await_all_independent'), 'ok=false error=a failed | ok=true value=b ok');
  });

  test('clm.try_all: values in input order', async () => {
    assert.equal(await ok(host, 'try_all_success'), 'a b1,b2 nil');
  });

  test('clm.try_all: first failure cancels the unfinished rest of the set and returns nil, err', async () => {
    assert.equal(
      await ok(host, 'try_all_failure'),
      ['nil bad one', 'ok=false error=task cancelled: another task in clm.try_all failed cancelled=true', 'ok=true value=outside'].join(
        '\n',
      ),
    );
  });

  test('waiting where yielding is impossible is a clean error', async () => {
    assert.match(await ok(host, 'wait_in_sort'), /attempt to yield across a C-call boundary/);
  });
});

describe('how a family ends', () => {
  test('returning with live tasks cancels them (and their HTTP) and fails the tool', async () => {
    const before = hits.closed;
    const r = start(host, 'return_with_live_tasks', { url: `${server.url}/hang`, gate: gate() });
    assert.deepEqual(await r.result, {
      ok: false,
      error: 'plugin returned without calling ctx:complete/ctx:fail (it returned with 2 live task(s), which were cancelled)',
    });
    await until(() => hits.closed > before, 30_000, 'the request to be closed');
  });

  test('completing with live tasks fails the tool', async () => {
    assert.equal(
      await failure(host, 'complete_with_live_tasks'),
      'ctx:complete called while 1 task(s) were still running (they were cancelled)',
    );
  });

  test('no spawning after the call completed', async () => {
    assert.equal(await ok(host, 'spawn_after_complete'), 'done');
    assert.match(await ok(host, 'last'), /clm\.spawn: the tool call has already completed/);
  });

  test('a tool cancel ends the whole family, pending HTTP included', async () => {
    const before = hits.closed;
    const from = hits.hanging;
    const r = start(host, 'family_on_hold', { url: `${server.url}/hang` });
    await hangs(2, from);
    r.abort(new Error('timed out after 100 ms'));
    assert.deepEqual(await r.result, { ok: false, error: 'timed out after 100 ms (waiting in clm.await_all)' });
    await until(() => hits.closed >= before + 2, 30_000, 'both requests to be closed');
  });

  test('the CPU deadline of one task ends the whole family', async () => {
    const before = hits.closed;
    const r = await start(host, 'family_timeout', { url: `${server.url}/hang`, gate: gate() }).result;
    assert.deepEqual(r, { ok: false, error: 'plugin exceeded execution time budget (200 ms of CPU time)' });
    await until(() => hits.closed > before, 30_000, 'the request to be closed');
  });

  test('concurrent calls of one plugin never share tasks', async () => {
    const a = start(host, 'per_call_state', { ms: 40, tag: 'a' });
    const b = start(host, 'per_call_state', { ms: 5, tag: 'b' });
    assert.deepEqual(await a.result, { ok: true, out: 'a1,a2,a3' });
    assert.deepEqual(await b.result, { ok: true, out: 'b1,b2,b3' });
  });
});

test('teardown cancels every family, pending HTTP and sleeps included', async () => {
  const h = await loadPlugins({ dirs: [join(fixtures, 'lua-tasks')] });
  const before = hits.closed;
  const from = hits.hanging;
  const r = start(h, 'family_on_hold', { url: `${server.url}/hang` });
  const s = start(h, 'sleep_family');
  await hangs(2, from);
  await h.close();
  assert.deepEqual(await r.result, { ok: false, error: 'plugin host closed' });
  assert.deepEqual(await s.result, { ok: false, error: 'plugin host closed' });
  await until(() => hits.closed >= before + 2, 30_000, 'both requests to be closed');
});
