// One large SSE event (issues 21 and 27): a streamed reply whose text comes in a single event of
// 8, 24 and 50 MB, and the same 50 MB not streamed, through the library as built in dist/ (the
// agent over the Node host). The server is this process, on loopback; each turn runs in a fresh
// child process, timed there from submit to the turn's end. Parsing is linear in the event's size
// when the time per byte does not grow with it: the ratio of 50 MB's to 8 MB's is the figure.
// Medians of RUNS runs. Usage: node bench/sse.mjs [--quick]

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = process.argv.includes('--quick') ? 1 : 3;
const MB = 1e6;

if (process.argv[2] === 'client') {
  // One turn: node bench/sse.mjs client URL stream|whole
  const { createAgent } = await import(pathToFileURL(join(root, 'dist/index.js')).href);
  const { createNodeHost } = await import(pathToFileURL(join(root, 'dist/node.js')).href);
  const host = createNodeHost({ log: null });
  const agent = createAgent({ baseUrl: process.argv[3], stream: process.argv[4] === 'stream', maxReplyBytes: 0 }, host, {});
  const t0 = performance.now();
  const r = await agent.run('go');
  const ms = performance.now() - t0;
  agent.close();
  host.close();
  process.stdout.write(`${JSON.stringify({ ms, status: r.status, chars: r.text.length, error: r.error })}\n`);
  process.exit(0);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The body of a reply whose text is `mb` MB, as one SSE event or as a whole JSON reply. */
function body(mb, stream) {
  const text = 'x'.repeat(mb * MB);
  if (!stream)
    return Buffer.from(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] }));
  const event = (o) => `data: ${JSON.stringify(o)}\n\n`;
  return Buffer.from(
    event({ choices: [{ index: 0, delta: { content: text } }] }) +
      event({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
      'data: [DONE]\n\n',
  );
}

let reply = { bytes: Buffer.alloc(0), type: '' };
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': reply.type, 'content-length': reply.bytes.length });
    res.end(reply.bytes);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/v1/chat/completions`;

/** One turn in a fresh process (not spawnSync: this process serves the reply meanwhile). */
function turn(stream) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'client', url, stream ? 'stream' : 'whole'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`client printed ${JSON.stringify(out.slice(0, 200))}`));
      }
    });
  });
}

const rows = [];
for (const [mb, stream] of [
  [8, true],
  [24, true],
  [50, true],
  [50, false],
]) {
  reply = { bytes: body(mb, stream), type: stream ? 'text/event-stream' : 'application/json' };
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await turn(stream);
    if (r.status !== 0 || r.chars !== mb * MB)
      throw new Error(`${mb} MB ${stream ? 'stream' : 'whole'}: status ${r.status}, ${r.chars} chars, ${r.error}`);
    times.push(r.ms);
  }
  rows.push({ mb, stream, ms: median(times) });
}
server.close();

const perByte = (r) => r.ms / r.mb;
const at = (mb, stream = true) => rows.find((r) => r.mb === mb && r.stream === stream);
const lines = [
  `One SSE event (bench/sse.mjs): the reply's text in one event, library from dist/, median of ${RUNS}`,
  '| reply | time | MB/s |',
  '|---|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.mb} MB ${r.stream ? 'in one event' : 'not streamed'} | ${(r.ms / 1000).toFixed(2)} s | ${((r.mb * 1000) / r.ms).toFixed(1)} |`,
  ),
  `time per byte, 50 MB event ÷ 8 MB event: ${(perByte(at(50)) / perByte(at(8))).toFixed(2)}× (linear parsing: about 1×)`,
];
process.stdout.write(`${lines.join('\n')}\n`);
