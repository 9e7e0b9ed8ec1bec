// Terminal toolkit benchmarks (src/tui), measured on the toolkit bundled the way the CLI ships it
// (esbuild, minified, lazy chunks) into .bench-tmp/tui/:
//   - bytes written per streamed chunk, full screen and inline: a 2,000-line transcript at
//     110×32, a fast model (one 40-character delta every 4 ms, simulated clock), a status bar
//     whose spinner and tok/s change as a UI's would; goal ≤ ~43 B (issue 10)
//   - render work per chunk (composing, diffing and drawing the frames + markdown)    goal ≤ 1 ms
//   - PgUp through a 10,000-line transcript, per step                                  goal ≤ 2 ms
//   - markdown streaming: a 28 KB answer in 40-character deltas, total and per delta, and the
//     characters lexed (against re-lexing the whole text on every delta); the same answer with
//     no blank line between its blocks; a list of 2,000 items; a table of 2,000 rows; a paragraph
//     of 2,000 lines (plain lines, no blank line between them)
//   - cost of the toolkit: bundle sizes, import time and first frame in a fresh process
//   - resize of the 10,000-line transcript; a 1 MB paste into the line editor
// Timing figures are medians; bytes are exact. Usage: node bench/tui.mjs [--quick]

import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = join(root, '.bench-tmp', 'tui');
const quick = process.argv.includes('--quick');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function bundle() {
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const r = await build({
    // The highlighter thread's script next to the toolkit, where it looks for it.
    entryPoints: { tui: join(root, 'src/tui/index.ts'), 'highlight-worker': join(root, 'src/tui/highlight-worker.ts') },
    outdir: tmp,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
    metafile: true,
  });
  const chunks = {};
  for (const [file, o] of Object.entries(r.metafile.outputs)) {
    const ins = Object.keys(o.inputs);
    const name =
      o.entryPoint === 'src/tui/index.ts'
        ? 'toolkit'
        : o.entryPoint === 'src/tui/highlight-worker.ts'
          ? 'highlighter thread'
          : ins.some((i) => i.includes('emoji-data'))
            ? 'emoji table'
            : ins.some((i) => i.includes('highlight.js'))
              ? 'highlight.js + languages'
              : file;
    if (!file.endsWith('.map')) chunks[name.includes('/') ? 'other' : name] = (chunks[name.includes('/') ? 'other' : name] ?? 0) + o.bytes;
  }
  return { mod: await import(pathToFileURL(join(tmp, 'tui.js')).href), chunks };
}

/** A terminal that only counts what it is sent (the emulator's own cost would drown the figures). */
function countingTerminal(T, cols, rows) {
  class Counting extends T.TerminalBase {
    bytes = 0;
    get columns() {
      return cols;
    }
    get rows() {
      return rows;
    }
    write(s) {
      this.bytes += Buffer.byteLength(s);
    }
    writeNow(s) {
      this.write(s);
    }
    setRaw() {}
    async queryCursorPosition() {
      return { row: rows, col: 1 };
    }
  }
  return new Counting();
}

/** A simulated clock: timers run when the bench advances time. */
function simClock() {
  let now = 0;
  const q = [];
  return {
    clock: {
      now: () => now,
      setTimeout: (fn, ms) => {
        const t = { at: now + ms, fn };
        q.push(t);
        return t;
      },
      clearTimeout: (h) => {
        const i = q.indexOf(h);
        if (i >= 0) q.splice(i, 1);
      },
    },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        q.sort((a, b) => a.at - b.at);
        const t = q[0];
        if (!t || t.at > end) break;
        q.shift();
        now = t.at;
        t.fn();
      }
      now = end;
    },
    get now() {
      return now;
    },
  };
}

const WORDS = 'the renderer writes only what changed since the last frame so a streamed reply costs a few bytes per chunk'.split(' ');

/** A model's answer of about `bytes` characters: prose, lists, code, a table. */
function answer(bytes) {
  const parts = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const k = i % 5;
    const p =
      k === 0
        ? `## Part ${i}\n\nThis is **part ${i}**, with *emphasis* and \`inline code\`: ${Array.from({ length: 40 }, (_, j) => WORDS[(i + j) % WORDS.length]).join(' ')}.`
        : k === 1
          ? `- first point of ${i}\n- second point, **bold**\n  - nested detail\n- third point`
          : k === 2
            ? '```ts\n' + Array.from({ length: 6 }, (_, j) => `const v${j} = compute(${i}, ${j}); // step ${j}`).join('\n') + '\n```'
            : k === 3
              ? `| key | value |\n|---|--:|\n| alpha${i} | ${i} |\n| beta${i} | ${i * 3} |`
              : Array.from({ length: 60 }, (_, j) => WORDS[(i * 3 + j) % WORDS.length]).join(' ') + '.';
    parts.push(p);
    n += p.length + 2;
  }
  return parts.join('\n\n');
}

/** Prose only (paragraphs), the kind of reply a byte count per chunk is usually taken on. */
function prose(bytes) {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${Array.from({ length: 70 }, (_, j) => WORDS[(i * 5 + j) % WORDS.length]).join(' ')}.\n\n`;
  return s;
}

/** A status bar and an input box as a UI would draw them. */
function footer(T, state) {
  const spin = '|/-\\';
  const bar = T.style({ fg: 'black', bg: 'blue' });
  return [
    {
      render: (w) => {
        const s = ` clm [mock/mock-model:test] [online]  ${spin[state.tick % 4]} ${`${state.tps} tok/s`.padEnd(14)}`;
        return [T.paint(T.padEnd(T.truncate(s, w), w), bar), `> ${T.CURSOR_MARKER}`];
      },
    },
  ];
}

async function streamRun(T, mode, opts = {}) {
  const cols = 110,
    rows = 32;
  const term = countingTerminal(T, cols, rows);
  const sim = simClock();
  const r = new T.Renderer(term, { mode, clock: sim.clock, frameMs: opts.frameMs });
  const state = { tick: 0, tps: 0 };
  r.setFooter(footer(T, state));
  const md = { unicode: true };
  // 2,000 transcript lines of earlier turns.
  let lines = 0;
  let turn = 0;
  while (lines < 2000) {
    const b = new T.MarkdownBlock(md, answer(1500));
    b.finish();
    r.transcript.add(new T.LinesBlock([`you> question ${turn++}`]));
    r.transcript.add(b);
    lines += 1 + b.render(cols).length;
  }
  await r.start();
  sim.advance(10);
  r.renderNow();
  // Laid out before the reply (in the background, in tasks), as a session's transcript is by the
  // time one streams: a frame that finds it not laid out draws the end alone, with no scroll in place.
  while (mode === 'fullscreen' && r.transcript.notLaidOut(cols) > 0) await new Promise((res) => setTimeout(res, 5));
  const reply = new T.MarkdownBlock(md);
  r.transcript.add(reply);
  r.renderNow();
  const text = opts.prose ? prose(28_000) : answer(28_000);
  const deltas = [];
  for (let i = 0; i < text.length; i += 40) deltas.push(text.slice(i, i + 40));
  if (quick) deltas.length = Math.min(deltas.length, 200);
  const bytes0 = term.bytes,
    frames0 = r.stats.frames,
    wall0 = performance.now();
  let nextTick = 80,
    nextTps = 250;
  for (const d of deltas) {
    reply.append(d);
    r.transcript.changed(reply);
    r.requestRender();
    sim.advance(4);
    if (sim.now >= nextTick) {
      state.tick++;
      nextTick += 80;
      r.requestRender();
    }
    if (sim.now >= nextTps) {
      state.tps = 180 + (state.tick % 40);
      nextTps += 250;
      r.requestRender();
    }
  }
  sim.advance(100);
  // The simulated clock stands still while a frame is drawn: the work is timed on the wall.
  const wall = performance.now() - wall0;
  const content = reply.render(cols).reduce((a, l) => a + Buffer.byteLength(l) + 1, 0);
  const out = {
    contentPerChunk: content / deltas.length,
    chunks: deltas.length,
    bytesPerChunk: (term.bytes - bytes0) / deltas.length,
    frames: r.stats.frames - frames0,
    renderMsPerChunk: wall / deltas.length,
  };
  r.stop();
  return out;
}

async function pgupRun(T) {
  const cols = 110,
    rows = 32;
  const term = countingTerminal(T, cols, rows);
  const r = new T.Renderer(term, { mode: 'fullscreen' });
  r.setFooter(footer(T, { tick: 0, tps: 0 }));
  let lines = 0;
  while (lines < 10_000) {
    const b = new T.MarkdownBlock({}, answer(2000));
    b.finish();
    r.transcript.add(b);
    lines += b.render(cols).length;
  }
  await r.start();
  const steps = [];
  for (let i = 0; i < (quick ? 50 : 400); i++) {
    const t0 = performance.now();
    r.pageUp();
    r.renderNow();
    steps.push(performance.now() - t0);
  }
  // A resize reflows every block of the transcript.
  const resize = [];
  for (const w of [100, 110, 90]) {
    const t2 = countingTerminal(T, w, rows);
    const r2 = new T.Renderer(t2, { mode: 'fullscreen' });
    for (let i = 0; i < r.transcript.length; i++) r2.transcript.add(r.transcript.blockAt(i));
    const t0 = performance.now();
    await r2.start();
    resize.push(performance.now() - t0);
    r2.stop();
  }
  r.stop();
  return { lines, msPerStep: median(steps), maxStep: Math.max(...steps), resizeMs: median(resize) };
}

function markdownRun(T, text) {
  const runs = [];
  let lexed = 0,
    perDelta = [];
  for (let k = 0; k < (quick ? 2 : 5); k++) {
    const s = new T.MarkdownStream();
    const t0 = performance.now();
    for (let i = 0; i < text.length; i += 40) {
      const d0 = performance.now();
      s.append(text.slice(i, i + 40));
      s.render(110);
      perDelta.push(performance.now() - d0);
    }
    s.finish();
    s.render(110);
    runs.push(performance.now() - t0);
    lexed = s.stats.lexedChars;
  }
  const whole = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    T.renderMarkdown(text, 110);
    whole.push(performance.now() - t0);
  }
  let naive = 0;
  for (let i = 40; i < text.length + 40; i += 40) naive += Math.min(i, text.length);
  return {
    bytes: text.length,
    deltas: Math.ceil(text.length / 40),
    totalMs: median(runs),
    perDeltaMs: median(perDelta),
    maxDeltaMs: Math.max(...perDelta),
    lexed,
    naive,
    wholeMs: median(whole),
  };
}

function editorRun(T) {
  const big = Array.from({ length: 10_000 }, (_, i) => `line ${i} ${'x'.repeat(90)}`).join('\n');
  const ed = new T.LineEditor();
  const t0 = performance.now();
  ed.insertLiteral(big);
  ed.render(110, { prompt: '> ', maxRows: 16 });
  const pasteMs = performance.now() - t0;
  const keys = [];
  for (let i = 0; i < 50; i++) {
    const t1 = performance.now();
    ed.insert('a');
    ed.render(110, { prompt: '> ', maxRows: 16 });
    keys.push(performance.now() - t1);
  }
  return { bytes: big.length, pasteMs, keyMs: median(keys) };
}

/** Import and first frame in a fresh process (what starting the UI costs). */
function coldStart() {
  const script = join(tmp, 'cold.mjs');
  writeFileSync(
    script,
    `
const t0 = performance.now();
const T = await import(${JSON.stringify(pathToFileURL(join(tmp, 'tui.js')).href)});
const t1 = performance.now();
class C extends T.TerminalBase { get columns() { return 110; } get rows() { return 32; } write() {} writeNow() {} setRaw() {} }
const r = new T.Renderer(new C(), { mode: 'fullscreen' });
r.setFooter([{ render: () => [' clm status', '> ' + T.CURSOR_MARKER] }]);
r.transcript.add(new T.LinesBlock(['clm -- type a prompt, /help for commands, /quit to exit.']));
await r.start();
const t2 = performance.now();
const b = new T.MarkdownBlock({}, '## Hello\\n\\nSome **markdown** with \`code\` and 日本語.');
b.finish();
r.transcript.add(b);
r.renderNow();
const t3 = performance.now();
r.stop();
process.stdout.write(JSON.stringify({ importMs: t1 - t0, frameMs: t2 - t1, mdMs: t3 - t2 }));
`,
  );
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.NODE_OPTIONS;
  const imp = [],
    frame = [],
    md = [];
  for (let i = 0; i < (quick ? 3 : 9); i++) {
    const p = spawnSync(process.execPath, [script], { env, encoding: 'utf8' });
    if (p.status !== 0) throw new Error(`cold start failed: ${p.stderr}`);
    const j = JSON.parse(p.stdout);
    imp.push(j.importMs);
    frame.push(j.frameMs);
    md.push(j.mdMs);
  }
  return { importMs: median(imp), frameMs: median(frame), mdMs: median(md) };
}

async function highlightCost(T) {
  const t0 = performance.now();
  await T.loadHighlighter();
  const load = performance.now() - t0;
  const c0 = performance.now();
  await T.loadHighlighter('typescript');
  const compile = performance.now() - c0;
  const code = (tag) =>
    Array.from(
      { length: 200 },
      (_, i) => `export function ${tag}${i}(a: number, b: string): string { return \`\${a}-\${b}\`; } // ${i}`,
    ).join('\n');
  // 200 lines go to the highlighter thread: the wall time until their colours are back (the first
  // starting the worker), and what this thread spends on them (asking, then the spans).
  const roundTrip = async (c) => {
    const t = performance.now();
    const back = new Promise((r) => {
      const off = T.onHighlighterReady(() => {
        off();
        r();
      });
    });
    if (T.highlightCode(c, 'typescript') !== null) throw new Error('bench: 200 lines were highlighted on the main thread');
    const asked = performance.now() - t;
    await back;
    const s = performance.now();
    if (!T.highlightCode(c, 'typescript')) throw new Error('bench: the highlighter thread did not answer');
    return { wall: performance.now() - t, asked, spans: performance.now() - s };
  };
  const first = await roundTrip(code('f'));
  const warm = await roundTrip(code('g'));
  return { loadMs: load, compileMs: compile, first, warm };
}

/** Whether the CLI's entry chunk (what -o, -H and non-terminal runs load) pulls in the toolkit. */
async function oneShotLoadsToolkit() {
  const r = await build({
    entryPoints: { cli: join(root, 'src/cli/main.ts') },
    outdir: join(tmp, 'cli'),
    write: false,
    metafile: true,
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['wasmoon', '@modelcontextprotocol/*'],
    logLevel: 'silent',
  });
  const outs = r.metafile.outputs;
  const seen = new Set();
  const stack = [Object.keys(outs).find((k) => outs[k].entryPoint === 'src/cli/main.ts')];
  while (stack.length) {
    const o = stack.pop();
    if (seen.has(o)) continue;
    seen.add(o);
    for (const i of outs[o].imports) if (i.kind === 'import-statement' && outs[i.path]) stack.push(i.path);
  }
  return [...seen].some((o) => Object.keys(outs[o].inputs).some((i) => i.startsWith('src/tui/')));
}

const { mod: T, chunks } = await bundle();
const leaks = await oneShotLoadsToolkit();
const cold = coldStart();
const full = await streamRun(T, 'fullscreen');
const inline = await streamRun(T, 'inline');
const fullProse = await streamRun(T, 'fullscreen', { prose: true });
const inlineProse = await streamRun(T, 'inline', { prose: true });
const full16 = await streamRun(T, 'fullscreen', { prose: true, frameMs: 16 });
const pg = await pgupRun(T);
const md = markdownRun(T, answer(28_000));
const mdTight = markdownRun(T, answer(28_000).replace(/\n\n+/g, '\n'));
const mdList = markdownRun(T, Array.from({ length: 2000 }, (_, i) => `${i + 1}. point ${i} with **bold** and \`code\`\n`).join(''));
const mdTable = markdownRun(
  T,
  `| name | value | note |\n|:--|--:|---|\n${Array.from({ length: 2000 }, (_, i) => `| item ${i} | ${i * 7} | some **words** here |\n`).join('')}`,
);
const mdLines = markdownRun(
  T,
  Array.from({ length: 2000 }, (_, i) => `Line ${i} of the output: some words and more words here\n`).join(''),
);
const ed = editorRun(T);
const hl = await highlightCost(T);

const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const rows = [
  [
    'bytes per streamed chunk, prose reply, full screen (2,000-line transcript, 110×32, 40 chars / 4 ms)',
    `${f(fullProse.bytesPerChunk, 1)} B (${fullProse.frames} frames for ${fullProse.chunks} chunks)`,
    '≤ ~43 B',
  ],
  ["  the reply's own bytes (text, styles), per chunk: the floor", `${f(fullProse.contentPerChunk, 1)} B`, ''],
  ['bytes per streamed chunk, prose reply, inline', `${f(inlineProse.bytesPerChunk, 1)} B (${inlineProse.frames} frames)`, '≤ full screen'],
  [
    'bytes per streamed chunk, markdown reply (lists, code, tables), full screen',
    `${f(full.bytesPerChunk, 1)} B (${full.frames} frames)`,
    '',
  ],
  ["  the reply's own bytes per chunk (box drawing is 3 B a cell)", `${f(full.contentPerChunk, 1)} B`, ''],
  ['bytes per streamed chunk, markdown reply, inline', `${f(inline.bytesPerChunk, 1)} B (${inline.frames} frames)`, '≤ full screen'],
  [
    'bytes per streamed chunk, prose, full screen, 16 ms frames instead of 50',
    `${f(full16.bytesPerChunk, 1)} B (${full16.frames} frames)`,
    '',
  ],
  ['render work per chunk, markdown reply, full screen (frames + markdown)', `${f(full.renderMsPerChunk, 3)} ms`, '≤ 1 ms'],
  ['render work per chunk, markdown reply, inline', `${f(inline.renderMsPerChunk, 3)} ms`, '≤ 1 ms'],
  [
    `PgUp through a ${pg.lines.toLocaleString('en')}-line transcript, per step`,
    `${f(pg.msPerStep, 3)} ms (max ${f(pg.maxStep)})`,
    '≤ 2 ms',
  ],
  ['resize of that transcript (every block reflowed)', `${f(pg.resizeMs, 1)} ms`, ''],
  [
    `markdown: ${kb(md.bytes)} answer in ${md.deltas} deltas of 40 chars, total`,
    `${f(md.totalMs, 1)} ms (${f(md.perDeltaMs, 3)} ms per delta, max ${f(md.maxDeltaMs, 1)})`,
    '',
  ],
  [
    'markdown: characters lexed while streaming',
    `${md.lexed.toLocaleString('en')} (re-lexing the prefix: ${md.naive.toLocaleString('en')})`,
    '',
  ],
  ['markdown: the whole answer rendered at once', `${f(md.wholeMs, 1)} ms`, ''],
  [
    'markdown: the same answer without blank lines, per delta / characters lexed',
    `${f(mdTight.perDeltaMs, 3)} ms (max ${f(mdTight.maxDeltaMs, 1)}) / ${mdTight.lexed.toLocaleString('en')}`,
    '',
  ],
  [
    `markdown: a list of 2,000 items (${kb(mdList.bytes)}), per delta / characters lexed`,
    `${f(mdList.perDeltaMs, 3)} ms (max ${f(mdList.maxDeltaMs, 1)}) / ${mdList.lexed.toLocaleString('en')} (re-lexing: ${mdList.naive.toLocaleString('en')})`,
    '',
  ],
  [
    'highlight.js: load (a module a task, wall) / TS grammar (a task) / 200 lines of TS in the thread, first / warm (wall; here: asking, spans)',
    `${f(hl.loadMs, 1)} / ${f(hl.compileMs, 1)} / ${f(hl.first.wall, 1)}; ${f(hl.first.asked, 1)}, ${f(hl.first.spans, 1)} / ${f(hl.warm.wall, 1)}; ${f(hl.warm.asked, 1)}, ${f(hl.warm.spans, 1)} ms`,
    '',
  ],
  [
    `markdown: a paragraph of 2,000 lines (${kb(mdLines.bytes)}), per delta / characters lexed`,
    `${f(mdLines.perDeltaMs, 3)} ms (max ${f(mdLines.maxDeltaMs, 1)}) / ${mdLines.lexed.toLocaleString('en')}`,
    '',
  ],
  [
    `markdown: a table of 2,000 rows (${kb(mdTable.bytes)}), per delta / characters lexed`,
    `${f(mdTable.perDeltaMs, 3)} ms (max ${f(mdTable.maxDeltaMs, 1)}) / ${mdTable.lexed.toLocaleString('en')} (re-lexing: ${mdTable.naive.toLocaleString('en')})`,
    '',
  ],
  [`line editor: paste of ${kb(ed.bytes)}, then a keystroke (insert + render)`, `${f(ed.pasteMs, 1)} ms, ${f(ed.keyMs, 3)} ms`, ''],
  [
    'toolkit import in a fresh process / first frame (plain text) / first markdown',
    `${f(cold.importMs, 1)} / ${f(cold.frameMs, 1)} / ${f(cold.mdMs, 1)} ms`,
    '',
  ],
  ['CLI entry chunk (one-shot, -H, non-terminal paths) loads src/tui', leaks ? 'YES' : 'no', 'no'],
  [
    'bundle: ' +
      Object.entries(chunks)
        .filter(([k]) => !k.includes('/'))
        .map(([k, v]) => `${k} ${kb(v)}`)
        .join(', '),
    '',
    '',
  ],
];
const w = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c].length), 6));
console.log('terminal toolkit (src/tui; medians)');
for (const r of [['metric', 'value', 'goal'], ...rows])
  console.log(
    r
      .map((x, c) => x.padEnd(w[c]))
      .join('  ')
      .trimEnd(),
  );
rmSync(tmp, { recursive: true, force: true });
