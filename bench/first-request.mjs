#!/usr/bin/env node
// What a one-shot plain turn costs before its first request reaches the server: what a person
// waits for at every start, however slow the model. Work a run defers until the request is out
// (the sandbox check, checkpoints, Node modules loaded on first use) is left out, so this shows
// what deferring gains where the whole run's figures cannot.
//
//   node bench/first-request.mjs [--runs N] [--instructions] BASE_DIR [OTHER_DIR]
//
// A build is a directory holding bin/clm.cjs and its dist/ (see bench/ab.mjs). The request goes
// through a proxy in this process to the bench mock; when its first bytes arrive, the proxy reads
// the main thread's CPU time (/proc/PID/schedstat, in ns), or with --instructions has callgrind
// dump its count of instructions so far (all threads; `callgrind_control -d`). Builds interleave,
// one untimed warm-up each; the state directory is kept between runs (the code cache warm).

import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { haveValgrind, median, quietEnv } from './measure.mjs';
import { startMock } from './mock.mjs';

const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const RUNS = Math.max(1, Number(runsAt >= 0 ? argv.splice(runsAt, 2)[1] : 9) || 9);
const irAt = argv.indexOf('--instructions');
const wantIr = irAt >= 0;
if (wantIr) argv.splice(irAt, 1);
if (!argv.length) {
  process.stderr.write('usage: node bench/first-request.mjs [--runs N] [--instructions] BASE_DIR [OTHER_DIR]\n');
  process.exit(2);
}
if (wantIr && !haveValgrind()) {
  process.stderr.write('first-request: --instructions needs valgrind\n');
  process.exit(2);
}
const builds = argv.map((d) => resolve(d));

const tmp = mkdtempSync(join(tmpdir(), 'clm-first-request-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const empty = join(tmp, 'no-plugins');
mkdirSync(empty);
const mock = await startMock('text');
const upstream = new URL(mock.url);

/** The process whose first request is awaited, and what was read when it arrived. */
let watched = { pid: 0, seen: false, cpuMs: NaN };
const proxy = createServer((client) => {
  const server = connect(Number(upstream.port), upstream.hostname);
  client.on('data', (d) => {
    if (!watched.seen) {
      watched.seen = true;
      if (wantIr) execFileSync('callgrind_control', ['-d', String(watched.pid)], { stdio: 'ignore' });
      else watched.cpuMs = Number(readFileSync(`/proc/${watched.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
    }
    server.write(d);
  });
  server.on('data', (d) => client.write(d));
  server.on('end', () => client.end());
  client.on('end', () => server.end());
  server.on('error', () => client.destroy());
  client.on('error', () => server.destroy());
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${proxy.address().port}${upstream.pathname}`;

/** One run of build `i`: main-thread CPU ms or millions of instructions at the first request. */
async function once(i, round) {
  const home = join(tmp, `home-${i}`);
  for (const d of ['config', 'state']) mkdirSync(join(home, d), { recursive: true });
  const env = quietEnv({ HOME: home, NO_COLOR: '1', XDG_CONFIG_HOME: join(home, 'config'), XDG_STATE_HOME: join(home, 'state') });
  const out = join(tmp, `callgrind.${i}.${round}`);
  const clm = [join(builds[i], 'bin/clm.cjs'), '-u', url, '-o', 'hi', '-p', empty];
  const [cmd, args] = wantIr
    ? ['valgrind', ['--tool=callgrind', '--trace-children=no', `--callgrind-out-file=${out}`, process.execPath, ...clm]]
    : [process.execPath, clm];
  const child = spawn(cmd, args, { env, stdio: 'ignore' });
  watched = { pid: child.pid, seen: false, cpuMs: NaN };
  const code = await new Promise((r) => child.on('close', r));
  if (code !== 0 || !watched.seen) throw new Error(`first-request: ${builds[i]}: exit ${code}${watched.seen ? '' : ', no request'}`);
  if (!wantIr) return watched.cpuMs;
  // The dump asked for at the request is the first numbered one.
  const m = /^(?:summary|totals): (\d+)/m.exec(readFileSync(`${out}.1`, 'utf8'));
  return m ? Number(m[1]) / 1e6 : NaN;
}

const load0 = loadavg()[0];
const results = builds.map(() => []);
for (let round = 0; round <= RUNS; round++) {
  process.stderr.write(`first-request: round ${round}/${RUNS}${round === 0 ? ' (warm-up)' : ''}\n`);
  for (let i = 0; i < builds.length; i++) {
    const v = await once(i, round);
    if (round > 0) results[i].push(v);
  }
}
const unit = wantIr ? 'M instructions (all threads)' : 'ms main-thread CPU';
process.stdout.write(`Before the first request, median of ${RUNS} (load ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)}):\n`);
builds.forEach((d, i) =>
  process.stdout.write(`  ${builds.length > 1 ? `${'AB'[i]} ` : ''}${median(results[i]).toFixed(1)} ${unit}  ${d}\n`),
);
mock.stop();
proxy.close();
process.exit(0);
