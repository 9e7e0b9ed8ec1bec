#!/usr/bin/env node
// What checkpoints cost a turn (src/checkpoints), on a generated workspace of 10,000 files of
// 20,971 random bytes each (200 MiB) in 500 directories, through the library's Checkpoints API on
// dist/ (run `npm run build` first):
//
//   first snapshot            the first snapshot of a session in a workspace never seen (every blob hashed and written)
//   first tool after 3 s      the same first snapshot started in the background (warm) as the first request goes out: what the first tool still waits for
//   first, known workspace    the first snapshot of a new session where an earlier one worked (its index seeds the stat cache)
//   incremental               the "before" snapshot of a turn after one file changed between turns
//   unchanged turn            a whole turn's checkpoint cost (begin, before, end) when nothing changed
//   turn changing one file    a whole turn's checkpoint cost when its tool rewrites one file (the end snapshot, its diff, its refs)
//
// Each row: wall time (median of the rounds; first snapshots: one each), CPU of this process and
// of the git processes it ran (mean per round: children's CPU is counted in 10 ms ticks), and how
// many git processes a round ran. Goals (issue 25): incremental ≤ 150 ms, unchanged turn ≤ 20 ms.
// The load average is printed before and after: on a loaded machine wall times are not the cost.
//
// `--ab` then measures where a snapshot's time goes and what git's settings change, on the same
// workspace and shadow repository, every variant in each round (interleaved), each with an index
// file of its own: the git commands of a snapshot git writes (a session's first, or one of many
// changed files) as clm runs them, `git add -A` instead of a path list, index format 4
// (`feature.manyFiles`), `core.untrackedCache`, `index.threads`, optional locks, `gc.auto`; what
// telling "nothing changed" costs (`git status`, `git diff-files`, a walk in-process, the
// directory watch); a snapshot of one changed file stored in-process; and a bare `git --version`,
// the floor of any git process. With `--instructions` each git variant also runs once under
// callgrind: the instructions it executes hardly vary with the load.
//
//   node bench/checkpoints.mjs [--rounds N] [--files N] [--mb N] [--ab] [--instructions]
//
// Environment (the defaults of the options): CLM_BENCH_CP_FILES (10000), CLM_BENCH_CP_MB (200),
// CLM_BENCH_CP_ROUNDS (9).

import { createRequire, syncBuiltinESMExports } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, copyFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { haveValgrind, instructions, measure, median } from './measure.mjs';

const argv = process.argv.slice(2);
const opt = (name, env, dflt) => {
  const i = argv.indexOf(name);
  return Math.max(1, Number(i >= 0 ? argv[i + 1] : process.env[env]) || dflt);
};
const FILES = Math.max(10, opt('--files', 'CLM_BENCH_CP_FILES', 10_000));
const MB = opt('--mb', 'CLM_BENCH_CP_MB', 200);
const ROUNDS = opt('--rounds', 'CLM_BENCH_CP_ROUNDS', 9);
const AB = argv.includes('--ab');
const IR = argv.includes('--instructions');
const DIRS = Math.max(1, Math.round(FILES / 20));
/** How long the model answers before the first tool call, for the warm start's row. */
const MODEL_MS = 3000;

// Every process the library starts is counted (it starts only git).
const childProcess = createRequire(import.meta.url)('node:child_process');
let spawned = 0;
const realSpawn = childProcess.spawn;
childProcess.spawn = (...a) => {
  spawned++;
  return realSpawn(...a);
};
syncBuiltinESMExports();

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const DIST = join(ROOT, 'dist/checkpoints');
if (!existsSync(join(DIST, 'index.js'))) {
  process.stderr.write(`bench: ${DIST}/index.js not found; run \`npm run build\` first\n`);
  process.exit(2);
}
const { Checkpoints, gitAvailable } = await import(join(DIST, 'index.js'));
if (!gitAvailable()) {
  process.stdout.write('\nCheckpoints (bench/checkpoints.mjs): not run, git is not installed\n');
  process.exit(0);
}

/** CPU seconds of this process and of its children that ended (Linux: /proc; elsewhere NaN). */
function cpuNow() {
  const self = process.cpuUsage();
  let children = NaN;
  try {
    // Fields after the command's closing parenthesis: state is 3rd, cutime 16th, cstime 17th.
    const f = readFileSync('/proc/self/stat', 'utf8')
      .slice(readFileSync('/proc/self/stat', 'utf8').lastIndexOf(')') + 2)
      .split(' ');
    children = (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    /* not Linux */
  }
  return (self.user + self.system) / 1e6 + children;
}

/** Wall ms, CPU ms and git processes of each call of `f`, collected under `name`. */
const rows = new Map();
async function timed(name, f) {
  const c0 = cpuNow();
  const s0 = spawned;
  const t0 = performance.now();
  await f();
  const wall = performance.now() - t0;
  const r = rows.get(name) ?? { wall: [], cpu: 0, git: 0, n: 0 };
  r.wall.push(wall);
  r.cpu += (cpuNow() - c0) * 1000;
  r.git += spawned - s0;
  r.n++;
  rows.set(name, r);
}

const fmt = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : 'n/a');
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

const tmp = mkdtempSync(join(tmpdir(), 'clm-bench-cp-'));
try {
  const ws = join(tmp, 'ws');
  const state = join(tmp, 'state');
  // Random bytes (they do not compress), one size for every file.
  const size = Math.floor((MB * 1024 * 1024) / FILES);
  const pool = randomBytes(size * 64);
  for (let i = 0; i < FILES; i++) {
    const d = join(ws, `d${i % DIRS}`);
    if (i < DIRS) mkdirSync(d, { recursive: true });
    const at = (i * 7919) % (pool.length - size);
    const b = Buffer.from(pool.subarray(at, at + size));
    b.writeUInt32LE(i, 0);
    writeFileSync(join(d, `f${i}.bin`), b);
  }
  const loadBefore = load();

  const notices = [];
  const session = (id) => new Checkpoints({ stateDir: state, sessionId: id, workspace: ws, notice: (t) => notices.push(t) });

  const s1 = session('bench-1');
  s1.beginTurn('first', 0);
  await timed('first snapshot of a session', () => s1.beforeChanges());
  await s1.endTurn();

  // The same first snapshot started in the background as the first request goes out (Checkpoints.warm,
  // as the CLI does), in a shadow repository of its own: the first tool waits only for what is left
  // after the model's MODEL_MS of answering (a file changed meanwhile).
  const s0 = new Checkpoints({ stateDir: join(tmp, 'state-warm'), sessionId: 'bench-0', workspace: ws, notice: (t) => notices.push(t) });
  s0.beginTurn('first, warm', 0);
  const warm = s0.warm();
  await new Promise((r) => setTimeout(r, MODEL_MS));
  writeFileSync(join(ws, 'd2', 'f2.bin'), randomBytes(size));
  await timed(`first tool after ${MODEL_MS / 1000} s of model`, () => s0.beforeChanges());
  await warm;
  await s0.endTurn();
  await s0.close();

  const s2 = session('bench-2');
  s2.beginTurn('first of a second session', 0);
  await timed('first snapshot, known workspace', () => s2.beforeChanges());
  await s2.endTurn();

  for (let r = 0; r < ROUNDS; r++) {
    writeFileSync(join(ws, 'd0', 'f0.bin'), randomBytes(size));
    s2.beginTurn(`change ${r}`, 0);
    await timed('incremental (one file changed)', () => s2.beforeChanges());
    await s2.endTurn();
    await timed('turn that changes nothing', async () => {
      s2.beginTurn(`nothing ${r}`, 0);
      await s2.beforeChanges();
      await s2.endTurn();
    });
    await timed('turn that changes one file', async () => {
      s2.beginTurn(`one file ${r}`, 0);
      await s2.beforeChanges();
      writeFileSync(join(ws, 'd1', 'f1.bin'), randomBytes(size));
      await s2.endTurn();
    });
  }
  const goals = {
    'incremental (one file changed)': 150,
    'turn that changes nothing': 20,
  };
  const out = [
    '',
    `Checkpoints (bench/checkpoints.mjs): ${FILES} files of ${size} bytes (${((size * FILES) / 2 ** 20).toFixed(1)} MiB), ${DIRS} directories; ${ROUNDS} rounds; load average ${loadBefore} before, ${load()} after`,
    `  ${'what'.padEnd(32)}  ${'wall'.padStart(10)}  ${'cpu/round'.padStart(10)}  git/round`,
  ];
  for (const [name, r] of rows) {
    const wall = median(r.wall);
    const goal = goals[name];
    const verdict = goal ? `  goal ≤ ${goal} ms: ${wall <= goal ? 'met' : 'missed'}` : '';
    out.push(
      `  ${name.padEnd(32)}  ${fmt(wall).padStart(10)}  ${fmt(r.cpu / r.n).padStart(10)}  ${String(r.git / r.n).padStart(9)}${verdict}`,
    );
  }
  if (notices.length) out.push(`  notices: ${notices.join('; ')}`);
  process.stdout.write(`${out.join('\n')}\n`);

  if (AB) await ab(ws, state, size);
  await s1.close();
  await s2.close();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// ---- where the time goes, and git's settings A/B --------------------------------------------

async function ab(ws, state, size) {
  const { repoDirFor, ShadowRepo } = await import(join(DIST, 'shadow-repo.js'));
  const { gitEnv } = await import(join(DIST, 'git.js'));
  const { scanWorkspace, rescan, changedPaths } = await import(join(DIST, 'scan.js'));
  const { buildManifest, encodeManifest } = await import(join(DIST, 'manifest.js'));
  const dir = repoDirFor(state, ws);
  const home = join(dir, 'home');
  const seed = join(dir, 'index-bench-2');
  // The flags clm gives every git command (src/checkpoints/git.ts); a variant changes some.
  const base = {
    'core.hooksPath': '/dev/null',
    'core.fsmonitor': 'false',
    'core.autocrlf': 'false',
    'core.symlinks': 'true',
    'core.filemode': 'true',
    'core.untrackedCache': 'false',
    'gc.auto': '0',
  };
  const git = (args, o = {}) => {
    const conf = { ...base, ...o.conf };
    const flags = Object.entries(conf).flatMap(([k, v]) => (v === null ? [] : ['-c', `${k}=${v}`]));
    return ['git', ...flags, '--no-pager', ...args];
  };
  const envOf = (index, o = {}) => {
    const env = { ...gitEnv({ home, gitDir: join(dir, 'git'), workTree: ws, indexFile: index }), ...o.env };
    for (const [k, v] of Object.entries(env)) if (v === null) delete env[k];
    return env;
  };
  // clm hands the paths on stdin; as arguments here, so callgrind sees git itself.
  const UPDATE = ['update-index', '--add', '--remove', '--replace', '--', 'd0/f0.bin'];
  // Each variant: its own index (a copy of the session's), prepared once; one or more commands a round.
  const variants = [
    { name: "clm's git path: update-index (paths) + write-tree", steps: [[UPDATE], [['write-tree']]] },
    { name: '  the same, index.threads=1', conf: { 'index.threads': '1' }, steps: [[UPDATE], [['write-tree']]] },
    { name: '  the same, gc.auto as git sets it', conf: { 'gc.auto': null }, steps: [[UPDATE], [['write-tree']]] },
    { name: '  the same, optional locks taken', env: { GIT_OPTIONAL_LOCKS: null }, steps: [[UPDATE], [['write-tree']]] },
    {
      name: '  the same, index v4 (feature.manyFiles)',
      conf: { 'feature.manyFiles': 'true', 'core.untrackedCache': null },
      prepare: [['update-index', '--index-version', '4']],
      steps: [[UPDATE], [['write-tree']]],
    },
    { name: 'git add -A + write-tree', steps: [[['add', '-A']], [['write-tree']]] },
    {
      name: '  the same, core.untrackedCache=true',
      conf: { 'core.untrackedCache': 'true' },
      prepare: [
        ['update-index', '--untracked-cache'],
        ['add', '-A'],
      ],
      steps: [[['add', '-A']], [['write-tree']]],
    },
    { name: 'update-index alone (path list)', steps: [[UPDATE]] },
    { name: 'write-tree alone (nothing changed)', steps: [[['write-tree']]] },
    { name: 'nothing changed? git status --porcelain -uall', steps: [[['status', '--porcelain', '-uall']]] },
    {
      name: '  the same, core.untrackedCache=true',
      conf: { 'core.untrackedCache': 'true' },
      prepare: [
        ['update-index', '--untracked-cache'],
        ['status', '--porcelain', '-uall'],
      ],
      steps: [[['status', '--porcelain', '-uall']]],
    },
    { name: '  the same, optional locks taken', env: { GIT_OPTIONAL_LOCKS: null }, steps: [[['status', '--porcelain', '-uall']]] },
    { name: 'nothing changed? git diff-files --quiet', steps: [[['diff-files', '--quiet']]] },
    { name: 'a git process: git --version', steps: [[['--version']]] },
  ];
  let n = 0;
  for (const v of variants) {
    v.index = join(dir, `index-ab-${++n}`);
    copyFileSync(seed, v.index);
    for (const p of v.prepare ?? []) {
      const r = await measure(git(p, v), { env: envOf(v.index, v), cwd: ws });
      if (r.code !== 0) throw new Error(`${v.name}: ${p.join(' ')}: ${r.stderr}`);
    }
    v.wall = [];
    v.cpu = [];
  }
  const run = async (v) => {
    let wall = 0;
    let cpu = 0;
    for (const [args] of v.steps) {
      const r = await measure(git(args, v), { env: envOf(v.index, v), cwd: ws });
      if (r.code !== 0 && !(args[0] === 'diff-files' && r.code === 1)) throw new Error(`${v.name}: ${args.join(' ')}: ${r.stderr}`);
      wall += r.wall * 1000;
      cpu += r.cpu * 1000;
    }
    v.wall.push(wall);
    v.cpu.push(cpu);
  };
  // The workspace's own part of a snapshot, in-process: a walk, reading one directory again, the comparison, the manifest.
  const js = { 'walk the workspace (watch broken)': [], 'read one directory again + compare': [], [`manifest of ${FILES} files`]: [] };
  const scanOpts = { maxFileBytes: 16 << 20 };
  const repo = await ShadowRepo.open({ dir, workspace: ws, sessionId: 'ab-watch' });
  await repo.snapshot(scanOpts);
  const watchWall = [];
  const oneFile = [];
  for (let r = 0; r < ROUNDS; r++) {
    writeFileSync(join(ws, 'd0', 'f0.bin'), randomBytes(size));
    const order = r % 2 ? [...variants].reverse() : variants;
    for (const v of order) await run(v);
    let t = performance.now();
    const scan = await scanWorkspace(ws, scanOpts);
    js['walk the workspace (watch broken)'].push(performance.now() - t);
    t = performance.now();
    changedPaths(scan, await rescan(ws, scan, new Set(['d0']), scanOpts));
    js['read one directory again + compare'].push(performance.now() - t);
    t = performance.now();
    encodeManifest(buildManifest(scan));
    js[`manifest of ${FILES} files`].push(performance.now() - t);
    t = performance.now();
    await repo.snapshot(scanOpts);
    oneFile.push(performance.now() - t);
    t = performance.now();
    await repo.snapshot(scanOpts);
    watchWall.push(performance.now() - t);
  }
  repo.close();
  const head = `  ${'variant'.padEnd(48)}  ${'wall'.padStart(10)}  ${'cpu'.padStart(10)}`;
  const out = [
    '',
    `Checkpoints A/B (bench/checkpoints.mjs --ab): one file changed each round; git variants as whole processes (bash time: CPU at 1 ms), median of ${ROUNDS} rounds, interleaved; load average ${load()}`,
    head,
  ];
  for (const v of variants) out.push(`  ${v.name.padEnd(48)}  ${fmt(median(v.wall)).padStart(10)}  ${fmt(median(v.cpu)).padStart(10)}`);
  for (const [name, xs] of Object.entries(js)) out.push(`  ${`in-process: ${name}`.padEnd(48)}  ${fmt(median(xs)).padStart(10)}`);
  out.push(`  ${'in-process: a snapshot after one file changed'.padEnd(48)}  ${fmt(median(oneFile)).padStart(10)}`);
  out.push(`  ${'in-process: nothing changed, the watch says so'.padEnd(48)}  ${fmt(median(watchWall)).padStart(10)}`);
  // The fsmonitor git ships (a daemon) works on macOS and Windows; on Linux it needs a hook such as watchman.
  const fsm = await measure(git(['fsmonitor--daemon', 'status']), { env: envOf(variants[0].index), cwd: ws });
  out.push(`  core.fsmonitor (git's daemon): ${(fsm.stderr || fsm.stdout).trim().split('\n')[0] || `exit ${fsm.code}`}`);
  if (IR) {
    if (!haveValgrind()) out.push('  instructions: not measured, valgrind is not installed');
    else {
      out.push('', '  instructions executed (callgrind, one run of each variant after one file changed):');
      for (const v of variants) {
        writeFileSync(join(ws, 'd0', 'f0.bin'), randomBytes(size));
        let ir = 0;
        for (const [args] of v.steps) {
          const r = await instructions(git(args, v), { env: envOf(v.index, v), cwd: ws });
          ir += r.ir;
        }
        out.push(`  ${v.name.padEnd(48)}  ${(ir / 1e6).toFixed(1).padStart(10)} M`);
      }
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}
