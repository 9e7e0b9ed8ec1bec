// Real Lua through the real agent: plugins loaded with loadPlugins, their ToolDefs added to an
// agent over the Node host, the mock LLM scripted to call them. What is asserted is what the
// model would see — the tool messages of the NEXT request — and the turn status.

import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadPlugins, seedPluginDir, type PluginHost } from '../../src/lua/index.js';
import { startMockLlm, type MockLlm, type RecordedRequest } from '../fixtures/mock-llm.js';
import * as oa from '../fixtures/openai-replies.js';
import { harness, type Recorder } from '../fixtures/agent-harness.js';
import { ECANCELED } from '../../src/core/errors.js';
import { fixtures, pluginDir, until } from './helpers.js';

const dir = (name: string) => join(fixtures, 'lua-agent', name);

/** The LLM, and a second loopback server the plugins talk HTTP to. */
let llm: MockLlm;
let web: MockLlm;
before(async () => {
  [llm, web] = await Promise.all([startMockLlm(), startMockLlm()]);
});
after(async () => {
  await Promise.all([llm.close(), web.close()]);
});
beforeEach(() => {
  llm.reset();
  web.reset();
});

function agentWith(host: PluginHost): Recorder {
  return harness(llm, { tools: host.tools, permission: 'allow_once' });
}

/** Submit a prompt; resolves with the turn status. */
function turn(r: Recorder, prompt: string): Promise<number> {
  const done = r.turnDone();
  r.agent.submit(prompt);
  return done;
}

/** The content of the tool message answering call `id` in a recorded request. */
function seen(req: RecordedRequest | undefined, id: string): string {
  const msgs: any[] = req?.json?.messages ?? [];
  const m = msgs.find((x) => x.role === 'tool' && x.tool_call_id === id);
  if (!m) throw new Error(`no tool message for ${id} in: ${JSON.stringify(msgs.slice(-4))}`);
  return m.content;
}

/** The tool messages after the last assistant message of a request, by call id. */
function toolMessages(req: RecordedRequest | undefined): Record<string, string> {
  const msgs: any[] = req?.json?.messages ?? [];
  const out: Record<string, string> = {};
  for (let i = msgs.length - 1; i >= 0 && msgs[i].role === 'tool'; i--) out[msgs[i].tool_call_id] = msgs[i].content;
  return out;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}

// Either limit may end a spinning call first: the agent's wall clock (timeout_ms) or the
// runtime's CPU budget (the same number). Both are a clear timeout for the model.
const TIMEOUT_200 = /^\[tool failed: (timed out after 200 ms|plugin exceeded execution time budget \(200 ms of CPU time\))\]$/;

describe('seed plugins', () => {
  let host: PluginHost;
  const CONDITIONS = {
    current_condition: [
      {
        temp_F: '70',
        temp_C: '21',
        FeelsLikeF: '68',
        humidity: '55',
        weatherDesc: [{ value: 'Partly cloudy' }],
        windspeedMiles: '9',
        winddir16Point: 'WSW',
        precipInches: '0.1',
      },
    ],
  };
  before(async () => {
    host = await loadPlugins({
      dirs: [seedPluginDir()],
      toolsConfig: {
        weather: { base_url: `${web.url}/` },
        web_search: { api_key: 'tvly-e2e', base_url: web.url },
      },
    });
    assert.deepEqual(host.errors, []);
  });
  after(() => host.close());

  test('reverse_string: the model sees the reversed text; the gated tool asked for permission', async () => {
    llm.push(oa.toolCall('reverse_string', { text: 'héllo 🦴' }, 'c1'), oa.text('done'));
    const r = agentWith(host);
    assert.equal(await turn(r, 'reverse it'), 0);
    assert.equal(llm.posts.length, 2);
    assert.ok(llm.posts[0]!.json.tools.some((t: any) => t.function.name === 'reverse_string'));
    assert.equal(seen(llm.posts[1], 'c1'), '🦴 olléh');
    assert.deepEqual(r.permissions, [{ name: 'reverse_string', args: '{"text":"héllo 🦴"}' }]);
    assert.equal(r.text, 'done');
  });

  test('edit_file edits a temporary file; a failed edit reaches the model as a tool failure', async () => {
    const d = pluginDir({ 'notes.txt': 'alpha\nbeta\nbeta\n' });
    const path = join(d.dir, 'notes.txt');
    try {
      llm.push(
        oa.toolCalls([{ id: 'e1', name: 'edit_file', args: { path, old_str: 'alpha', new_str: 'ALPHA' } }]),
        oa.toolCalls([{ id: 'e2', name: 'edit_file', args: { path, old_str: 'beta', new_str: 'B' } }]),
        oa.text('edited'),
      );
      const r = agentWith(host);
      assert.equal(await turn(r, 'edit'), 0);
      assert.equal(seen(llm.posts[1], 'e1'), `ok: replaced 1 occurrence(s) of 5 bytes with 5 bytes each in ${path}`);
      assert.match(seen(llm.posts[2], 'e2'), /^\[tool failed: old_str matches 2 times; must be unique \(/);
      assert.equal(readFileSync(path, 'utf8'), 'ALPHA\nbeta\nbeta\n');
    } finally {
      d.remove();
    }
  });

  test('tasks keeps its list across two turns', async () => {
    const r = agentWith(host);
    llm.push(oa.toolCall('tasks', { action: 'add', text: 'write tests' }, 't1'), oa.text('added'));
    assert.equal(await turn(r, 'remember to write tests'), 0);
    assert.equal(seen(llm.posts[1], 't1'), 'added task 1.\n[ ] 1. write tests');
    llm.push(oa.toolCall('tasks', { action: 'list' }, 't2'), oa.text('listed'));
    assert.equal(await turn(r, 'what is left?'), 0);
    assert.equal(llm.posts.length, 4);
    assert.equal(seen(llm.posts[3], 't2'), '[ ] 1. write tests');
    assert.equal(seen(llm.posts[3], 't1'), 'added task 1.\n[ ] 1. write tests', 'the first turn stays in history');
    assert.deepEqual(r.permissions, [], 'tasks is no_prompt');
  });

  test('get_weather and web_search in one batch, against a loopback server through toolsConfig', async () => {
    web.onGet('/Paris?format=j1', { body: CONDITIONS });
    web.onGet('/Paris?format=%l', { body: 'Paris, France\n' });
    web.push({ body: { answer: 'Lua is a language.', results: [{ title: 'Lua', url: 'https://www.lua.org', content: 'The language.' }] } });
    llm.push(
      oa.toolCalls([
        { id: 'w', name: 'get_weather', args: { location: 'Paris' } },
        { id: 's', name: 'web_search', args: { query: 'what is lua' } },
      ]),
      oa.text('reported'),
    );
    const r = agentWith(host);
    assert.equal(await turn(r, 'weather and lua'), 0);
    const got = toolMessages(llm.posts[1]);
    assert.equal(
      got.w,
      'Weather for Paris, France: Partly cloudy, 70°F (21°C), feels like 68°F; humidity 55%; wind 9 mph WSW; precipitation 0.1 in',
    );
    assert.equal(got.s, 'Answer: Lua is a language.\n\n1. Lua\n   https://www.lua.org\n   The language.');
    const search = web.posts[0]!;
    assert.equal(search.path, '/search');
    assert.equal(search.json.api_key, 'tvly-e2e');
    assert.equal(search.headers['user-agent'], 'clm (web_search)');
    assert.deepEqual(
      r.permissions.map((p) => p.name),
      ['get_weather'],
    );
  });
});

describe('fixture plugins', () => {
  let host: PluginHost;
  let hanging = 0;
  let closed = 0;
  before(async () => {
    host = await loadPlugins({ dirs: [dir('main')] });
    assert.deepEqual(host.errors, []);
  });
  after(() => host.close());

  describe('sandbox', () => {
    test('every removed global is absent; the kept libraries are there', async () => {
      llm.push(oa.toolCall('removed_globals', {}, 'g'), oa.text('ok'));
      const r = agentWith(host);
      assert.equal(await turn(r, 'probe'), 0);
      assert.equal(
        seen(llm.posts[1], 'g'),
        'os=nil io=nil debug=nil package=nil coroutine=nil dofile=nil loadfile=nil load=nil require=nil ' +
          'collectgarbage=nil print=nil warn=nil string.dump=nil | string=table table=table math=table ' +
          'utf8=table json=table http=table clm=table',
      );
    });

    test('escape attempts are contained (one batch of them)', async () => {
      const cases = ['string_metatable', 'gc_finalizer', 'dump_by_method', 'other_plugin', 'ctx_tamper'];
      llm.push(
        oa.toolCalls(cases.map((c) => ({ id: c, name: 'escape', args: { case: c } }))),
        oa.toolCall('hijack_probe', {}, 'h'),
        oa.text('ok'),
      );
      const r = agentWith(host);
      assert.equal(await turn(r, 'escape'), 0);
      assert.deepEqual(toolMessages(llm.posts[1]), {
        string_metatable: 'string_metatable: locked false X',
        gc_finalizer: 'gc_finalizer: false setmetatable: __gc metamethods are not allowed in plugins',
        dump_by_method: 'dump_by_method: nil nil nil',
        other_plugin: 'other_plugin: nil X',
        ctx_tamper: 'ctx_tamper: false false',
      });
      // The hijacking plugin only changed itself.
      assert.equal(seen(llm.posts[2], 'h'), 'a-secret hijacked');
    });
  });

  describe('limits', () => {
    for (const tool of ['mem_bomb', 'mem_bomb_table']) {
      test(`${tool}: the model sees "not enough memory"; the next call of the plugin works`, async () => {
        llm.push(oa.toolCall(tool, {}, 'm'), oa.toolCall('limits_ok', {}, 'k'), oa.text('ok'));
        const r = agentWith(host);
        assert.equal(await turn(r, 'bomb'), 0);
        assert.equal(seen(llm.posts[1], 'm'), '[tool failed: not enough memory]');
        assert.equal(seen(llm.posts[2], 'k'), 'ok, loop stopped: true');
        assert.deepEqual(
          r.results.map((x) => x.outcome),
          ['failed', 'ok'],
        );
      });
    }

    for (const tool of ['spin', 'spin_pcall']) {
      test(`${tool}: killed at its timeout_ms; the model sees a timeout; the loop is gone and the next call works`, async () => {
        llm.push(oa.toolCall(tool, {}, 's'), oa.toolCall('limits_ok', {}, 'k'), oa.text('ok'));
        const r = agentWith(host);
        assert.equal(await turn(r, 'spin'), 0);
        assert.match(seen(llm.posts[1], 's'), TIMEOUT_200);
        // limits_ok sleeps 60 ms and checks that SPINS did not move meanwhile.
        assert.equal(seen(llm.posts[2], 'k'), 'ok, loop stopped: true');
      });
    }
  });

  describe('http', () => {
    // Registered per test: beforeEach resets the server's routes.
    const routes = () => {
      web.onGet('/hello', { status: 203, body: 'hi there' });
      web.onGet('/hang', {
        handle: (_req, res) => {
          hanging++;
          res.on('close', () => {
            closed++;
          });
        },
      });
      web.script(() => ({ status: 201, body: 'created' }));
    };

    test('GET and POST: status and body reach the model; headers reach the server', async () => {
      routes();
      const refused = await closedPort();
      llm.push(
        oa.toolCalls([
          { id: 'g', name: 'http_get', args: { url: `${web.url}/hello`, headers: { 'X-Test': 'yes' } } },
          { id: 'p', name: 'http_post', args: { url: `${web.url}/items`, body: '{"a":1}' } },
          { id: 'x', name: 'http_get', args: { url: `http://127.0.0.1:${refused}/refused` } },
        ]),
        oa.text('ok'),
      );
      const r = agentWith(host);
      assert.equal(await turn(r, 'fetch'), 0);
      const got = toolMessages(llm.posts[1]);
      assert.equal(got.g, 'status=203 body=hi there');
      assert.equal(got.p, 'status=201 body=created');
      assert.match(got.x!, /^\[tool failed: request failed: .*ECONNREFUSED/);
      const get = web.requests.find((q) => q.path === '/hello')!;
      assert.equal(get.headers['x-test'], 'yes');
      assert.equal(get.headers['user-agent'], 'clm (http_get)');
      assert.equal(get.headers['content-type'], undefined);
      const post = web.posts[0]!;
      assert.equal(post.body, '{"a":1}');
      assert.equal(post.headers['content-type'], 'application/json');
      assert.equal(post.headers['user-agent'], 'clm (http_post)');
    });

    test('agent.cancel() while a request is pending: the server sees the connection close; the turn ends with ECANCELED', async () => {
      routes();
      hanging = 0;
      closed = 0;
      llm.push(oa.toolCall('http_get', { url: `${web.url}/hang` }, 'h'), oa.text('never'));
      const r = agentWith(host);
      const done = turn(r, 'hang');
      await until(() => hanging === 1, 30_000, 'the request to reach the server');
      r.agent.cancel();
      assert.equal(await done, ECANCELED);
      await until(() => closed === 1, 30_000, 'the server to see the connection closed');
      assert.deepEqual(r.results, [{ name: 'http_get', content: '[tool failed: cancelled by user]', outcome: 'failed' }]);
      assert.equal(llm.posts.length, 1, 'no further request after a cancel');
    });

    test('a tool timeout while a request is pending also closes the connection', async () => {
      routes();
      hanging = 0;
      closed = 0;
      llm.push(oa.toolCall('http_get_short', { url: `${web.url}/hang` }, 'h'), oa.text('ok'));
      const r = agentWith(host);
      assert.equal(await turn(r, 'hang briefly'), 0);
      // What the call waited on comes from the plugin host, within the agent's grace after a timeout.
      assert.match(seen(llm.posts[1], 'h'), /^\[tool failed: timed out after 200 ms( \(waiting in http\.get\))?\]$/);
      await until(() => closed === 1, 30_000, 'the server to see the connection closed');
    });
  });

  describe('tasks', () => {
    test('spawn + await_all, try_all failure, completing or returning with live tasks, a task that completes', async () => {
      llm.push(
        oa.toolCalls([
          { id: 'fan', name: 'fan_out', args: { words: ['a', 'b', 'c'] } },
          { id: 'try', name: 'try_fail', args: {} },
          { id: 'live', name: 'complete_live', args: {} },
          { id: 'ret', name: 'return_live', args: {} },
          { id: 'task', name: 'task_completes', args: {} },
        ]),
        oa.text('ok'),
      );
      const r = agentWith(host);
      assert.equal(await turn(r, 'tasks'), 0);
      const got = toolMessages(llm.posts[1]);
      assert.equal(got.fan, 'true:A true:B true:C');
      // try_all did not wait for the slow task (a 5 s sleep): it was cancelled, not finished.
      assert.equal(
        got.try,
        '[tool failed: task exploded (the slow task: cancelled=true, task cancelled: another task in clm.try_all failed)]',
      );
      assert.equal(got.live, '[tool failed: ctx:complete called while 1 task(s) were still running (they were cancelled)]');
      assert.equal(
        got.ret,
        '[tool failed: plugin returned without calling ctx:complete/ctx:fail (it returned with 1 live task(s), which were cancelled)]',
      );
      assert.match(got.task!, /^main: tasks\.lua:\d+: ctx:complete may only be called from the main tool coroutine, not from a task$/);
    });
  });

  describe('json', () => {
    test('null, empty tables, nesting, numbers and the 2 MiB decode limit, through a tool', { timeout: 60_000 }, async () => {
      const args = '{"none":null,"obj":{},"arr":[],"nested":{"a":[1,{"b":[true,null]}]},"n":3,"f":2.5}';
      llm.push(oa.toolCall('json_probe', args, 'j'), oa.text('ok'));
      const r = agentWith(host);
      assert.equal(await turn(r, 'json'), 0);
      assert.equal(
        // Node 22 and later add where the fault is, as line and column, to V8's message.
        seen(llm.posts[1], 'j').replace(/ \(line \d+ column \d+\)$/, ''),
        [
          '{"arr":{},"f":2.5,"n":3,"nested":{"a":[1,{"b":[true,null]}]},"none":null,"obj":{}}',
          'null=true',
          'empty_obj=true',
          'empty_arr=true',
          'deep=true',
          'int=integer float=float',
          'roundtrip=[null,{},{"x":{"y":{"z":"é\\u0000"}}}]',
          'big=nil, json.decode: input too large (2097154 > 2097152 bytes)',
          "bad=nil, json.decode: invalid JSON: Expected property name or '}' in JSON at position 1",
        ].join('\n'),
      );
    });
  });

  describe('concurrency', () => {
    test('two invocations of one plugin in one batch keep their own ctx, tasks and arguments', async () => {
      llm.push(
        oa.toolCalls([
          { id: 'slow', name: 'twice', args: '{"v":"A","ms":80}' },
          { id: 'fast', name: 'twice', args: '{"v":"B","ms":5}' },
        ]),
        oa.text('ok'),
      );
      const r = agentWith(host);
      assert.equal(await turn(r, 'twice'), 0);
      assert.deepEqual(toolMessages(llm.posts[1]), {
        slow: 'A task=A raw={"v":"A","ms":80}',
        fast: 'B task=B raw={"v":"B","ms":5}',
      });
      // The fast one finished first, while the slow one's task was still alive.
      assert.deepEqual(
        r.results.map((x) => x.content[0]),
        ['B', 'A'],
      );
    });
  });

  describe('bad input', () => {
    test('malformed JSON arguments from the model: a clear failure, no Lua runs; the next call works', async () => {
      llm.push(oa.toolCall('twice', '{"v":"A",', 'bad'), oa.toolCall('twice', { v: 'C', ms: 1 }, 'good'), oa.text('ok'));
      const r = agentWith(host);
      assert.equal(await turn(r, 'bad args'), 0);
      assert.equal(seen(llm.posts[1], 'bad'), '[tool failed: invalid tool arguments (malformed JSON)]');
      assert.equal(seen(llm.posts[2], 'good'), 'C task=C raw={"v":"C","ms":1}');
    });
  });
});

describe('watchdog', () => {
  let host: PluginHost;
  const logs: string[] = [];
  const RUNAWAY =
    /^\[tool failed: plugin evil: a single Lua library call \(e\.g\. string\.find or string\.match with a pathological pattern\) ran for \d+\.\d s without yielding; the call was aborted\]$/;
  before(async () => {
    host = await loadPlugins({ dirs: [dir('watchdog')], watchdogMs: 400, log: (l) => logs.push(l) });
    assert.deepEqual(host.errors, []);
  });
  after(() => host.close());

  test("a pattern bomb is stopped by the watchdog while another plugin's call in the same batch completes", {
    timeout: 30_000,
  }, async () => {
    llm.push(
      oa.toolCalls([
        { id: 'bomb', name: 'pattern_bomb', args: { delay_ms: 60 } },
        { id: 'good', name: 'good_echo', args: { text: 'one', ms: 5 } },
      ]),
      oa.toolCall('good_echo', { text: 'two' }, 'again'),
      oa.text('ok'),
    );
    const r = agentWith(host);
    // The main event loop keeps running while the bomb spins in the worker: main-thread timers
    // keep firing from 100 ms after the good call's result (the bomb starts 60 ms in) until the
    // bomb's own result. A loop blocked until the watchdog fired would get at most one tick there.
    let ticks = 0;
    let goodAt = 0;
    const probe = setInterval(() => {
      if (r.results.length !== 1) return;
      const now = performance.now();
      if (!goodAt) goodAt = now;
      else if (now - goodAt >= 100) ticks++;
    }, 10);
    const status = await turn(r, 'go');
    clearInterval(probe);
    assert.equal(status, 0);
    const got = toolMessages(llm.posts[1]);
    assert.equal(got.good, 'good one (call 1 of this state)');
    assert.match(got.bomb!, RUNAWAY);
    assert.deepEqual(
      r.results.map((x) => x.name),
      ['good_echo', 'pattern_bomb', 'good_echo'],
    );
    // The worker was restarted: the good plugin was loaded again and serves.
    assert.equal(seen(llm.posts[2], 'again'), 'good two (call 1 of this state)');
    assert.ok(logs.some((l) => l.includes('restarting the plugin host')));
    assert.ok(ticks >= 3, `the main event loop ran ${ticks} timer ticks while the bomb spun`);
  });
});

describe('watchdog, result finished just before a runaway', () => {
  let host: PluginHost;
  before(async () => {
    host = await loadPlugins({ dirs: [dir('watchdog')], watchdogMs: 400 });
  });
  after(() => host.close());

  test('a call that finished right before another call ran away keeps its result', { timeout: 30_000 }, async () => {
    llm.push(
      oa.toolCalls([
        { id: 'good', name: 'good_echo', args: { text: 'first' } },
        { id: 'bomb', name: 'pattern_bomb', args: {} },
      ]),
      oa.text('ok'),
    );
    const r = agentWith(host);
    assert.equal(await turn(r, 'go'), 0);
    const got = toolMessages(llm.posts[1]);
    assert.equal(got.good, 'good first (call 1 of this state)');
    assert.match(got.bomb!, /ran for \d+\.\d s without yielding/);
  });
});

describe('a plugin with a syntax error next to a good one', () => {
  let host: PluginHost;
  before(async () => {
    host = await loadPlugins({ dirs: [dir('broken')] });
  });
  after(() => host.close());

  test('the error names the plugin; the good tool works through the agent', async () => {
    assert.equal(host.errors.length, 1);
    assert.equal(host.errors[0]!.plugin, 'a_syntax');
    assert.match(host.errors[0]!.message, /^a_syntax\.lua:1: .*'}' expected/);
    assert.deepEqual(
      host.tools.map((t) => t.name),
      ['still_here'],
    );
    llm.push(oa.toolCall('still_here', { x: 'yes' }, 'g'), oa.text('ok'));
    const r = agentWith(host);
    assert.equal(await turn(r, 'go'), 0);
    assert.deepEqual(
      llm.posts[0]!.json.tools.map((t: any) => t.function.name),
      ['still_here'],
    );
    assert.equal(seen(llm.posts[1], 'g'), 'still here: yes');
  });
});
