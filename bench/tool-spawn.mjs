#!/usr/bin/env node
// What a tool process costs to start, measured on dist/ (run `npm ci` or `npm run build` first):
//
//   direct     spawn($SHELL, ['-c', cmd], { detached: true }) and wait for it — no gate, no watchdog
//   gated      spawnShellGroup(cmd) — the /bin/sh gate waits until the group is registered with
//              the watchdog (src/builtin-tools/group-reaper.ts), so it dies with clm on kill -9
//   sandboxed  spawnShellGroup(cmd) in the sandbox (workspace-write; bubblewrap): the gate inside
//              bwrap — what `shell_exec` does by default where the sandbox works
//
// The command is `true`. Sequential calls, interleaved in rounds so drift hits all alike; wall
// time per call (median of the rounds' means), the CPU the children used per call (from
// /proc/self/stat's cutime+cstime: less at the mercy of a loaded machine than wall time), and
// the one-time costs of the first call.
// Environment: CLM_BENCH_CALLS (default 200).

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
const { Sandbox } = await import(join(ROOT, 'dist/sandbox/sandbox.js'));

const CALLS = Math.max(10, Number(process.env.CLM_BENCH_CALLS) || 200);
const ROUNDS = 10;
const shell = process.env.SHELL || '/bin/sh';
const CMD = 'true';

const ws = mkdtempSync(join(tmpdir(), 'clm-bench-ws-'));
process.on('exit', () => rmSync(ws, { recursive: true, force: true }));
const sandbox = new Sandbox({ settings: { mode: 'workspace-write' }, cwd: ws });
const works = sandbox.availability();

function direct() {
  return new Promise((resolve) => {
    const c = spawn(shell, ['-c', CMD], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout.resume();
    c.stderr.resume();
    c.on('close', resolve);
  });
}

const gated = () => spawnShellGroup(CMD, { kind: 'shell', onOutput: () => {} }).exited;
const sandboxed = () => spawnShellGroup(CMD, { kind: 'shell', onOutput: () => {}, confine: (r) => sandbox.confine(r) }).exited;

let t0 = performance.now();
await gated(); // starts the watchdog
const first = performance.now() - t0;
const reaper = reaperPid();
t0 = performance.now();
if (works.ok) {
  const r = await sandboxed(); // makes the session's sandbox directory
  if (r.code !== 0) throw new Error(`a sandboxed \`${CMD}\` failed: ${JSON.stringify(r)}`);
}
const firstSandboxed = performance.now() - t0;

const variants = [['direct', direct], ['gated', gated], ...(works.ok ? [['sandboxed', sandboxed]] : [])];
/** CPU seconds used by the reaped children so far (cutime + cstime; clock ticks of 10 ms). */
function childCpu() {
  const f = readFileSync('/proc/self/stat', 'utf8')
    .slice(readFileSync('/proc/self/stat', 'utf8').lastIndexOf(')') + 2)
    .split(' ');
  return (Number(f[13]) + Number(f[14])) / 100;
}
const per = Object.fromEntries(variants.map(([n]) => [n, []]));
const cpu = Object.fromEntries(variants.map(([n]) => [n, 0]));
const perRound = CALLS / ROUNDS;
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, fn] of variants) {
    const s = performance.now();
    const c = childCpu();
    for (let i = 0; i < perRound; i++) await fn();
    per[name].push((performance.now() - s) / perRound);
    cpu[name] += childCpu() - c;
  }
}
const cpuMs = (name) => ((cpu[name] / CALLS) * 1000).toFixed(2);
const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};
const d = median(per.direct);
const g = median(per.gated);
const lines = [
  `tool process spawn (${CALLS} sequential \`${CMD}\` calls each, median of ${ROUNDS} rounds)`,
  `direct spawn, wait for exit          ${d.toFixed(2)} ms/call (children's cpu ${cpuMs('direct')} ms)`,
  `spawnShellGroup (gate + watchdog)    ${g.toFixed(2)} ms/call (children's cpu ${cpuMs('gated')} ms)`,
  `cost of dying with clm on kill -9    ${(g - d).toFixed(2)} ms/call (${((g / d - 1) * 100).toFixed(0)}%)`,
];
if (works.ok) {
  const s = median(per.sandboxed);
  lines.push(
    `sandboxed (workspace-write, bwrap)   ${s.toFixed(2)} ms/call (children's cpu ${cpuMs('sandboxed')} ms)`,
    `cost of the sandbox                  ${(s - g).toFixed(2)} ms/call over gated (goal ≤ 15 ms: ${s - g <= 15 ? 'PASS' : 'MISS'})`,
  );
} else lines.push(`sandboxed: not measured (${works.reason})`);
lines.push(
  `first call incl. watchdog start      ${first.toFixed(1)} ms (watchdog pid ${reaper})`,
  ...(works.ok ? [`first sandboxed call                 ${firstSandboxed.toFixed(1)} ms`] : []),
);
process.stdout.write(`${lines.join('\n')}\n`);
