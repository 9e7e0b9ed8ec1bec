// Lua plugin runtime benchmarks (medians). Bundles src/lua the way the CLI ships it (one file
// plus dist-style lua-worker.js) into .bench-tmp/, then measures:
//   - loading the five seed plugins, worker start included     (goal <= 150 ms)
//   - tool calls per second, JSON arguments in, a string out    (goal >= 10,000/s)
//   - RSS per extra loaded plugin                               (goal <= 1 MiB)
//   - a runaway pattern: time to the culprit's failure past the
//     watchdog limit, and the main event loop's worst stall     (goals <= 2 s, <= 50 ms)
// Usage: node bench/lua.mjs [--quick] [--only calls] [--json FILE] (--json: the figures as one
// object, for bench/budgets.mjs)

import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { argAfter, median } from './measure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = join(root, '.bench-tmp', 'lua');
const quick = process.argv.includes('--quick');
const childMode = process.argv[2] === '--rss-child';

async function bundle() {
  const common = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    external: ['wasmoon'],
    logLevel: 'warning',
  };
  mkdirSync(join(tmp, 'dist'), { recursive: true });
  await build({ ...common, entryPoints: [join(root, 'src/lua/index.ts')], outfile: join(tmp, 'dist/lua.js') });
  await build({ ...common, entryPoints: [join(root, 'src/lua/worker.ts')], outfile: join(tmp, 'dist/lua-worker.js') });
  return import(pathToFileURL(join(tmp, 'dist/lua.js')).href);
}

function pluginDir(name, files) {
  const dir = join(tmp, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [f, body] of Object.entries(files)) writeFileSync(join(dir, f), body);
  return dir;
}

function call(tool, args) {
  return new Promise((resolve) => {
    const ac = new AbortController();
    let done = false;
    tool.invoke({
      name: tool.name,
      args,
      outputCap: 65536,
      timeoutMs: 0,
      signal: ac.signal,
      get done() {
        return done;
      },
      complete(out) {
        done = true;
        resolve({ ok: true, out });
      },
      fail(error) {
        done = true;
        resolve({ ok: false, error });
      },
      notify() {},
    });
  });
}

// A realistic small plugin (~50 lines): schema, string helpers, table.sort, string.format, json.
const REALISTIC = (i) => `
local units = { c = "Celsius", f = "Fahrenheit", k = "Kelvin" }
local function trim(s) return (string.gsub(s, "^%s+", ""):gsub("%s+$", "")) end
local function convert(v, from, to)
  local c = from == "c" and v or from == "f" and (v - 32) * 5 / 9 or v - 273.15
  if to == "c" then return c elseif to == "f" then return c * 9 / 5 + 32 else return c + 273.15 end
end
local history = {}
clm.tool_register("convert_${i}", {
  description = "Convert a temperature between units",
  params_schema = {
    type = "object",
    properties = {
      value = { type = "number", description = "the temperature" },
      from = { type = "string", enum = { "c", "f", "k" } },
      to = { type = "string", enum = { "c", "f", "k" } },
    },
    required = { "value", "from", "to" },
  },
  no_prompt = true,
  invoke = function(args, ctx)
    local from, to = trim(tostring(args.from)), trim(tostring(args.to))
    if not units[from] or not units[to] then ctx:fail("unknown unit") return end
    local r = convert(args.value, from, to)
    history[#history + 1] = r
    table.sort(history)
    ctx:complete(string.format("%.2f %s = %.2f %s (%s)", args.value, units[from], r, units[to],
      json.encode({ n = #history, min = history[1], max = history[#history] })))
  end,
})
`;

async function benchLoad(lua) {
  const runs = [];
  const n = quick ? 5 : 15;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const host = await lua.loadPlugins({ dirs: [lua.seedPluginDir()] });
    runs.push(performance.now() - t0);
    if (host.tools.length !== 5) throw new Error(`expected 5 seed tools, got ${host.tools.length}: ${JSON.stringify(host.errors)}`);
    await host.close();
  }
  return median(runs);
}

async function benchCalls(lua) {
  const dir = pluginDir('calls', {
    'greet.lua':
      'clm.tool_register("greet", { invoke = function(args, ctx) ctx:complete("Hello, " .. args.name .. "! You are " .. args.age .. ".") end })',
  });
  const host = await lua.loadPlugins({ dirs: [dir] });
  const tool = host.tools[0];
  const args = '{"name":"world","age":42,"tags":["a","b"]}';
  for (let i = 0; i < 2000; i++) await call(tool, args); // warm up
  const rates = [];
  const total = quick ? 5000 : 20000;
  const inFlight = 64;
  for (let round = 0; round < (quick ? 3 : 5); round++) {
    let next = 0;
    let failed = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < total) {
          next++;
          const r = await call(tool, args);
          if (!r.ok || r.out !== 'Hello, world! You are 42.') failed++;
        }
      }),
    );
    if (failed) throw new Error(`${failed} calls failed`);
    rates.push(total / ((performance.now() - t0) / 1000));
  }
  const lat = [];
  for (let i = 0; i < 300; i++) {
    const t0 = performance.now();
    await call(tool, args);
    lat.push(performance.now() - t0);
  }
  await host.close();
  return { rate: median(rates), latencyUs: median(lat) * 1000 };
}

/** Runs in a child with --expose-gc: process RSS with n realistic plugins loaded and called once. */
async function rssChild(lua, n) {
  const files = {};
  for (let i = 0; i < n; i++) files[`p${String(i).padStart(3, '0')}.lua`] = REALISTIC(i);
  const dir = pluginDir(`rss-${n}`, files);
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      global.gc();
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const host = await lua.loadPlugins({ dirs: [dir] });
  if (host.tools.length !== n) throw new Error(`expected ${n} tools: ${JSON.stringify(host.errors)}`);
  for (const t of host.tools) await call(t, '{"value":20,"from":"c","to":"f"}');
  await settle();
  process.stdout.write(JSON.stringify({ rss: process.memoryUsage().rss }));
  await host.close();
}

/** Separate processes for 1 and 1 + N plugins, so the difference is the plugins alone. */
function benchRss() {
  const N = 40;
  const rss = (n) =>
    JSON.parse(
      execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--rss-child', String(n)], {
        cwd: root,
        encoding: 'utf8',
      }),
    ).rss;
  const runs = [];
  for (let i = 0; i < (quick ? 1 : 3); i++) runs.push((rss(N + 1) - rss(1)) / N);
  return median(runs);
}

async function benchRunaway(lua) {
  const dir = pluginDir('runaway', {
    'evil.lua':
      'clm.tool_register("evil", { invoke = function(a, ctx) ctx:complete(tostring(string.rep("a", 300):find(".-.-.-.-b"))) end })',
    'good.lua': 'clm.tool_register("good", { invoke = function(a, ctx) ctx:complete("good") end })',
  });
  const detect = [];
  const stalls = [];
  for (let i = 0; i < (quick ? 1 : 3); i++) {
    const host = await lua.loadPlugins({ dirs: [dir] });
    const evil = host.tools.find((t) => t.name === 'evil');
    let worst = 0;
    let prev = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - prev);
      prev = now;
    }, 5);
    const t0 = performance.now();
    const r = await call(evil, '{}');
    detect.push(performance.now() - t0);
    clearInterval(probe);
    stalls.push(Math.max(0, worst - 5));
    if (r.ok) throw new Error('the runaway call succeeded?');
    const good = await call(
      host.tools.find((t) => t.name === 'good'),
      '{}',
    );
    if (!good.ok) throw new Error(`good plugin broken after restart: ${good.error}`);
    await host.close();
  }
  return { detectMs: median(detect), stallMs: median(stalls) };
}

if (childMode) {
  await rssChild(await import(pathToFileURL(join(tmp, 'dist/lua.js')).href), Number(process.argv[3]));
} else {
  const lua = await bundle();
  const callsOnly = argAfter('--only') === 'calls';
  const jsonFile = argAfter('--json');
  const load = callsOnly ? NaN : await benchLoad(lua);
  const calls = await benchCalls(lua);
  const rss = callsOnly ? NaN : benchRss();
  const run = callsOnly ? { detectMs: NaN, stallMs: NaN } : await benchRunaway(lua);
  if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ loadMs: load, calls, rssPerPlugin: rss, runaway: run }));
  const rows = [
    ['load 5 seed plugins incl. worker start', `${load.toFixed(1)} ms`, '<= 150 ms'],
    ['tool calls/s (JSON args -> string, 64 in flight)', `${Math.round(calls.rate)}/s`, '>= 10000/s'],
    ['one call round trip (1 in flight)', `${calls.latencyUs.toFixed(0)} us`, ''],
    ['RSS per extra plugin', `${(rss / 1024 / 1024).toFixed(2)} MiB`, '<= 1 MiB'],
    ['runaway pattern: call to failure (watchdog 1000 ms)', `${run.detectMs.toFixed(0)} ms`, '<= watchdog + 2000 ms'],
    ['main event loop worst stall meanwhile', `${run.stallMs.toFixed(1)} ms`, '<= 50 ms'],
  ];
  const w = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c].length), 6));
  console.log(`lua runtime (medians)`);
  for (const r of [['metric', 'value', 'goal'], ...rows]) console.log(r.map((x, c) => x.padEnd(w[c])).join('  '));
}
