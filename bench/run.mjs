#!/usr/bin/env node
// `npm run bench`: the speed figures of issues 2, 3 and 11, one large SSE event (issues 21, 27), checkpoints (issue 25), and the latency of a turn against a server that takes 500 ms per request, measured on the installed command (bin/clm.cjs → dist/cli.js,
// built by `npm ci`; nothing is built here).
//
// Every figure is a whole `node bin/clm.cjs ...` process, measured by bench/measure.mjs: wall time
// around the spawn, user+sys CPU to the millisecond, peak RSS from GNU time(1). The LLM is bench/mock-server.mjs in its own
// process, so clm's CPU and memory are measured alone. Each scenario gets one untimed warm-up run
// that also checks the result, then RUNS timed runs interleaved round-robin with the others
// (`node -e 0` included), so slow drift of the machine hits every row alike. NODE_EXTRA_CA_CERTS is
// removed from the environment of every measured process (Node 20 parses that file at every start,
// ~85 ms on this machine; users normally don't have it set).
//
// Exit status: 0 when every scenario ran (goals missed or not: benchmarks measure, they don't
// assert), 1 when a scenario failed to run, 2 when the CLI is missing.
//
// Environment: CLM_BENCH_RUNS (default 5), CLM_BENCH_CLI (default bin/clm.cjs).
// `npm run bench -- --budgets [--runs N]` runs bench/budgets.mjs alone: issue 27's budget table.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixtureText } from './fixture.mjs';
import { max, measure, median, min, missingTools, table } from './measure.mjs';
import { startMock } from './mock.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
// `--budgets`: only the budget table (bench/budgets.mjs), with its exit status.
if (process.argv.includes('--budgets')) {
  const r = spawnSync(process.execPath, [join(BENCH, 'budgets.mjs'), ...process.argv.slice(2).filter((a) => a !== '--budgets')], {
    stdio: 'inherit',
  });
  process.exit(r.status ?? 1);
}
const ROOT = dirname(BENCH);
const CLI = process.env.CLM_BENCH_CLI || join(ROOT, 'bin/clm.cjs');
const RUNS = Math.max(1, Number(process.env.CLM_BENCH_RUNS) || 5);
const RUN_TIMEOUT_MS = 120_000;
const FIXTURE_BYTES = 8192; // 128 lines of 64 bytes; `limit: 200` returns all of it
const MiB = 1024;
/** The latency scenario: every request answered after this long, like a hosted API's first byte. */
const DELAY_MS = 500;

if (!existsSync(CLI)) {
  process.stderr.write(`bench: ${CLI} not found; run \`npm ci\` (it builds dist/) first\n`);
  process.exit(2);
}
const missing = missingTools();
if (missing) {
  process.stderr.write(`bench: ${missing}\n`);
  process.exit(2);
}

// ---- environment ---------------------------------------------------------------------------

const tmp = mkdtempSync(join(tmpdir(), 'clm-bench-'));
const emptyPlugins = join(tmp, 'no-plugins');
mkdirSync(emptyPlugins);
const fixture = join(tmp, 'fixture.txt');
writeFileSync(fixture, fixtureText(FIXTURE_BYTES));
let runSeq = 0;

/** A clean environment for one measured process: fresh XDG dirs (no config.lua, no plugins dir). */
function cleanEnv(stateDir) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k === 'NODE_EXTRA_CA_CERTS' || k === 'NODE_OPTIONS' || k.startsWith('CLM_') || k.startsWith('XDG_')) delete env[k];
  }
  const home = join(tmp, `run-${++runSeq}`);
  for (const d of ['config', 'state', 'data', 'cache']) mkdirSync(join(home, d), { recursive: true });
  return {
    ...env,
    HOME: home,
    NO_COLOR: '1',
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_STATE_HOME: stateDir ?? join(home, 'state'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
  };
}

/** A config directory whose config.lua names the provider `bench`, of kind anthropic, at `base`. */
function anthropicConfig(base) {
  const dir = join(tmp, `anthropic-config-${++runSeq}`);
  mkdirSync(join(dir, 'clm'), { recursive: true });
  writeFileSync(
    join(dir, 'clm', 'config.lua'),
    `return { providers = { bench = { kind = "anthropic", url = ${JSON.stringify(`${base}/v1`)}, api_key = "k-0000" } } }\n`,
  );
  return dir;
}

// ---- mock LLM servers (bench/mock.mjs) ----------------------------------------------------

const mocks = [];
const mockCall = (mock, method, path) => mock.call(method, path);
function stopMocks() {
  for (const m of mocks) m.stop();
}

// ---- scenarios -----------------------------------------------------------------------------

const node = process.execPath;
const clm = (...a) => [node, CLI, ...a];

/** @type {{ id: string, label: string, mock?: string, env?: (m: any) => Record<string, string>, argv: (m: any) => string[], check?: (r: any, stats: any) => string | null, warm?: (m: any) => string[] }[]} */
const scenarios = [
  { id: 'node', label: 'node -e 0 (baseline)', argv: () => [node, '-e', '0'] },
  {
    id: 'version',
    label: 'clm -V',
    argv: () => clm('-V'),
    check: (r) => (/^clm \S+/.test(r.stdout) ? null : `unexpected output ${JSON.stringify(r.stdout)}`),
  },
  {
    id: 'text',
    label: 'one-shot text, -p <empty dir>',
    mock: 'text',
    argv: (m) => clm('-u', m.url, '-o', 'hi', '-p', emptyPlugins),
    check: (r, s) => textCheck(r, s),
  },
  {
    id: 'textSeeds',
    label: 'one-shot text, packaged seed plugins',
    mock: 'text',
    argv: (m) => clm('-u', m.url, '-o', 'hi'),
    check: (r, s) => textCheck(r, s),
    // The warm-up run lists the registered tools, to show the seed plugins really loaded.
    warm: (m) => clm('-u', m.url, '-o', 'hi', '--output-format', 'stream-json'),
  },
  {
    // A user's second and later runs: the state dir keeps the plugin schema cache, so the first
    // request does not wait for the Lua worker (the warm-up run fills the cache).
    id: 'textSeedsWarm',
    label: 'one-shot text, seed plugins, schema cache warm',
    mock: 'text',
    stateDir: join(tmp, 'persistent-state'),
    argv: (m) => clm('-u', m.url, '-o', 'hi'),
    check: (r, s) => textCheck(r, s),
  },
  {
    // No -u: the run finds its server (here the mock, named by CLM_LOCAL_SERVERS) while the rest
    // of start-up goes on; the distance to `text` is what looking costs the first request.
    id: 'textLocal',
    label: 'one-shot text, no -u (finds the local server)',
    mock: 'text',
    env: (m) => ({ CLM_LOCAL_SERVERS: `llamacpp=${m.base.slice('http://'.length)}` }),
    argv: () => clm('-o', 'hi', '-p', emptyPlugins),
    check: (r, s) => textCheck(r, s),
  },
  ...[10, 50, 250].map((n) => ({
    id: `rf${n}`,
    label: `${n} read_file rounds, -p <empty dir>`,
    mock: `read_file:${n}`,
    argv: (m) => clm('-u', m.url, '-o', `read ${fixture} with read_file, ${n} times`, '-p', emptyPlugins),
    check: (r, s) => {
      if (s.chat !== n + 1) return `mock saw ${s.chat} chat requests, expected ${n + 1}`;
      if (s.maxToolResults !== n) return `last request carried ${s.maxToolResults} tool results, expected ${n}`;
      if (s.lastToolBytes < FIXTURE_BYTES)
        return `tool result was ${s.lastToolBytes} bytes, expected the whole ${FIXTURE_BYTES}-byte fixture`;
      return textCheck(r, s, true);
    },
  })),
  {
    // The same loop in the Anthropic dialect (the mock answers POST …/messages in it): each
    // round's request is built from the blocks and bytes made for the rounds before.
    id: 'rf250anthropic',
    label: '250 read_file rounds, Anthropic dialect',
    mock: 'read_file:250',
    env: (m) => ({ XDG_CONFIG_HOME: anthropicConfig(m.base) }),
    argv: () => clm('--provider', 'bench', '-o', `read ${fixture} with read_file, 250 times`, '-p', emptyPlugins),
    check: (r, s) => {
      if (s.chat !== 251) return `mock saw ${s.chat} requests, expected 251`;
      if (s.maxToolResults !== 250) return `last request carried ${s.maxToolResults} tool results, expected 250`;
      return textCheck(r, s, true);
    },
  },
  // W2, ten tool rounds that each start a process: in the sandbox (the default where bwrap
  // works) and unconfined (--sandbox full), so the sandbox's cost is their ratio.
  ...[
    ['sh10', '10 shell_exec rounds, sandboxed', []],
    ['sh10full', '10 shell_exec rounds, --sandbox full', ['--sandbox', 'full']],
  ].map(([id, label, extra]) => ({
    id,
    label,
    mock: 'shell_exec:10',
    argv: (m) => clm('-u', m.url, '-o', 'run seq, 10 times', '-p', emptyPlugins, ...extra),
    check: (r, s) => {
      if (s.chat !== 11) return `mock saw ${s.chat} chat requests, expected 11`;
      if (s.lastToolBytes < 1892) return `tool result was ${s.lastToolBytes} bytes, expected seq's 1892`;
      return textCheck(r, s, true);
    },
  })),
  // Latency with a remote model: each request costs DELAY_MS, so a run's floor is its chat
  // requests × DELAY_MS; whatever clm waits for beyond that (a probe in front of the first
  // request, a retry) shows as the distance to the floor.
  {
    id: 'lat1',
    label: `plain turn, ${DELAY_MS} ms per request`,
    mock: `text@${DELAY_MS}`,
    chatRequests: 1,
    argv: (m) => clm('-u', m.url, '-o', 'hi', '-p', emptyPlugins),
    check: (r, s) => textCheck(r, s),
  },
  {
    id: 'lat10',
    label: `10 read_file rounds, ${DELAY_MS} ms per request`,
    mock: `read_file:10@${DELAY_MS}`,
    chatRequests: 11,
    argv: (m) => clm('-u', m.url, '-o', `read ${fixture} with read_file, 10 times`, '-p', emptyPlugins),
    check: (r, s) => (s.chat !== 11 ? `mock saw ${s.chat} chat requests, expected 11` : textCheck(r, s, true)),
  },
];

function textCheck(r, s, skipCount) {
  if (!skipCount && s.chat !== 1) return `mock saw ${s.chat} chat requests, expected 1`;
  if (!r.stdout.includes('This is the bench mock.')) return `reply missing from stdout: ${JSON.stringify(r.stdout.slice(0, 200))}`;
  return null;
}

const results = new Map(scenarios.map((s) => [s.id, []]));
const failures = [];
const seedTools = { names: null };

async function runOne(s, mock, argv) {
  if (mock) await mockCall(mock, 'POST', '/__reset');
  const env = { ...cleanEnv(s.stateDir), ...s.env?.(mock) };
  const r = await measure(argv, { env, cwd: env.HOME, timeoutMs: RUN_TIMEOUT_MS });
  const stats = mock ? await mockCall(mock, 'GET', '/__stats') : null;
  let problem = null;
  if (r.signal) problem = `killed (${r.signal})`;
  else if (r.code !== 0) problem = `exit status ${r.code}`;
  else if (s.check) problem = s.check(r, stats);
  return { r, stats, problem };
}

function tail(t, n = 15) {
  return t
    .trim()
    .split('\n')
    .slice(-n)
    .map((l) => `    ${l}`)
    .join('\n');
}

// ---- report --------------------------------------------------------------------------------

const col = (id, k) => (results.get(id) ?? []).map((r) => r[k]);

const ms = (s) => (Number.isFinite(s) ? `${(s * 1000).toFixed(0)} ms` : '–');
const sec = (s) => (Number.isFinite(s) ? `${s.toFixed(3)} s` : '–');
const mib = (k) => (Number.isFinite(k) ? `${(k / MiB).toFixed(1)} MiB` : '–');
const x = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '–');

function report(luaOut, browserOut, tuiOut = null) {
  const nodeWall = median(col('node', 'wall'));
  const nodeWallMin = min(col('node', 'wall'));
  const par = typeof availableParallelism === 'function' ? availableParallelism() : cpus().length;
  const out = [];
  out.push(
    `clm bench: ${RUNS} timed run(s) per scenario (median, min), interleaved; ${((Date.now() - startedAt) / 1000).toFixed(0)} s total`,
  );
  out.push(
    `machine: ${par} CPUs (${cpus()[0]?.model ?? 'unknown'}), load average ${loadAtStart.toFixed(2)} at start / ${loadavg()[0].toFixed(2)} at end, node ${process.version}, ${process.platform}/${process.arch}; ` +
      `NODE_EXTRA_CA_CERTS unset for clm and for the node -e 0 baseline (it was ${process.env.NODE_EXTRA_CA_CERTS ? 'set' : 'unset'} in the calling shell)`,
  );
  out.push(
    `clm: ${CLI}; mock LLM in its own process (streamed SSE); fixture ${FIXTURE_BYTES} bytes of text read whole per round ({"limit": 200});`,
  );
  out.push(
    `read_file scenarios use -p <empty dir> (engine only); "seed plugins" = default dir absent, the packaged plugins load` +
      (seedTools.names ? ` (tools registered: ${seedTools.names.join(', ')})` : ''),
  );
  out.push('');

  // Raw measurements.
  const rows = [];
  for (const s of scenarios) {
    const rs = results.get(s.id);
    if (!rs.length) {
      rows.push([s.label, 'failed', '', '', '', '', '', '', '']);
      continue;
    }
    const w = col(s.id, 'wall'),
      c = col(s.id, 'cpu'),
      m = col(s.id, 'rssKiB');
    rows.push([
      s.label,
      ms(median(w)),
      ms(min(w)),
      x(median(w) / nodeWall),
      ms(median(c)),
      ms(min(c)),
      mib(median(m)),
      mib(max(m)),
      s.mock ? ms(median(col(s.id, 'mockCpu'))) : '',
    ]);
  }
  out.push(table(['scenario', 'wall med', 'wall min', '÷ node', 'cpu med', 'cpu min', 'rss med', 'rss max', 'mock cpu'], rows));
  out.push('(cpu = user+sys of the clm process incl. its worker threads, to the millisecond; rss = peak resident set;');
  out.push(" mock cpu = the mock server's own CPU in that run, part of the wall time but not of clm's cpu)");
  const dW = median(col('textSeeds', 'wall')) - median(col('text', 'wall'));
  const dC = median(col('textSeeds', 'cpu')) - median(col('text', 'cpu'));
  const dM = median(col('textSeeds', 'rssKiB')) - median(col('text', 'rssKiB'));
  if (Number.isFinite(dW))
    out.push(`packaged seed plugins add ${ms(dW)} wall, ${ms(dC)} cpu, ${mib(dM)} peak RSS to a one-shot text turn (medians)`);
  out.push('');

  // Goals.
  const g = [];
  const status = (v, goal) => (!Number.isFinite(v) ? 'n/a' : v <= goal ? 'PASS' : 'MISS');
  const ratioMed = median(col('version', 'wall')) / nodeWall;
  const ratioMin = min(col('version', 'wall')) / nodeWallMin;
  g.push(['clm -V wall ÷ node -e 0 wall', x(ratioMed), x(ratioMin), '≤ 1.30×', status(ratioMed, 1.3)]);
  for (const [id, name] of [
    ['text', 'one-shot text, no plugins: wall'],
    ['textSeeds', 'one-shot text, seed plugins, first run: wall'],
    ['textSeedsWarm', 'one-shot text, seed plugins, later runs: wall'],
  ]) {
    const v = median(col(id, 'wall'));
    g.push([name, sec(v), sec(min(col(id, 'wall'))), '≤ 0.200 s', status(v, 0.2)]);
  }
  {
    const w = median(col('rf10', 'wall')),
      c = median(col('rf10', 'cpu')),
      m = median(col('rf10', 'rssKiB'));
    g.push(['10 read_file rounds: wall', sec(w), sec(min(col('rf10', 'wall'))), '≤ 0.300 s', status(w, 0.3)]);
    g.push(['10 read_file rounds: cpu (user+sys)', sec(c), sec(min(col('rf10', 'cpu'))), '≤ 0.250 s', status(c, 0.25)]);
    g.push(['10 read_file rounds: peak RSS', mib(m), mib(min(col('rf10', 'rssKiB'))), '≤ 100 MiB', status(m, 100 * MiB)]);
  }
  {
    const w = median(col('rf50', 'wall'));
    g.push(['50 read_file rounds: wall', sec(w), sec(min(col('rf50', 'wall'))), '≤ 1.000 s', status(w, 1)]);
  }
  const marg = (f) => {
    const c10 = f(col('rf10', 'cpu')),
      c50 = f(col('rf50', 'cpu')),
      c250 = f(col('rf250', 'cpu'));
    const low = (c50 - c10) / 40,
      high = (c250 - c50) / 200;
    return { low, high, ratio: high / low };
  };
  const mm = marg(median),
    mn = marg(min);
  g.push(['marginal cpu/round 250 ÷ 50 rounds', x(mm.ratio), x(mn.ratio), '≤ 2.00×', status(mm.ratio, 2)]);
  {
    const m = median(col('rf250', 'rssKiB'));
    g.push(['250 read_file rounds: peak RSS', mib(m), mib(min(col('rf250', 'rssKiB'))), '≤ 150 MiB', status(m, 150 * MiB)]);
  }
  {
    // Issue 23: the sandbox's cost on W2 (ten tool rounds, a process each).
    const r = median(col('sh10', 'wall')) / median(col('sh10full', 'wall'));
    const rMin = min(col('sh10', 'wall')) / min(col('sh10full', 'wall'));
    g.push(['W2, 10 shell_exec rounds: sandboxed ÷ full (wall)', x(r), x(rMin), '≤ 1.10×', status(r, 1.1)]);
  }
  out.push(table(['goal (issue 2, 3, 23)', 'median', 'min', 'goal', 'status'], g));
  out.push('');
  const lat = scenarios
    .filter((s) => s.chatRequests)
    .map((s) => {
      const floor = (s.chatRequests * DELAY_MS) / 1000;
      const w = col(s.id, 'wall');
      return [
        s.label,
        sec(median(w)),
        sec(min(w)),
        sec(floor),
        ms(median(w) - floor),
        x(median(w) / floor),
        `${s.chatRequests} chat + ${median(col(s.id, 'otherRequests'))} other`,
      ];
    });
  out.push(
    table([`latency (every request ${DELAY_MS} ms)`, 'wall med', 'wall min', 'floor', 'over floor', '÷ floor', 'requests (med)'], lat),
  );
  out.push(
    `(floor = chat requests × ${DELAY_MS} ms: what the model's answers alone cost; "other" = the connection probe's GETs, which run beside the chat requests)`,
  );
  const ms2 = (v) => (Number.isFinite(v) ? `${(v * 1000).toFixed(2)} ms` : '–');
  out.push(
    `marginal cpu per round: ${ms2(mm.low)} at 10→50 rounds, ${ms2(mm.high)} at 50→250 rounds ` +
      `(from medians; from mins: ${ms2(mn.low)} / ${ms2(mn.high)})`,
  );
  if (luaOut !== null) {
    out.push('');
    out.push('Lua runtime (bench/lua.mjs):');
    out.push(luaOut.trimEnd());
  }
  if (browserOut) {
    out.push('');
    out.push('clm/browser (bench/browser.mjs):');
    out.push(browserOut.trimEnd());
  }
  if (tuiOut) {
    out.push('');
    out.push(tuiOut.trimEnd());
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

/** Run bench/NAME.mjs when it exists, in a clean environment; its output, or null. A failure is recorded. */
function subScript(name, timeout) {
  const script = join(BENCH, `${name}.mjs`);
  if (!existsSync(script)) return null;
  process.stderr.write(`bench: bench/${name}.mjs\n`);
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.NODE_OPTIONS;
  const r = spawnSync(node, [script], { env, cwd: ROOT, encoding: 'utf8', timeout, maxBuffer: 16 << 20 });
  if (r.status !== 0)
    failures.push(
      `bench/${name}.mjs: ${r.error ? r.error.message : `exit status ${r.status ?? r.signal}`}\n  stderr:\n${tail(r.stderr ?? '')}`,
    );
  return r.stdout;
}

// ---- main ----------------------------------------------------------------------------------

const startedAt = Date.now();
const loadAtStart = loadavg()[0];
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    stopMocks();
    rmSync(tmp, { recursive: true, force: true });
    process.exit(130);
  });
}
let exitCode = 0;
try {
  const needed = [...new Set(scenarios.map((s) => s.mock).filter(Boolean))];
  const started = await Promise.all(needed.map((mode) => startMock(mode, fixture)));
  mocks.push(...started);
  const mockOf = new Map(started.map((m) => [m.mode, m]));

  // Warm-up (page cache, untimed) and a correctness check of every scenario.
  const live = [];
  for (const s of scenarios) {
    const mock = s.mock ? mockOf.get(s.mock) : undefined;
    process.stderr.write(`bench: warm-up ${s.label}\n`);
    const { r, problem } = await runOne(s, mock, (s.warm ?? s.argv)(mock));
    if (s.warm && !problem) {
      for (const line of r.stdout.split('\n')) {
        try {
          const ev = JSON.parse(line);
          if (ev.type === 'start' && Array.isArray(ev.tools)) seedTools.names = ev.tools;
        } catch {
          /* not an event line */
        }
      }
    }
    if (problem) {
      failures.push(`${s.label}: ${problem}\n  command: ${(s.warm ?? s.argv)(mock).join(' ')}\n  stderr:\n${tail(r.stderr)}`);
      continue;
    }
    live.push(s);
  }

  for (let i = 0; i < RUNS; i++) {
    process.stderr.write(`bench: round ${i + 1}/${RUNS}\n`);
    for (const s of live) {
      if (failures.some((f) => f.startsWith(`${s.label}:`))) continue;
      const mock = s.mock ? mockOf.get(s.mock) : undefined;
      const { r, stats, problem } = await runOne(s, mock, s.argv(mock));
      if (problem) {
        failures.push(`${s.label}: ${problem} (timed run ${i + 1})\n  stderr:\n${tail(r.stderr)}`);
        continue;
      }
      results.get(s.id).push({ ...r, mockCpu: stats ? stats.mockCpuMs / 1000 : 0, otherRequests: stats ? stats.other : 0 });
    }
  }

  // Lua runtime figures (issue 3), from their own script when it exists.
  const luaOut = subScript('lua', 180_000);

  // clm/browser figures (issue 11): bundle size, and a tool turn in headless Chromium when installed.
  process.stderr.write('bench: bench/browser.mjs\n');
  const b = spawnSync(node, [join(BENCH, 'browser.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 180_000, maxBuffer: 16 << 20 });
  if (b.status !== 0)
    failures.push(
      `bench/browser.mjs: ${b.error ? b.error.message : `exit status ${b.status ?? b.signal}`}\n  stderr:\n${tail(b.stderr ?? '')}`,
    );

  // Terminal toolkit figures (issues 10 and 13), from their own script.
  const tuiOut = subScript('tui', 300_000);

  // The interactive UI on a pty (issues 10 and 13), from its own script.
  const uiOut = subScript('ui', 600_000);

  // One large SSE event (issues 21 and 27), from its own script.
  const sseOut = subScript('sse', 600_000);

  // read_file over a 51 MB file (issue 27): the scan per line, from its own script.
  const readOut = subScript('read-file', 300_000);

  // Tool processes (issue 23): a spawn bare, behind the gate, and in the sandbox.
  const spawnRaw = subScript('tool-spawn', 600_000);
  const spawnOut = spawnRaw ? `Tool processes (bench/tool-spawn.mjs):\n${spawnRaw}` : null;

  // What checkpoints cost a turn (issue 25), from their own script.
  const cpOut = subScript('checkpoints', 900_000);

  report(luaOut, b.stdout, [spawnOut, tuiOut, uiOut, sseOut, readOut, cpOut].filter(Boolean).join('\n') || null);

  // Soak: 1,000 turns in one REPL session (bench/soak.mjs prints its own table).
  process.stderr.write('bench: bench/soak.mjs\n');
  const soakEnv = { ...process.env };
  delete soakEnv.NODE_EXTRA_CA_CERTS;
  delete soakEnv.NODE_OPTIONS;
  const soak = spawnSync(node, [join(BENCH, 'soak.mjs')], {
    env: soakEnv,
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 16 << 20,
  });
  process.stdout.write(`\n${soak.stdout ?? ''}`);
  if (soak.status !== 0)
    failures.push(
      `bench/soak.mjs: ${soak.error ? soak.error.message : `exit status ${soak.status ?? soak.signal}`}\n  stderr:\n${tail(soak.stderr ?? '')}`,
    );
} catch (e) {
  failures.push(`bench: ${e?.stack ?? e}`);
} finally {
  stopMocks();
  rmSync(tmp, { recursive: true, force: true });
}
if (failures.length) {
  process.stdout.write(`\nFAILED to run:\n${failures.map((f) => `- ${f}`).join('\n')}\n`);
  exitCode = 1;
}
process.exitCode = exitCode;
