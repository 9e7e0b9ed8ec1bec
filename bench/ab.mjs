#!/usr/bin/env node
// Start-up A/B: two builds of clm measured side by side in one run, interleaved round-robin with
// `node -e 0`, so a loaded machine's drift hits every row alike. Each row: wall time, CPU
// (user+sys) and peak RSS of whole processes (median and min of RUNS), and with --instructions
// the instructions each executes under callgrind (one run each: the count hardly varies, however
// loaded the machine). A build is a directory holding bin/clm.cjs and its dist/ (a worktree, or a
// copy of one: `cp -r bin dist package.json plugins /tmp/base && ln -s $PWD/node_modules /tmp/base`).
//
//   node bench/ab.mjs [--runs N] [--instructions] [--only ID,ID] [BASE_DIR [OTHER_DIR]]
//
// Without directories it measures this checkout alone. Scenarios (ids): node, version (clm -V),
// text (one-shot plain turn, -p <empty dir>, state directory kept between runs: the code cache
// warm), cold (the same with a fresh state directory each run: the first run after an install),
// seeds (one-shot with the packaged seed plugins, state kept), rf10 (ten read_file rounds).

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixtureText } from './fixture.mjs';
import { haveValgrind, instructions, measure, median, min, missingTools, quietEnv, table } from './measure.mjs';
import { startMock } from './mock.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const RUNS = Math.max(1, Number(opt('--runs')) || 9);
const only = opt('--only')?.split(',');
let wantIr = false;
if (argv.includes('--instructions')) {
  argv.splice(argv.indexOf('--instructions'), 1);
  wantIr = true;
}
const dirs = argv.length ? argv.map((d) => resolve(d)) : [dirname(BENCH)];
if (argv.length === 1) dirs.push(dirname(BENCH));
for (const d of dirs) {
  if (!existsSync(join(d, 'bin/clm.cjs'))) {
    process.stderr.write(`ab: ${d}/bin/clm.cjs not found\n`);
    process.exit(2);
  }
}
const missing = missingTools();
if (missing) {
  process.stderr.write(`ab: ${missing}\n`);
  process.exit(2);
}
if (wantIr && !haveValgrind()) {
  process.stderr.write('ab: --instructions needs valgrind\n');
  process.exit(2);
}

const tmp = mkdtempSync(join(tmpdir(), 'clm-ab-'));
const empty = join(tmp, 'no-plugins');
mkdirSync(empty);
const fixture = join(tmp, 'fixture.txt');
writeFileSync(fixture, fixtureText(8192));
let homeSeq = 0;
function home(keep) {
  const h = keep ? join(tmp, `keep-${keep}`) : join(tmp, `home-${++homeSeq}`);
  for (const d of ['config', 'state']) mkdirSync(join(h, d), { recursive: true });
  return quietEnv({ HOME: h, NO_COLOR: '1', XDG_CONFIG_HOME: join(h, 'config'), XDG_STATE_HOME: join(h, 'state') });
}

const mocks = { text: await startMock('text'), rf10: await startMock('read_file:10', fixture) };
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const node = process.execPath;
const reply = (r) => (r.stdout.includes('This is the bench mock.') ? null : `no reply in ${JSON.stringify(r.stdout.slice(0, 200))}`);
const scenarios = [
  { id: 'node', argv: () => [node, '-e', '0'], env: () => home() },
  {
    id: 'version',
    cli: true,
    argv: (c) => [node, c, '-V'],
    env: () => home(),
    check: (r) => (/^clm \S+\n$/.test(r.stdout) ? null : 'no version'),
  },
  {
    id: 'text',
    cli: true,
    argv: (c) => [node, c, '-u', mocks.text.url, '-o', 'hi', '-p', empty],
    env: (d) => home(`text-${d}`),
    check: reply,
  },
  { id: 'cold', cli: true, argv: (c) => [node, c, '-u', mocks.text.url, '-o', 'hi', '-p', empty], env: () => home(), check: reply },
  { id: 'seeds', cli: true, argv: (c) => [node, c, '-u', mocks.text.url, '-o', 'hi'], env: (d) => home(`seeds-${d}`), check: reply },
  {
    id: 'rf10',
    cli: true,
    argv: (c) => [node, c, '-u', mocks.rf10.url, '-o', `read ${fixture} with read_file, 10 times`, '-p', empty],
    env: (d) => home(`rf10-${d}`),
    check: reply,
  },
].filter((s) => !only || only.includes(s.id));

// Rows: node once, each CLI scenario once per build.
const rows = [];
for (const s of scenarios) {
  if (!s.cli) rows.push({ s, label: s.id, dir: null, runs: [] });
  else
    dirs.forEach((d, i) =>
      rows.push({ s, label: `${s.id} [${dirs.length > 1 ? (i === 0 ? 'A' : 'B') : 'this'}]`, dir: d, di: i, runs: [] }),
    );
}
const argvOf = (row) => row.s.argv(row.dir && join(row.dir, 'bin/clm.cjs'));
const envOf = (row) => row.s.env(row.di ?? 0);

const started = Date.now();
const load0 = loadavg()[0];
for (let i = 0; i <= RUNS; i++) {
  process.stderr.write(`ab: round ${i}/${RUNS}${i === 0 ? ' (warm-up, untimed)' : ''}\n`);
  for (const row of rows) {
    const r = await measure(argvOf(row), { env: envOf(row), cwd: tmp });
    const problem = r.signal ? `killed (${r.signal})` : r.code !== 0 ? `exit ${r.code}: ${r.stderr.slice(-300)}` : row.s.check?.(r);
    if (problem) {
      process.stderr.write(`ab: ${row.label}: ${problem}\n`);
      process.exit(1);
    }
    if (i > 0) row.runs.push(r);
  }
}
if (wantIr) {
  for (const row of rows) {
    process.stderr.write(`ab: instructions, ${row.label}\n`);
    row.ir = (await instructions(argvOf(row), { env: envOf(row), cwd: tmp })).ir;
  }
}

const nodeRow = rows.find((r) => r.s.id === 'node');
const col = (row, k) => row.runs.map((r) => r[k]);
const ms = (s) => (Number.isFinite(s) ? `${(s * 1000).toFixed(1)} ms` : '–');
const x = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '–');
const head = ['scenario', 'wall med', 'wall min', 'cpu med', 'cpu min', '÷ node (cpu med)', 'rss med'];
if (wantIr) head.push('instructions', '÷ node (instr.)');
const out = rows.map((row) => {
  const cpu = median(col(row, 'cpu'));
  const r = [
    row.label,
    ms(median(col(row, 'wall'))),
    ms(min(col(row, 'wall'))),
    ms(cpu),
    ms(min(col(row, 'cpu'))),
    nodeRow ? x(cpu / median(col(nodeRow, 'cpu'))) : '',
    `${(median(col(row, 'rssKiB')) / 1024).toFixed(1)} MiB`,
  ];
  if (wantIr) r.push(`${(row.ir / 1e6).toFixed(1)} M`, nodeRow ? x(row.ir / nodeRow.ir) : '');
  return r;
});
process.stdout.write(
  `A/B start-up, ${RUNS} interleaved runs each (${((Date.now() - started) / 1000).toFixed(0)} s, load ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}, node ${process.version})\n` +
    dirs.map((d, i) => `${dirs.length > 1 ? (i === 0 ? 'A' : 'B') : 'this'}: ${d} (${basename(d)})`).join('\n') +
    `\n${table(head, out)}\n`,
);
process.exit(0); // the mocks (child processes) would keep this process alive
