#!/usr/bin/env node
// The interactive UI's figures (issues 10 and 13), measured on the real clm (bin/clm.cjs →
// dist/cli.js) on a pseudo-terminal (@lydell/node-pty), with @xterm/headless answering the
// terminal's queries as a terminal would; the mock LLM is bench/mock-server.mjs in its own process.
//
//   - first frame on screen from process start, the packaged seed plugins loading (no plugin
//     directory) and after `clm setup` (config.lua, secrets.lua, plugins)        goal ≤ 0.15 s
//   - bytes written to the terminal per streamed chunk, full screen and inline: a resumed
//     2,000-line transcript at 110×32, a fast model (one 40-character delta every 4 ms); both
//     the bytes the pty carried and the renderer's own count (CLM_DEBUG_LOG)   goal ≤ ~43 B
//   - render work per chunk (composing, diffing, markdown; the renderer's clock)  goal ≤ 1 ms
//   - PgUp through a resumed 10,000-line transcript, render work per step        goal ≤ 2 ms
//   - 1,000 turns in one UI session: RSS slope, and CPU while idle afterwards   goal ≤ 20 KiB/turn, ~0
//
// NODE_EXTRA_CA_CERTS is removed from clm's environment (Node 20 parses it at every start).
// Measures only; exits 1 when a scenario could not be driven.
//
//   node bench/ui.mjs [--quick] [--only ID,ID] [--json FILE]
//
// Scenarios (ids): first-frame, streaming (full screen), streaming-inline, pgup, soak. --json
// writes each scenario's figures as one object (bench/budgets.mjs reads it).
// (CLM_UI_BENCH_DUMP=PATH writes the bytes of each streamed reply to PATH.fullscreen / PATH.inline.)

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn as ptySpawn } from '@lydell/node-pty';
import xterm from '@xterm/headless';
import { argAfter, median } from './measure.mjs';
import { startMock } from './mock.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
const CLI = process.env.CLM_BENCH_CLI || join(ROOT, 'bin/clm.cjs');
const quick = process.argv.includes('--quick');
const only = argAfter('--only')?.split(',');
const jsonFile = argAfter('--json');
const wanted = (id) => !only || only.includes(id);
const FIRST_FRAME_RUNS = quick ? 3 : 9;
const SOAK_TURNS = quick ? 200 : Number(process.env.CLM_UI_SOAK_TURNS) || 1000;
const DELTAS = quick ? 250 : 750;
const PGUP_STEPS = quick ? 60 : 200;

const tmp = mkdtempSync(join(tmpdir(), 'clm-ui-bench-'));
const ptys = new Set();
process.on('exit', () => {
  for (const p of ptys) {
    try {
      p.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
  rmSync(tmp, { recursive: true, force: true });
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const failures = [];

// ---- the mock LLM (bench/mock-server.mjs in its own process) ------------------------------

const WORDS = 'the renderer writes only what changed since the last frame so a streamed reply costs a few bytes per chunk'.split(' ');
const mock = await startMock('plan');
const base = mock.url;
/** The next reply: `ok N`. */
const short = (n) => mock.plan([`ok ${n}`]);
/** The next reply: `deltas` deltas of 40 characters of prose every 4 ms, a paragraph break now and then. */
function stream(deltas) {
  const parts = [];
  let w = 0;
  for (let i = 0; i < deltas; i++) {
    let d = '';
    while (d.length < 40) d += `${WORDS[w++ % WORDS.length]} `;
    d = d.slice(0, 40);
    if (i % 12 === 11) d = `${d.slice(0, 38)}\n\n`;
    parts.push(i === deltas - 1 ? `${d} END-OF-STREAM` : d);
  }
  return mock.plan(parts, 4);
}

// ---- clm on a pty --------------------------------------------------------------------------

let homeSeq = 0;
function home() {
  const h = join(tmp, `home-${++homeSeq}`);
  for (const d of ['config', 'state', 'data', 'cache']) mkdirSync(join(h, d), { recursive: true });
  return h;
}

function envFor(h, extra = {}) {
  const e = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v === undefined ||
      k === 'NODE_EXTRA_CA_CERTS' ||
      k === 'NODE_OPTIONS' ||
      k.startsWith('CLM_') ||
      k.startsWith('XDG_') ||
      k === 'NO_COLOR'
    )
      continue;
    e[k] = v;
  }
  return {
    ...e,
    HOME: h,
    XDG_CONFIG_HOME: join(h, 'config'),
    XDG_STATE_HOME: join(h, 'state'),
    XDG_DATA_HOME: join(h, 'data'),
    XDG_CACHE_HOME: join(h, 'cache'),
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    ...extra,
  };
}

function open(args, o) {
  const cols = o.cols ?? 110,
    rows = o.rows ?? 32;
  const term = new xterm.Terminal({ cols, rows, scrollback: 1000, allowProposedApi: true });
  const t0 = performance.now();
  const pty = ptySpawn(process.execPath, [CLI, '-u', base, ...args], {
    name: 'xterm-256color',
    cols,
    rows,
    cwd: o.home,
    env: envFor(o.home, o.env),
  });
  ptys.add(pty);
  const s = { pty, term, t0, bytes: 0, raw: '', firstAt: -1, exited: null };
  s.exited = new Promise((r) =>
    pty.onExit((e) => {
      ptys.delete(pty);
      r(e);
    }),
  );
  pty.onData((d) => {
    s.bytes += Buffer.byteLength(d);
    if (s.raw.length < 4_000_000) s.raw += d;
    if (s.firstAt < 0 && s.raw.includes('type a prompt')) s.firstAt = performance.now();
    term.write(d);
  });
  term.onData((d) => {
    try {
      pty.write(d);
    } catch {
      /* exited */
    }
  });
  s.text = () => {
    const b = term.buffer.active;
    const out = [];
    for (let r = 0; r < term.rows; r++) out.push(b.getLine(b.viewportY + r)?.translateToString(true) ?? '');
    return out.join('\n');
  };
  s.idle = () =>
    !/\] {2}[|/\\-] /.test(
      s
        .text()
        .split('\n')
        .find((l) => l.startsWith(' clm ')) ?? '',
    );
  s.until = async (pred, what, ms = 60_000) => {
    const end = Date.now() + ms;
    for (;;) {
      await new Promise((r) => term.write('', r));
      if (pred()) return;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(5);
    }
  };
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

/** The renderer's counts from the debug log: one record per `ui <when>:` line. */
function stats(log) {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .flatMap((l) => {
      const m = /ui (turn start|turn end|exit): mode=(\S+) frames=(\d+) bytes=(\d+) repaints=(\d+) scrolls=(\d+) render_ms=([\d.]+)/.exec(
        l,
      );
      return m ? [{ when: m[1], mode: m[2], frames: +m[3], bytes: +m[4], repaints: +m[5], scrolls: +m[6], renderMs: +m[7] }] : [];
    });
}

/** A session file of `pairs` exchanges, each reply `replyLines` lines of prose. */
function writeSession(h, id, pairs, replyLines) {
  const dir = join(h, 'state', 'clm');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lines = [JSON.stringify({ type: 'meta', v: 1, id, created: Math.floor(Date.now() / 1000) })];
  for (let i = 0; i < pairs; i++) {
    lines.push(JSON.stringify({ role: 'user', content: `question ${i}`, type: 'msg' }));
    const reply = Array.from({ length: replyLines }, (_, j) => `${WORDS.slice(0, 8 + ((i + j) % 8)).join(' ')} ${i}.${j}`).join('\n\n');
    lines.push(JSON.stringify({ role: 'assistant', content: reply, type: 'msg' }));
  }
  writeFileSync(join(dir, `${id}.jsonl`), `${lines.join('\n')}\n`, { mode: 0o600 });
}

async function prompt(s, text, done) {
  s.pty.write(`${text}\r`);
  await s.until(() => done() && s.idle(), `the reply to ${text}`);
}

// ---- scenarios -----------------------------------------------------------------------------

async function firstFrame(setup) {
  const out = [],
    inside = [];
  for (let i = 0; i < FIRST_FRAME_RUNS + 1; i++) {
    const h = home();
    if (setup) spawnSync(process.execPath, [CLI, 'setup'], { env: envFor(h), encoding: 'utf8' });
    const log = join(h, 'debug.log');
    const s = open([], { home: h, env: { CLM_DEBUG_LOG: log } });
    try {
      await s.until(() => s.firstAt >= 0, 'the first frame', 20_000);
      // The process's own figure (from its start, pty and spawn not counted), logged once it is ready.
      await s.until(() => existsSync(log) && /ui first frame: [\d.]+ ms/.test(readFileSync(log, 'utf8')), 'the start-up to finish', 20_000);
      if (i > 0) {
        // the first run warms the page cache
        out.push(s.firstAt - s.t0);
        inside.push(Number(/ui first frame: ([\d.]+) ms/.exec(readFileSync(log, 'utf8'))[1]));
      }
    } finally {
      await s.close();
    }
  }
  return { median: median(out), min: Math.min(...out), inside: median(inside), insideMin: Math.min(...inside) };
}

async function streaming(mode) {
  const h = home();
  const id = '20260101-000000-0000beef';
  writeSession(h, id, 50, 20); // ~50 × 41 + 100 lines: over 2,000 transcript lines
  const log = join(h, 'debug.log');
  const s = open(['-p', join(h, 'no-plugins'), '-r', id, ...(mode === 'inline' ? ['--no-alt-screen'] : [])], {
    home: h,
    env: { CLM_DEBUG_LOG: log },
  });
  mkdirSync(join(h, 'no-plugins'), { recursive: true });
  try {
    await s.until(() => s.text().includes(`[resumed session ${id}]`), 'the resumed transcript');
    await short('warm');
    await prompt(s, 'warm up', () => s.text().includes('ok warm'));
    await sleep(300);
    await stream(DELTAS);
    // Typed first, so the keystrokes' echo is not counted; from Enter to the end of the turn.
    s.pty.write('stream now');
    await s.until(() => s.text().includes('> stream now'), 'the typed prompt');
    await sleep(100);
    const before = s.bytes;
    s.pty.write('\r');
    await s.until(() => s.text().includes('END-OF-STREAM') && s.idle(), 'the streamed reply');
    const ptyBytes = s.bytes - before;
    if (process.env.CLM_UI_BENCH_DUMP) writeFileSync(`${process.env.CLM_UI_BENCH_DUMP}.${mode}`, s.raw.slice(s.raw.length - ptyBytes));
    await sleep(200);
    const st = stats(log);
    const start = st.filter((x) => x.when === 'turn start').at(-1),
      end = st.filter((x) => x.when === 'turn end').at(-1);
    return {
      ptyPerChunk: ptyBytes / DELTAS,
      rendererPerChunk: (end.bytes - start.bytes) / DELTAS,
      renderMsPerChunk: (end.renderMs - start.renderMs) / DELTAS,
      frames: end.frames - start.frames,
      repaints: end.repaints - start.repaints,
    };
  } finally {
    await s.close();
  }
}

async function pageUp() {
  const h = home();
  const id = '20260101-000000-0000cafe';
  writeSession(h, id, 250, 20); // over 10,000 transcript lines
  mkdirSync(join(h, 'no-plugins'), { recursive: true });
  const log = join(h, 'debug.log');
  const s = open(['-p', join(h, 'no-plugins'), '-r', id], { home: h, env: { CLM_DEBUG_LOG: log } });
  try {
    await s.until(() => s.text().includes(`[resumed session ${id}]`), 'the resumed transcript', 120_000);
    await short('base');
    await prompt(s, 'baseline', () => s.text().includes('ok base'));
    await sleep(300);
    const t0 = performance.now();
    for (let i = 0; i < PGUP_STEPS; i++) {
      const b = s.bytes;
      s.pty.write('\x1b[5~');
      await s.until(() => s.bytes > b, 'a PgUp frame', 10_000);
    }
    const wall = (performance.now() - t0) / PGUP_STEPS;
    s.pty.write('\x03');
    await Promise.race([s.exited, sleep(5000)]);
    const st = stats(log);
    const base = st.filter((x) => x.when === 'turn end').at(-1),
      end = st.filter((x) => x.when === 'exit').at(-1);
    return { renderMsPerStep: (end.renderMs - base.renderMs) / PGUP_STEPS, wallPerStep: wall, lines: '10,000+' };
  } finally {
    await s.close();
  }
}

function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11]) + Number(rest[12]); // utime + stime, in clock ticks
}

async function soak() {
  const h = home();
  mkdirSync(join(h, 'no-plugins'), { recursive: true });
  const s = open(['-p', join(h, 'no-plugins')], { home: h });
  const samples = [];
  try {
    await s.until(() => s.text().includes('[online]'), 'the screen');
    for (let i = 1; i <= SOAK_TURNS; i++) {
      await short(`t${i}`);
      await prompt(s, `turn ${i}`, () => s.text().includes(`ok t${i}`));
      if (i % Math.max(1, Math.floor(SOAK_TURNS / 20)) === 0) samples.push([i, rssKiB(s.pty.pid)]);
    }
    // Least squares over the second half (after warm-up).
    const half = samples.filter(([t]) => t > SOAK_TURNS / 2);
    const mx = half.reduce((a, [t]) => a + t, 0) / half.length,
      my = half.reduce((a, [, r]) => a + r, 0) / half.length;
    const slope = half.reduce((a, [t, r]) => a + (t - mx) * (r - my), 0) / half.reduce((a, [t]) => a + (t - mx) ** 2, 0);
    await sleep(1000);
    const c0 = cpuTicks(s.pty.pid),
      w0 = performance.now();
    await sleep(5000);
    const idleCpu = ((cpuTicks(s.pty.pid) - c0) * 10) / (performance.now() - w0); // 100 ticks/s ⇒ ×10 ms per tick
    return { slope, rssStart: samples[0]?.[1], rssEnd: samples.at(-1)?.[1], idleCpuPct: idleCpu * 100 };
  } finally {
    await s.close();
  }
}

// ---- main ----------------------------------------------------------------------------------

const rows = [];
const fmt = (v, unit, d = 2) => (Number.isFinite(v) ? `${v.toFixed(d)}${unit}` : '–');
const status = (v, goal) => (!Number.isFinite(v) ? 'n/a' : v <= goal ? 'PASS' : 'MISS');
async function step(name, fn) {
  process.stderr.write(`bench/ui: ${name}\n`);
  try {
    return await fn();
  } catch (e) {
    failures.push(`${name}: ${e.message}`);
    return null;
  }
}

const ffSeeds = wanted('first-frame') ? await step('first frame, packaged seed plugins', () => firstFrame(false)) : null;
const ffSetup = wanted('first-frame') ? await step('first frame, after clm setup', () => firstFrame(true)) : null;
const full = wanted('streaming') ? await step('streaming, full screen', () => streaming('fullscreen')) : null;
const inline = wanted('streaming-inline') ? await step('streaming, inline', () => streaming('inline')) : null;
const pg = wanted('pgup') ? await step('PgUp through 10,000 lines', () => pageUp()) : null;
const so = wanted('soak') ? await step(`${SOAK_TURNS} turns`, () => soak()) : null;
if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ ffSeeds, ffSetup, full, inline, pg, so, soakTurns: SOAK_TURNS, failures }));

for (const [name, r] of [
  ['seed plugins (packaged)', ffSeeds],
  ['after clm setup (config.lua + plugins)', ffSetup],
]) {
  if (!r) continue;
  rows.push([
    `first frame, ${name}`,
    fmt(r.median / 1000, ' s', 3),
    fmt(r.min / 1000, ' s', 3),
    '≤ 0.150 s',
    status(r.median / 1000, 0.15),
  ]);
  rows.push([`  the same, from the process's own clock`, fmt(r.inside / 1000, ' s', 3), fmt(r.insideMin / 1000, ' s', 3), '', '']);
}
for (const [name, r] of [
  ['full screen', full],
  ['inline', inline],
]) {
  if (!r) continue;
  rows.push([`bytes per chunk, ${name} (pty)`, fmt(r.ptyPerChunk, ' B', 1), '', '≤ 43 B', status(r.ptyPerChunk, 43)]);
  rows.push([`bytes per chunk, ${name} (renderer)`, fmt(r.rendererPerChunk, ' B', 1), '', '', '']);
  rows.push([`render work per chunk, ${name}`, fmt(r.renderMsPerChunk, ' ms', 3), '', '≤ 1 ms', status(r.renderMsPerChunk, 1)]);
  rows.push([`frames / full repaints while streaming, ${name}`, `${r.frames} / ${r.repaints}`, '', '', '']);
}
if (full && inline)
  rows.push([
    'inline bytes per chunk ÷ full screen',
    fmt(inline.ptyPerChunk / full.ptyPerChunk, '×'),
    '',
    '≤ 1.00×',
    status(inline.ptyPerChunk / full.ptyPerChunk, 1),
  ]);
if (pg) {
  rows.push([
    'PgUp through 10,000 lines, render work per step',
    fmt(pg.renderMsPerStep, ' ms', 3),
    '',
    '≤ 2 ms',
    status(pg.renderMsPerStep, 2),
  ]);
  rows.push(['PgUp, keypress to frame on the pty (wall)', fmt(pg.wallPerStep, ' ms', 1), '', '', '']);
}
if (so) {
  rows.push([`${SOAK_TURNS} turns: RSS slope (second half)`, fmt(so.slope, ' KiB/turn', 2), '', '≤ 20 KiB/turn', status(so.slope, 20)]);
  rows.push([
    `${SOAK_TURNS} turns: RSS first / last sample`,
    `${(so.rssStart / 1024).toFixed(1)} / ${(so.rssEnd / 1024).toFixed(1)} MiB`,
    '',
    '',
    '',
  ]);
  rows.push(['CPU while idle afterwards (5 s)', fmt(so.idleCpuPct, ' %', 2), '', '~0', status(so.idleCpuPct, 1)]);
}

const w = [0, 1, 2, 3, 4].map((i) => Math.max(...[['figure', 'median', 'min', 'goal', 'status'], ...rows].map((r) => String(r[i]).length)));
const line = (r) => `| ${r.map((c, i) => String(c)[i === 0 ? 'padEnd' : 'padStart'](w[i])).join(' | ')} |`;
const out = [
  `Interactive UI (bench/ui.mjs): the real clm on a pty at 110×32; ${DELTAS} deltas of 40 characters every 4 ms into a resumed 2,000-line transcript`,
  line(['figure', 'median', 'min', 'goal', 'status']),
  `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`,
  ...rows.map(line),
  "(pty = every byte clm wrote to the terminal while the reply streamed, status bar and spinner included; renderer = the renderer's own count;",
  " render work = the renderer's time composing, diffing and drawing, markdown included, from CLM_DEBUG_LOG)",
];
if (failures.length) out.push('', 'failures:', ...failures.map((f) => `  ${f}`));
process.stdout.write(`${out.join('\n')}\n`);
process.exit(failures.length ? 1 : 0);
