// The sandbox corpus: escape attempts as plugin fixtures (test/fixtures/lua-corpus), run through
// the real plugin runtime — libraries, metatables, deadline dodges, pattern/rep/json bombs, file
// and http abuse, task floods. Each must be contained: a clean Lua error or `nil, err` inside the
// call, or the call failed by its deadline, the memory cap or the watchdog; afterwards the
// plugin, and another plugin in the same worker, still serve.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPlugins, type PluginHost } from '../../src/lua/index.js';
import type { MockLlm } from '../fixtures/mock-llm.js';
import { tally } from '../fixtures/tally.js';
import { fixtures, invoke, ok, startLoopback } from './helpers.js';

let host: PluginHost;
let server: MockLlm;
let tmp: string;
let args: Record<string, string>;
before(async () => {
  ({ server } = await startLoopback());
  server.onGet('/big', { body: 'x'.repeat(5 * 1024 * 1024) });
  tmp = mkdtempSync(join(tmpdir(), 'clm-corpus-'));
  execFileSync('mkfifo', [join(tmp, 'fifo')]);
  writeFileSync(join(tmp, 'huge'), '');
  truncateSync(join(tmp, 'huge'), 100 * 1024 * 1024); // sparse: 100 MiB that take no disk
  symlinkSync(`/proc/${process.pid}/environ`, join(tmp, 'environ'));
  args = { environ: join(tmp, 'environ'), fifo: join(tmp, 'fifo'), huge: join(tmp, 'huge'), dir: tmp, base: server.url };
  // A watchdog far above any honest call on a loaded machine: here only the deadline and the
  // memory cap may stop a call. The runaways below get their own host with a short one.
  host = await loadPlugins({ dirs: [join(fixtures, 'lua-corpus')], watchdogMs: 10_000 });
  assert.deepEqual(host.errors, []);
});
after(async () => {
  await host.close();
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The plugin and its neighbour still answer. */
async function stillServing(): Promise<void> {
  assert.equal(await ok(host, 'ping'), 'pong');
  assert.equal(await ok(host, 'bystander_ping'), 'still here bystander-secret');
}

/** Run one attempt inside a call; it must complete with what the sandbox let it observe. */
async function attempt(name: string, expect: string | RegExp): Promise<void> {
  tally('escapes');
  const r = await invoke(host, 'attempt', { case: name, ...args });
  assert.ok(r.ok, `${name}: ${r.ok ? '' : r.error}`);
  const out = typeof r.out === 'string' ? r.out : Buffer.from(r.out).toString('latin1');
  if (typeof expect === 'string') assert.equal(out, expect, name);
  else assert.match(out, expect, name);
}

const BUDGET = 'plugin exceeded execution time budget (200 ms of CPU time)';
const RUNAWAY =
  /^plugin runaway: a single Lua library call \(e\.g\. string\.find or string\.match with a pathological pattern\) ran for \d+\.\d s without yielding; the call was aborted$/;

describe('libraries', () => {
  for (const lib of [
    'os',
    'io',
    'debug',
    'package',
    'coroutine',
    'require',
    'load',
    'loadstring',
    'dofile',
    'loadfile',
    'collectgarbage',
    'print',
    'warn',
    'module',
    'setfenv',
    'getfenv',
    'newproxy',
    'jit',
    'ffi',
  ]) {
    test(`${lib} is unreachable (_G, _ENV, rawget, _G._G, the libraries)`, () => attempt(`lib_${lib}`, 'absent'));
  }
  test('string.dump and string methods that would load code do not exist', async () => {
    await attempt('lib_string_dump', 'nil');
    await attempt('lib_string_methods_load', 'nil nil');
  });
  test('no global function that loads, executes or opens; clm offers exactly its API', async () => {
    await attempt('lib_globals_enumerated', 'none');
    await attempt('lib_clm_enumerated', 'await_all,config,read_file,sleep,spawn,tool_register,try_all,wait_any,write_file');
    await attempt('lib_math_random_seed_state', 'true');
  });
});

describe('metatables', () => {
  test('the string metatable cannot be changed: assignment, rawset, setmetatable', async () => {
    await attempt('mt_string_index', 'false X');
    await attempt('mt_string_rawset', 'false Y');
    await attempt('mt_string_setmetatable', 'false');
  });
  test('__gc finalizers are refused, also when added to the metatable afterwards', async () => {
    await attempt('mt_gc', 'false setmetatable: __gc metamethods are not allowed in plugins');
    await attempt('mt_gc_via_rawset', 'survived');
  });
  test('ctx cannot be altered in any way', () => attempt('mt_ctx', 'false false false'));
  test('an __index loop is a C stack overflow error; an error object keeps its __tostring', async () => {
    await attempt('mt_index_loop', 'false C stack overflow');
    await attempt('mt_tostring_error_object', 'false custom');
  });
  test("shadowing clm changes only this plugin's own global", async () => {
    await attempt('mt_clm_replace', 'fake');
    await stillServing();
  });
});

describe('deadline dodges', () => {
  test('yielding inside a sort comparator or a gsub callback is a clean error', async () => {
    await attempt('yield_in_sort', 'false attempt to yield across a C-call boundary');
    await attempt('yield_in_gsub', 'false attempt to yield across a C-call boundary');
  });
  for (const tool of [
    'dodge_spin_pcall',
    'dodge_sort',
    'dodge_gsub',
    'dodge_tostring',
    'dodge_close',
    'dodge_task',
    'dodge_many_tasks',
    'dodge_sleep_slices',
    'dodge_recursive_pcall',
  ]) {
    test(`${tool}: the call fails at its CPU budget; the plugin serves on`, async () => {
      tally('escapes');
      assert.deepEqual(await invoke(host, tool), { ok: false, error: BUDGET });
      await stillServing();
    });
  }
  test('a fork bomb of tasks ends (budget, memory or return) and the plugin serves on', async () => {
    tally('escapes');
    const r = await invoke(host, 'dodge_fork_bomb');
    assert.equal(r.ok, false);
    await stillServing();
  });
});

describe('bombs', () => {
  test('string.rep and string.format past any limit: clean errors', async () => {
    await attempt('rep_huge', 'false resulting string too large');
    await attempt('rep_sep_huge', 'false not enough memory');
    await attempt('format_width', /^false .*(invalid conversion|'%099999d')/);
  });
  test('json: a cycle, 3 MiB of input, 10,000 levels, 64 MiB of output: errors, never a crash', async () => {
    await attempt('json_cycle', 'false json.encode: tables nested deeper than 64 levels (a cycle?)');
    await attempt('json_decode_huge', 'nil json.decode: input too large (3145728 > 2097152 bytes)');
    await attempt('json_decode_deep', 'nil json.decode: nesting deeper than 200 levels');
    await attempt('json_encode_wide', 'false not enough memory');
  });
  test('table.concat of 64 MiB: not enough memory', () => attempt('concat_bomb', 'false not enough memory'));
  for (const tool of ['bomb_table', 'bomb_string_doubling', 'bomb_closures']) {
    test(`${tool}: the call fails with "not enough memory"; the plugin serves on`, async () => {
      tally('escapes');
      assert.deepEqual(await invoke(host, tool), { ok: false, error: 'not enough memory' });
      await stillServing();
    });
  }
  test('2,000 tasks holding large results: the call fails, the plugin serves on', async () => {
    tally('escapes');
    assert.equal((await invoke(host, 'bomb_task_results')).ok, false);
    await stillServing();
  });
});

describe('files', () => {
  test('devices, /proc pipes, directories, FIFOs and huge files are refused without blocking', async () => {
    await attempt('file_dev_zero', 'nil /dev/zero: not a regular file');
    await attempt('file_dev_random', 'nil /dev/urandom: not a regular file');
    await attempt('file_dir', /^nil .*(Is a directory|not a regular file)/);
    await attempt('file_fifo', `nil ${join(tmp, 'fifo')}: not a regular file`);
    await attempt('file_huge', `nil ${join(tmp, 'huge')}: file too large (104857600 bytes)`);
  });
  test("clm's own environment (it holds CLM_API_KEY) is not readable, through /proc/self or a link", async () => {
    const refused = 'nil Permission denied (a process environment holds credentials)';
    await attempt('file_proc_self', refused);
    await attempt('file_proc_link', refused);
  });
  test('a NUL in a path reads nothing', () => attempt('file_nul_path', 'true nil'));
  test('writing to /dev/full, a FIFO or a directory fails with nil, err', async () => {
    await attempt('file_write_dev_full', /^nil .*not a regular file/i);
    await attempt('file_write_fifo', /^nil (ENXIO|No such device or address|.*not a regular file)/i);
    await attempt('file_write_dir', /^nil (EISDIR|Is a directory|.*not a regular file)/i);
  });
});

describe('http', () => {
  test('only http and https: file:, data: and ftp: URLs are refused', async () => {
    for (const c of ['http_file_scheme', 'http_data_scheme', 'http_ftp_scheme']) {
      await attempt(c, /^nil http\.get: only http and https URLs are allowed \(got (file|data|ftp):\)$/);
    }
  });
  test('a body over 4 MiB, an injected header, a broken URL: nil, err', async () => {
    await attempt('http_too_big', 'nil response body too large (over 4194304 bytes)');
    await attempt('http_header_injection', /^nil .*invalid header value/s);
    await attempt('http_bad_url', /^nil .*Invalid URL/);
  });
  test('128 requests per call, 8 in flight per plugin', async () => {
    await attempt('http_per_call_limit', '129 http.get: request limit exceeded (at most 128 per tool call)');
    await attempt('http_in_flight_limit', 'nil http.get: too many requests in flight (at most 8 per plugin)');
  });
});

describe('tasks', () => {
  test('a flood of 100,000 tasks stops at the memory cap with a clean error', async () => {
    tally('escapes');
    const r = await invoke(host, 'attempt', { case: 'task_flood', ...args });
    // The spawn loop hits the cap (a clean error inside the call); tasks that failed the same way
    // and were never looked at then fail the call when it completes. Where the cap strikes
    // depends on the heap's layout: when it is storing a task just spawned into the table, that
    // task is out of the plugin's reach and still running when the call completes, and the host
    // cancels it and says so.
    if (r.ok) assert.match(String(r.out), /^false not enough memory spawned>0:true$/);
    else
      assert.match(
        r.error,
        /unobserved task error\(s\): not enough memory|^ctx:complete called while 1 task\(s\) were still running \(they were cancelled\)$/,
      );
    await stillServing();
  });
  test('wait_any over more than its limit of tasks is refused', () => attempt('wait_any_too_many', /^false .*wait_any/));
  test('no task can be started once the call has completed', async () => {
    await attempt('task_after_complete', 'done first');
    await attempt('last_spawn', 'false clm.spawn: the tool call has already completed');
    await stillServing();
  });
});

describe('C-level runaways (the watchdog)', () => {
  let wd: PluginHost;
  before(async () => {
    wd = await loadPlugins({ dirs: [join(fixtures, 'lua-corpus-runaway')], watchdogMs: 400 });
    assert.deepEqual(wd.errors, []);
  });
  after(() => wd.close());
  const alive = async () => assert.equal(await ok(wd, 'bystander_ping'), 'still here bystander-secret');

  test('find, match and class-pattern bombs are stopped; the third runaway disables the plugin', async () => {
    tally('escapes', 4);
    for (const tool of ['runaway_find', 'runaway_match', 'runaway_find_class']) {
      const r = await invoke(wd, tool);
      assert.equal(r.ok, false, tool);
      assert.match(r.ok ? '' : r.error, RUNAWAY, tool);
      await alive();
    }
    assert.deepEqual(await invoke(wd, 'runaway_find'), {
      ok: false,
      error: "tool 'runaway_find' is disabled: its plugin ran away too often",
    });
    await alive();
  });

  test('a gsub bomb and a spinning error handler end by budget, memory or watchdog; the others serve on', async () => {
    const contained =
      /^(plugin exceeded execution time budget \(200 ms of CPU time\)|not enough memory|plugin spinner: a single Lua library call .* without yielding; the call was aborted)$/;
    for (const tool of ['spin_gsub_bomb', 'spin_error_handler']) {
      tally('escapes');
      const r = await invoke(wd, tool);
      assert.equal(r.ok, false, tool);
      assert.match(r.ok ? '' : r.error, contained, tool);
      await alive();
    }
  });
});
