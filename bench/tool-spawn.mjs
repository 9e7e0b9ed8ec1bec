#!/usr/bin/env node
// What it costs that tool process groups die with clm even on kill -9 (src/builtin-tools/group-reaper.ts):
// each shell_exec command starts behind a /bin/sh gate that waits until its group is registered
// with the watchdog, then execs $SHELL. Measured on dist/ (run `npm ci` or `npm run build` first):
//
//   direct  spawn($SHELL, ['-c', cmd], { detached: true }) and wait for it — the old way
//   gated   spawnShellGroup(cmd) — gate, registration, exit note
//
// Sequential calls, interleaved in rounds so drift hits both alike; wall time per call (median of
// the rounds' means) and the watchdog's one-time start. Environment: CLM_BENCH_CALLS (default 200).

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const PG = join(ROOT, 'dist/builtin-tools/process-group.js');
if (!existsSync(PG)) {
  process.stderr.write(`bench: ${PG} not found; run \`npm run build\` first\n`);
  process.exit(2);
}
const { spawnShellGroup } = await import(PG);
const { reaperPid } = await import(join(ROOT, 'dist/builtin-tools/group-reaper.js'));

const CALLS = Math.max(10, Number(process.env.CLM_BENCH_CALLS) || 200);
const ROUNDS = 10;
const shell = process.env.SHELL || '/bin/sh';
const CMD = 'echo x';

function direct() {
  return new Promise((resolve) => {
    const c = spawn(shell, ['-c', CMD], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout.resume();
    c.stderr.resume();
    c.on('close', resolve);
  });
}

function gated() {
  return spawnShellGroup(CMD, { kind: 'shell', onOutput: () => {} }).exited;
}

const t0 = performance.now();
await gated(); // starts the watchdog
const first = performance.now() - t0;
const reaper = reaperPid();

const per = { direct: [], gated: [] };
const perRound = CALLS / ROUNDS;
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, fn] of [
    ['direct', direct],
    ['gated', gated],
  ]) {
    const s = performance.now();
    for (let i = 0; i < perRound; i++) await fn();
    per[name].push((performance.now() - s) / perRound);
  }
}
const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};
const d = median(per.direct),
  g = median(per.gated);
process.stdout.write(
  `tool process spawn (${CALLS} sequential \`${shell} -c '${CMD}'\` calls each, median of ${ROUNDS} rounds)\n` +
    `direct spawn, wait for exit          ${d.toFixed(2)} ms/call\n` +
    `spawnShellGroup (gate + watchdog)    ${g.toFixed(2)} ms/call\n` +
    `cost of dying with clm on kill -9    ${(g - d).toFixed(2)} ms/call (${((g / d - 1) * 100).toFixed(0)}%)\n` +
    `first call incl. watchdog start      ${first.toFixed(1)} ms (watchdog pid ${reaper})\n`,
);
