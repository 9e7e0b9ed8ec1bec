#!/usr/bin/env node
// `npm run bench -- --budgets`: the start-up and reaction figures of issue 27, each as a ratio to
// a reference measured in the same run, against its budget, in one table. `.ci/run` runs it after
// the tests: it exits 1 only when a figure is over twice its budget, so the noise of a loaded
// shared machine does not fail CI and a real regression does. Timing never goes into a test.
//
//   node bench/budgets.mjs [--runs N]      (or `npm run bench -- --budgets [--runs N]`)
//
// Whole processes (bench/measure.mjs: wall time around the spawn, peak RSS and page faults from GNU
// time), run round-robin with `node -e 0` so a loaded machine's drift hits every row alike, one
// untimed warm-up each; under the table, the one-shot's floor: the same request made with node:http
// alone, and the page faults of each. The state directory is kept between a scenario's runs, as it
// is between a user's runs (the code cache and the plugin schema cache are warm). On the
// pseudo-terminal (node-pty, @xterm/headless as the screen): the UI's first frame from spawn to the
// banner on screen, against `node -e 0` spawned on the same kind of pty; a key's echo, from the
// write to the pty until the typed text is in the prompt's cells, with the UI idle, while a reply
// streams at 200 chunks/s, and typed as soon as the first frame is on screen (the start goes on);
// a reply's first words, from the Enter to their cells, with the mock answering at once. The tool
// loop's marginal CPU per round (10, 50 and 250 read_file rounds in the same round-robin). From the quick runs of bench/ui.mjs and bench/lua.mjs: bytes and
// render work per streamed chunk, the UI's RSS slope per turn, and the time per plugin tool call.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixtureText } from './fixture.mjs';
import { measure, median, missingTools, quietEnv, table } from './measure.mjs';
import { startMock } from './mock.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
const CLI = process.env.CLM_BENCH_CLI || join(ROOT, 'bin/clm.cjs');
const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const RUNS = Math.max(1, Number(runsAt >= 0 ? argv[runsAt + 1] : process.env.CLM_BENCH_RUNS) || 7);
const KEYS = 40; // keystrokes per echo scenario
const REPLIES = 20; // prompts in the reply scenario
const CHUNK_MS = 5; // 200 chunks/s
const FAIL_AT = 2; // × budget

const missing = missingTools();
if (missing) {
  process.stderr.write(`budgets: ${missing}\n`);
  process.exit(2);
}
const { spawn: ptySpawn } = await import('@lydell/node-pty');
const { default: xterm } = await import('@xterm/headless');

const tmp = mkdtempSync(join(tmpdir(), 'clm-budgets-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (s) => process.stderr.write(`budgets: ${s}\n`);
const load = () => loadavg()[0].toFixed(1);

const empty = join(tmp, 'no-plugins');
mkdirSync(empty);
const fixture = join(tmp, 'fixture.txt');
writeFileSync(fixture, fixtureText(8192));
const homes = new Map();
/** A home kept per key: the state directory persists between a scenario's runs. */
function home(key) {
  const h = join(tmp, `home-${key}`);
  if (!homes.has(key)) {
    for (const d of ['config', 'state', 'data', 'cache']) mkdirSync(join(h, d), { recursive: true });
    homes.set(key, h);
  }
  return h;
}
const envOf = (h, extra = {}) =>
  quietEnv({
    HOME: h,
    XDG_CONFIG_HOME: join(h, 'config'),
    XDG_STATE_HOME: join(h, 'state'),
    XDG_DATA_HOME: join(h, 'data'),
    XDG_CACHE_HOME: join(h, 'cache'),
    ...extra,
  });

// ---- mock LLMs (bench/mock-server.mjs, each in its own process) ----------------------------

const text = (await startMock('text')).url;
const rf10 = (await startMock('read_file:10', fixture)).url;
const rf50 = (await startMock('read_file:50', fixture)).url;
const rf250 = (await startMock('read_file:250', fixture)).url;
/** The UI scenarios' mock: a short reply, or a stream of deltas at 200 chunks/s (plan()). */
const ui = await startMock('plan');
const uiBase = ui.url;

// ---- a process on a pty --------------------------------------------------------------------

function onPty(argv, env) {
  const term = new xterm.Terminal({ cols: 110, rows: 32, allowProposedApi: true });
  const t0 = performance.now();
  const pty = ptySpawn(argv[0], argv.slice(1), { name: 'xterm-256color', cols: 110, rows: 32, cwd: env.HOME, env });
  const s = { pty, term, t0, raw: '', waiters: new Set() };
  s.exited = new Promise((r) => pty.onExit(r));
  pty.onData((d) => {
    if (s.raw.length < 1_000_000) s.raw += d;
    term.write(d, () => {
      for (const w of s.waiters) w();
    });
  });
  term.onData((d) => pty.write(d)); // the terminal's answers to clm's queries
  /** The screen's text; untrimmed, a typed trailing space is there too. */
  s.screen = (trim = true) => {
    const b = term.buffer.active;
    const out = [];
    for (let r = 0; r < term.rows; r++) out.push(b.getLine(b.viewportY + r)?.translateToString(trim) ?? '');
    return out.join('\n');
  };
  /** Resolves at the first screen update after which pred() holds; rejects after ms. */
  s.until = (pred, what, ms = 30_000) =>
    new Promise((ok, fail) => {
      if (pred()) return ok(performance.now());
      const timer = setTimeout(() => {
        s.waiters.delete(w);
        fail(new Error(`timed out waiting for ${what}; screen:\n${s.screen()}`));
      }, ms);
      const w = () => {
        if (!pred()) return;
        clearTimeout(timer);
        s.waiters.delete(w);
        ok(performance.now());
      };
      s.waiters.add(w);
    });
  s.close = async () => {
    try {
      pty.kill('SIGKILL');
    } catch {
      /* gone */
    }
    await Promise.race([s.exited, sleep(2000)]);
    term.dispose();
  };
  return s;
}

const clmEnv = (h) => envOf(h, { TERM: 'xterm-256color', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' });

/**
 * Spawn to the banner on screen (ms). The UI is ended once its start is done (the connection
 * probe's answer on the status line comes after it): the code cache is written then, and a UI
 * killed at its first frame would leave none, so every run would measure a first start.
 */
async function firstFrame(h) {
  const s = onPty([process.execPath, CLI, '-u', uiBase], clmEnv(h));
  try {
    const at = await s.until(() => s.raw.includes('type a prompt'), 'the first frame');
    await startDone(s, h);
    return at - s.t0;
  } finally {
    await s.close();
  }
}

/** The UI's start is done (the probe's answer on the status line) and its code cache written. */
async function startDone(s, h) {
  await s.until(() => s.screen().includes('[online]'), 'the start to finish');
  const cache = join(h, 'state/clm/code-cache/cli-interactive.bin');
  for (let i = 0; i < 100 && !existsSync(cache); i++) await sleep(20);
  if (!existsSync(cache)) throw new Error(`the UI wrote no code cache (${cache})`);
}

/**
 * A key typed as soon as the first frame is on screen (ms from the write to its echo): what the
 * start still does then (loading the rest, the markdown warm-up) must not hold it back. The UI
 * runs on until its start is done, as in firstFrame().
 */
async function echoAtStart(h) {
  const s = onPty([process.execPath, CLI, '-u', uiBase], clmEnv(h));
  try {
    await s.until(() => s.raw.includes('type a prompt'), 'the first frame');
    const t = performance.now();
    s.pty.write('k');
    const at = await s.until(() => s.screen(false).includes('> k'), 'the echo of a key typed at the first frame');
    await startDone(s, h);
    return at - t;
  } finally {
    await s.close();
  }
}

/** `node -e 0` on a pty, spawn to exit (ms): the first frame's reference. */
async function nodeOnPty(h) {
  const s = onPty([process.execPath, '-e', '0'], clmEnv(h));
  await s.exited;
  const ms = performance.now() - s.t0;
  s.term.dispose();
  return ms;
}

/** Type KEYS characters one at a time; each one's time from the write to its cell on screen. */
async function echoes(streaming) {
  const h = home('echo');
  const s = onPty([process.execPath, CLI, '-u', uiBase, '-p', empty], clmEnv(h));
  const out = [];
  try {
    await s.until(() => s.screen().includes('[online]'), 'the screen');
    let stream;
    if (streaming) {
      const chunks = Math.ceil((KEYS * 120) / CHUNK_MS) + 400;
      await ui.plan(
        Array.from({ length: chunks + 1 }, (_, i) =>
          i === chunks ? 'END-OF-REPLY' : i % 10 === 9 ? 'streamed words go by.\n\n' : 'streamed words go by ',
        ),
        CHUNK_MS,
      );
      s.pty.write('stream please\r');
      await s.until(() => s.screen().includes('streamed words'), 'the stream');
      stream = s.until(() => s.screen().includes('END-OF-REPLY'), 'the end of the stream', 120_000);
    }
    const typed = 'the quick brown fox jumps over a lazy dog';
    for (let i = 0; i < KEYS; i++) {
      const text = typed.slice(0, i + 1);
      await sleep(streaming ? 17 + (i % 7) : 25); // not in step with the stream's chunks
      const t = performance.now();
      s.pty.write(typed[i]);
      out.push((await s.until(() => s.screen(false).includes(`> ${text}`), `the echo of ${JSON.stringify(text)}`)) - t);
    }
    if (streaming) {
      if (!(await Promise.race([stream.then(() => false), sleep(0).then(() => true)])))
        throw new Error('the stream ended before the typing did: raise its length');
      await stream;
    }
  } finally {
    await ui.plan(['END-OF-REPLY']);
    await s.close();
  }
  return out;
}

/**
 * Prompts sent one after another, the mock answering at once: each one's time from the Enter to
 * the reply's first words on screen (the request, the answer and the frame that draws it).
 */
async function replies() {
  const h = home('reply');
  const s = onPty([process.execPath, CLI, '-u', uiBase, '-p', empty], clmEnv(h));
  const out = [];
  try {
    await s.until(() => s.screen().includes('[online]'), 'the screen');
    for (let i = 0; i < REPLIES + 2; i++) {
      await ui.plan([`reply ${i} begins`, ' and goes on', ' to its end.'], 20);
      s.pty.write(`question ${i}`);
      await s.until(() => s.screen().includes(`> question ${i}`), `the prompt ${i}`);
      await sleep(150);
      const t = performance.now();
      s.pty.write('\r');
      const at = await s.until(() => s.screen().includes(`reply ${i} begins`), `reply ${i}`);
      if (i >= 2) out.push(at - t); // the first two warm up
      await s.until(() => s.screen().includes(`reply ${i} begins and goes on to its end.`), `the end of reply ${i}`);
      await sleep(200);
    }
  } finally {
    await s.close();
  }
  return out;
}

const pct = (xs, p) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.ceil((p / 100) * a.length) - 1)];
};

// ---- the runs ------------------------------------------------------------------------------

const started = Date.now();
const loadAtStart = load();
const node = process.execPath;
const reply = (r) => (r.stdout.includes('This is the bench mock.') ? null : `no reply in ${JSON.stringify(r.stdout.slice(0, 200))}`);
/**
 * The one-shot's floor: one streamed POST to the same mock with node:http and nothing else, the
 * reply's text printed. What is above it is clm's own (loading the program, the run).
 */
const POST_ALONE = `const u = new URL(${JSON.stringify(`${text}/chat/completions`)});
require('node:http').request(u, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
  let s = '';
  res.setEncoding('utf8').on('data', (d) => (s += d)).on('end', () => {
    for (const m of s.matchAll(/"content":"([^"]*)"/g)) process.stdout.write(m[1]);
  });
}).end('{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}');`;
const procs = [
  { id: 'node', argv: [node, '-e', '0'] },
  { id: 'post', argv: [node, '-e', POST_ALONE], check: reply },
  { id: 'version', argv: [node, CLI, '-V'], check: (r) => (/^clm \S+\n$/.test(r.stdout) ? null : 'no version') },
  { id: 'text', argv: [node, CLI, '-u', text, '-o', 'hi', '-p', empty], check: reply },
  // What a user has after `clm setup`: its config.lua and secrets.lua, the seed plugins.
  { id: 'textSetup', argv: [node, CLI, '-u', text, '-o', 'hi'], check: reply },
  ...[
    ['rf10', rf10],
    ['rf50', rf50],
    ['rf250', rf250],
  ].map(([id, url]) => ({
    id,
    argv: [node, CLI, '-u', url, '-o', `read ${fixture} with read_file, again and again`, '-p', empty],
    check: reply,
  })),
].map((p) => ({ ...p, runs: [] }));
const ptyRows = [
  { id: 'ptyNode', run: () => nodeOnPty(home('pty-node')) },
  { id: 'ffSeeds', run: () => firstFrame(home('ff-seeds')) },
  { id: 'ffSetup', run: () => firstFrame(home('ff-setup')) },
  { id: 'echoAtStart', run: () => echoAtStart(home('echo-start')) },
].map((p) => ({ ...p, runs: [] }));
for (const h of ['ff-setup', 'textSetup']) {
  const r = spawnSync(node, [CLI, 'setup'], { env: envOf(home(h)), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`clm setup failed: ${r.stderr}`);
}

for (let i = 0; i <= RUNS; i++) {
  log(`round ${i}/${RUNS}${i === 0 ? ' (warm-up)' : ''}, load ${load()}`);
  for (const p of procs) {
    const r = await measure(p.argv, { env: envOf(home(p.id)), cwd: tmp });
    const problem = r.signal ? `killed (${r.signal})` : r.code !== 0 ? `exit ${r.code}: ${r.stderr.slice(-300)}` : p.check?.(r);
    if (problem) throw new Error(`${p.id}: ${problem}`);
    if (i > 0) p.runs.push(r);
  }
  for (const p of ptyRows) {
    const ms = await p.run();
    if (i > 0) p.runs.push(ms);
  }
}
// The figures bench/ui.mjs and bench/lua.mjs measure, from their quick runs.
/** Run a bench script with --json; its figures. */
function figuresOf(script, args) {
  const out = join(tmp, `${script}.json`);
  log(`${script} ${args.join(' ')}, load ${load()}`);
  const r = spawnSync(node, [join(BENCH, script), ...args, '--json', out], { encoding: 'utf8', env: quietEnv() });
  if (r.status !== 0) throw new Error(`${script} failed (${r.status}): ${r.stderr.slice(-500)}${r.stdout.slice(-500)}`);
  return JSON.parse(readFileSync(out, 'utf8'));
}
const uiFigures = figuresOf('ui.mjs', ['--quick', '--only', 'streaming,soak']);
const luaFigures = figuresOf('lua.mjs', ['--quick', '--only', 'calls']);
log(`key echo, idle, load ${load()}`);
const echoIdle = await echoes(false);
log(`key echo, streaming, load ${load()}`);
const echoStream = await echoes(true);
log(`a reply's first words, load ${load()}`);
const replyShown = await replies();

// ---- the table -----------------------------------------------------------------------------

const by = (id) => procs.find((p) => p.id === id) ?? ptyRows.find((p) => p.id === id);
const wall = (id) => median(by(id).runs.map((r) => (typeof r === 'number' ? r / 1000 : r.wall)));
const rss = (id) => median(by(id).runs.map((r) => r.rssKiB)) / 1024;
const s3 = (v) => `${v.toFixed(3)} s`;
const ms1 = (v) => `${v.toFixed(1)} ms`;
const figures = [
  ['one-shot plain turn', wall('text'), wall('node'), 1.5, s3, '`node -e 0`'],
  ['`clm --version`', wall('version'), wall('node'), 1.1, s3, '`node -e 0`'],
  ['ten tool rounds, peak RSS', rss('rf10'), 1, 50, (v) => `${v.toFixed(1)} MiB`, '1 MiB'],
  ['UI first frame, seed plugins', wall('ffSeeds'), wall('ptyNode'), 1.6, s3, '`node -e 0` on a pty'],
  ['UI first frame, after `clm setup`', wall('ffSetup'), wall('ptyNode'), 1.6, s3, '`node -e 0` on a pty'],
  ['key echo, idle, median', median(echoIdle), 1, 10, ms1, '1 ms'],
  ['key echo, idle, p99', pct(echoIdle, 99), 1, 30, ms1, '1 ms'],
  ['key echo, streaming 200 chunks/s, median', median(echoStream), 1, 10, ms1, '1 ms'],
  ['key echo, streaming 200 chunks/s, p99', pct(echoStream, 99), 1, 30, ms1, '1 ms'],
  ['key echo, typed at the first frame, median', median(by('echoAtStart').runs), 1, 45, ms1, '1 ms'],
  ["a reply's first words on screen after Enter, median", median(replyShown), 1, 25, ms1, '1 ms'],
  ['bytes per streamed chunk (full screen, pty)', uiFigures.full.ptyPerChunk, 1, 43, (v) => `${v.toFixed(1)} B`, '1 B'],
  ['render work per streamed chunk', uiFigures.full.renderMsPerChunk, 1, 1, (v) => `${v.toFixed(3)} ms`, '1 ms'],
  [`UI RSS slope per turn (${uiFigures.soakTurns} turns)`, uiFigures.so.slope, 1, 20, (v) => `${v.toFixed(1)} KiB`, '1 KiB'],
  marginal(),
  ['plugin tool call (64 in flight), time per call', 1e6 / luaFigures.calls.rate, 1, 100, (v) => `${v.toFixed(1)} µs`, '1 µs'],
];
/**
 * The tool loop's marginal CPU per round from 50 to 250 rounds against that from 10 to 50: a
 * loop whose rounds cost more as the conversation grows (a quadratic) shows here.
 */
function marginal() {
  const cpu = (id) => median(by(id).runs.map((r) => r.cpu));
  const low = (cpu('rf50') - cpu('rf10')) / 40;
  const high = (cpu('rf250') - cpu('rf50')) / 200;
  const ms = (v) => `${(v * 1000).toFixed(2)} ms`;
  return ['tool loop, CPU per round at 50–250 rounds', high, low, 2, ms, 'at 10–50'];
}
let failed = 0;
const rows = figures.map(([name, v, ref, budget, fmt, refName]) => {
  const ratio = v / ref;
  const over = ratio / budget;
  const status = !Number.isFinite(over) ? 'n/a' : over <= 1 ? 'ok' : over <= FAIL_AT ? 'over' : 'FAIL';
  if (status === 'FAIL' || status === 'n/a') failed++;
  return [
    name,
    fmt(v),
    ref === 1 ? '' : `${fmt(ref)} (${refName})`,
    `${ratio.toFixed(2)}${ref === 1 ? '' : '×'}`,
    `≤ ${budget}${ref === 1 ? '' : '×'}`,
    `${over.toFixed(2)}`,
    status,
  ];
});
/** Where the one-shot's time goes, from the same runs: Node alone, one POST alone, then clm. */
function oneShotFloor() {
  const faults = (id) => median(by(id).runs.map((r) => r.faults));
  const line = (what, id) =>
    `  ${what}: ${s3(wall(id))} (${(wall(id) / wall('node')).toFixed(2)}× \`node -e 0\`), ${faults(id)} page faults`;
  return [
    "The one-shot's floor (same runs; a page fault is a fresh page of memory, costly on a virtual machine):",
    line('`node -e 0`', 'node'),
    line('one streamed POST with node:http alone', 'post'),
    line('clm one-shot plain turn', 'text'),
    `  clm's own: ${((wall('text') - wall('post')) * 1000).toFixed(1)} ms and ${faults('text') - faults('post')} page faults over the POST alone`,
    line('the same after `clm setup` (its config.lua and secrets.lua, the seed plugins)', 'textSetup'),
  ].join('\n');
}
process.stdout.write(
  `Budgets (issue 27): medians of ${RUNS} interleaved runs, ${KEYS} keystrokes per echo row; ${((Date.now() - started) / 1000).toFixed(0)} s, ` +
    `load ${loadAtStart} → ${load()}, node ${process.version}\n` +
    `${table(['figure', 'measured', 'reference (same run)', 'ratio', 'budget', '÷ budget', 'status'], rows)}\n` +
    `(status: ok within budget, over above it, FAIL above ${FAIL_AT}× it: the CI step fails only then)\n\n` +
    `${oneShotFloor()}\n`,
);
process.exit(failed ? 1 : 0);
