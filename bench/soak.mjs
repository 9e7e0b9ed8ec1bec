#!/usr/bin/env node
// Soak: 1,000 turns in one headless REPL session (`clm` reading prompts from a pipe) against the
// fast mock LLM (bench/mock-server.mjs, its own process). Prints per-turn latency (median and
// 95th percentile for each tenth of the run) and the RSS of the clm process sampled as it goes,
// with a least-squares slope, so leaks and per-turn slowdowns show as numbers, not as a crash.
// Run by `npm run bench`, or alone: `node bench/soak.mjs` (CLM_SOAK_TURNS, default 1000).
// Measures only; exits 1 when the session could not be driven to the end.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMock } from './mock.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
const CLI = process.env.CLM_BENCH_CLI || join(ROOT, 'bin/clm.cjs');
const TURNS = Math.max(10, Number(process.env.CLM_SOAK_TURNS) || 1000);
const TURN_TIMEOUT_MS = 30_000;
const RSS_EVERY = Math.max(1, Math.floor(TURNS / 50));

const tmp = mkdtempSync(join(tmpdir(), 'clm-soak-'));
const children = [];
const cleanup = () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
};
process.on('exit', cleanup);

function env() {
  const e = { ...process.env };
  for (const k of Object.keys(e))
    if (k === 'NODE_EXTRA_CA_CERTS' || k === 'NODE_OPTIONS' || k.startsWith('CLM_') || k.startsWith('XDG_')) delete e[k];
  for (const d of ['config', 'state', 'data', 'cache']) mkdirSync(join(tmp, d), { recursive: true });
  return {
    ...e,
    HOME: tmp,
    NO_COLOR: '1',
    XDG_CONFIG_HOME: join(tmp, 'config'),
    XDG_STATE_HOME: join(tmp, 'state'),
    XDG_DATA_HOME: join(tmp, 'data'),
    XDG_CACHE_HOME: join(tmp, 'cache'),
  };
}

function rssKiB(pid) {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
};
function slope(points) {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  const num = points.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((a, p) => a + (p[0] - mx) ** 2, 0);
  return num / den;
}

const { url } = await startMock('text');
const plugins = join(tmp, 'no-plugins');
mkdirSync(plugins);
const clm = spawn(process.execPath, [CLI, '-u', url, '-p', plugins], { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
children.push(clm);
let stdout = '';
let stderr = '';
let prompts = 0;
let replies = 0;
let wake = null;
clm.stdout.setEncoding('utf8');
clm.stderr.setEncoding('utf8');
clm.stdout.on('data', (d) => {
  stdout += d;
  replies += d.split('assistant> ').length - 1;
  const n = stdout.split('user> ').length - 1;
  if (n !== prompts) {
    prompts = n;
    stdout = stdout.slice(stdout.lastIndexOf('user> '));
    prompts = 1;
    wake?.();
  }
});
clm.stderr.on('data', (d) => {
  stderr = (stderr + d).slice(-4000);
});

/** Resolves when the next prompt is printed (the previous turn is over). */
const nextPrompt = () =>
  new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no prompt within ${TURN_TIMEOUT_MS} ms\n${stderr}`)), TURN_TIMEOUT_MS);
    wake = () => {
      clearTimeout(t);
      wake = null;
      resolve();
    };
  });

const lat = [];
const rss = [];
let failed = null;
try {
  await nextPrompt();
  rss.push([0, rssKiB(clm.pid)]);
  const t0 = performance.now();
  for (let i = 1; i <= TURNS; i++) {
    const start = performance.now();
    const p = nextPrompt();
    clm.stdin.write(`soak turn ${i}\n`);
    await p;
    lat.push(performance.now() - start);
    if (i % RSS_EVERY === 0) rss.push([i, rssKiB(clm.pid)]);
  }
  const total = performance.now() - t0;
  clm.stdin.end('quit\n');
  await new Promise((r) => clm.on('close', r));
  const stats = await (await fetch(url.replace(/\/v1$/, '/__stats'))).json().catch(() => ({}));
  if (replies !== TURNS) throw new Error(`${replies} replies for ${TURNS} turns`);

  const tenth = Math.max(1, Math.floor(TURNS / 10));
  const rows = [];
  for (let k = 0; k < 10 && k * tenth < lat.length; k++) {
    const part = lat.slice(k * tenth, (k + 1) * tenth);
    rows.push(
      `| ${String(k * tenth + 1).padStart(5)}–${String(Math.min(TURNS, (k + 1) * tenth)).padEnd(5)} | ${pct(part, 0.5).toFixed(1).padStart(7)} | ${pct(part, 0.95).toFixed(1).padStart(7)} | ${Math.max(
        ...part,
      )
        .toFixed(1)
        .padStart(7)} |`,
    );
  }
  // RSS slope after the first tenth (start-up and JIT warm-up allocate once).
  const steady = rss.filter(([i]) => i >= tenth);
  const s = slope(steady);
  process.stdout.write(
    [
      `soak: ${TURNS} turns in one REPL session (headless, piped), ${(total / 1000).toFixed(1)} s, ${(TURNS / (total / 1000)).toFixed(0)} turns/s; ${replies} replies; mock: ${JSON.stringify(stats)}`,
      '',
      '| turns        | p50 ms  | p95 ms  | max ms  |',
      '|--------------|---------|---------|---------|',
      ...rows,
      '',
      `RSS: ${(rss[0][1] / 1024).toFixed(1)} MiB after start, ${(rss.at(-1)[1] / 1024).toFixed(1)} MiB after ${TURNS} turns, peak ${(Math.max(...rss.map((r) => r[1])) / 1024).toFixed(1)} MiB; ` +
        `slope after turn ${tenth}: ${(s * 100).toFixed(1)} KiB per 100 turns (${((s * 100) / 1024).toFixed(2)} MiB)`,
      '',
    ].join('\n'),
  );
} catch (e) {
  failed = e;
  process.stdout.write(`soak: FAILED after ${lat.length} turns: ${e?.message ?? e}\n`);
}
cleanup();
process.exitCode = failed ? 1 : 0;
