#!/usr/bin/env node
// What a config.lua costs at start-up: `clm -o hi -p <empty>` against the bench mock, with the
// config.lua and secrets.lua `clm setup` writes (one key filled in), and without a config.lua.
// config.lua is evaluated on every run, in a Lua state on the main thread that hands what it
// cannot bound to the worker thread (src/config/lua-state.ts). Three rows: no config.lua; the
// setup's config; and the same with config-cache.json removed from the state dir before every
// run — earlier builds kept an evaluation cache there, so with such a build as
// CLM_BENCH_CLI_BASE the two config rows are its warm and cold start. Wall time of whole
// processes, interleaved, and their CPU (user+sys, from GNU time(1) when it is there: less
// sensitive to a busy machine than wall time); median and min.
//
// Environment: CLM_BENCH_RUNS (default 15), CLM_BENCH_CLI (default dist/cli.js), and
// CLM_BENCH_CLI_BASE: a second CLI (another build) measured the same way, for a before/after.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH = dirname(fileURLToPath(import.meta.url));
const CLI = process.env.CLM_BENCH_CLI || join(dirname(BENCH), 'dist/cli.js');
const BASE = process.env.CLM_BENCH_CLI_BASE;
const RUNS = Math.max(1, Number(process.env.CLM_BENCH_RUNS) || 15);
if (!existsSync(CLI)) {
  process.stderr.write(`bench: ${CLI} not found; run \`npm run build\` first\n`);
  process.exit(2);
}

const env0 = { ...process.env };
for (const k of Object.keys(env0))
  if (k === 'NODE_EXTRA_CA_CERTS' || k === 'NODE_OPTIONS' || k.startsWith('CLM_') || k.startsWith('XDG_')) delete env0[k];
const mock = spawn(process.execPath, [join(BENCH, 'mock-server.mjs'), 'text'], { env: env0, stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve) => mock.stdout.once('data', (d) => resolve(String(d).trim().split('\n')[0])));

const tmp = mkdtempSync(join(tmpdir(), 'clm-cfg-bench-'));
const empty = join(tmp, 'no-plugins');
mkdirSync(empty);
const homes = {};
const KINDS = ['no config', 'setup config', 'setup config, no config-cache.json'];
for (const kind of KINDS) {
  const home = join(tmp, kind.replace(/\W/g, ''));
  mkdirSync(join(home, 'config'), { recursive: true });
  if (kind !== 'no config') {
    const env = { ...env0, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_STATE_HOME: join(home, 'state') };
    const r = spawnSync(process.execPath, [CLI, 'setup'], { env, encoding: 'utf8' });
    if (r.status !== 0) {
      process.stderr.write(`bench: clm setup: exit ${r.status}\n${r.stderr}`);
      mock.kill();
      rmSync(tmp, { recursive: true, force: true });
      process.exit(1);
    }
    const secrets = join(home, 'config', 'clm', 'secrets.lua');
    writeFileSync(
      secrets,
      readFileSync(secrets, 'utf8').replace('groq = "",', 'groq = "gsk-bench-0123456789abcdefghijklmnopqrstuvwxyz",'),
      { mode: 0o600 },
    );
  }
  homes[kind] = home;
}
const cacheOf = (home) => join(home, 'state', 'clm', 'config-cache.json');
const clis = BASE ? { base: BASE, this: CLI } : { this: CLI };
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const timeFile = join(tmp, 'time.txt');
const times = {};
const cpus = {};
for (let i = 0; i <= RUNS; i++) {
  for (const [name, cli] of Object.entries(clis)) {
    for (const [kind, home] of Object.entries(homes)) {
      const env = { ...env0, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_STATE_HOME: join(home, 'state') };
      if (kind === KINDS[2]) rmSync(cacheOf(home), { force: true });
      const argv = [process.execPath, cli, '-u', `http://127.0.0.1:${port}/v1`, '-p', empty, '-o', 'hi'];
      const t0 = process.hrtime.bigint();
      const r = TIME
        ? spawnSync(TIME, ['-f', '%U %S', '-o', timeFile, ...argv], { env, encoding: 'utf8' })
        : spawnSync(argv[0], argv.slice(1), { env, encoding: 'utf8' });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0) {
        process.stderr.write(`bench: ${name} ${kind}: exit ${r.status}\n${r.stderr}`);
        mock.kill(); // it shares our stderr: left running, it would hold a pipe reading it open
        rmSync(tmp, { recursive: true, force: true });
        process.exit(1);
      }
      if (i === 0) continue; // run 0 warms the page cache
      (times[`${name}: ${kind}`] ??= []).push(ms);
      if (TIME) {
        const [u, sy] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
        (cpus[`${name}: ${kind}`] ??= []).push((u + sy) * 1000);
      }
    }
  }
}
mock.kill();
rmSync(tmp, { recursive: true, force: true });

const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};
const rows = Object.entries(times).map(([k, v]) => [k, median(v), Math.min(...v), cpus[k] ? median(cpus[k]) : NaN]);
const w = Math.max(...rows.map((r) => r[0].length));
process.stdout.write(
  `one-shot text start-up: the setup's config.lua (also with config-cache.json removed before each run), and no config.lua (${RUNS} runs each, interleaved)\n`,
);
for (const [k, med, min, cpu] of rows) {
  process.stdout.write(
    `${k.padEnd(w)}  wall median ${med.toFixed(0).padStart(4)} ms  min ${min.toFixed(0).padStart(4)} ms${Number.isFinite(cpu) ? `  cpu median ${cpu.toFixed(0).padStart(4)} ms` : ''}\n`,
  );
}
for (const name of Object.keys(clis)) {
  for (const kind of KINDS.slice(1)) {
    const d = median(times[`${name}: ${kind}`]) - median(times[`${name}: no config`]);
    const dm = Math.min(...times[`${name}: ${kind}`]) - Math.min(...times[`${name}: no config`]);
    const dc = cpus[`${name}: ${kind}`] ? median(cpus[`${name}: ${kind}`]) - median(cpus[`${name}: no config`]) : NaN;
    process.stdout.write(
      `${name}: ${kind} adds ${d.toFixed(0)} ms wall (median), ${dm.toFixed(0)} ms (min)${Number.isFinite(dc) ? `, ${dc.toFixed(0)} ms cpu (median)` : ''} over no config.lua\n`,
    );
  }
}
