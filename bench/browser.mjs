// clm/browser figures (issue 11): the size (esbuild, minified, gzip -9) of a page naming one wire
// dialect, each of OpenAI's, Anthropic's and Responses' (goal <= 20 KiB), and of a page naming
// every dialect (DIALECTS), and the wall time of a two-request tool turn in headless Chromium
// against a loopback mock serving the page on the same origin (medians). Needs dist/ (npm ci
// builds it); without Chromium only the sizes are measured.
// Usage: node bench/browser.mjs [--quick]

import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { CHROMIUM_FLAGS, CHROMIUM_HINT, findChromium } from '../scripts/chromium.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const TURNS = quick ? 10 : 50;
const WARM = 5;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

async function bundle(contents, minify) {
  const r = await build({
    stdin: { contents, resolveDir: root, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify,
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  return r.outputFiles[0].text;
}

const out = [];
/** A page that creates an agent over fetch, speaking the dialects `names` gives. */
const page = (names) =>
  `import { createAgent, createFetchHost, ${names} } from 'clm/browser'; globalThis.x = [createAgent, createFetchHost, ${names}];`;
for (const adapter of ['openaiAdapter', 'anthropicAdapter', 'responsesAdapter']) {
  const js = await bundle(page(adapter), true);
  const gz = gzipSync(js, { level: 9 }).length;
  out.push(
    `clm/browser page naming ${adapter}: ${kib(js.length)} minified, ${kib(gz)} minified+gzip (goal <= 20 KiB: ${gz <= 20 * 1024 ? 'PASS' : 'MISS'})`,
  );
}
const every = await bundle(page('DIALECTS'), true);
out.push(
  `clm/browser page naming DIALECTS (every dialect): ${kib(every.length)} minified, ${kib(gzipSync(every, { level: 9 }).length)} minified+gzip`,
);

const chromium = findChromium();
if (!chromium) {
  out.push(`tool turn in the browser: not measured (Chromium not found; ${CHROMIUM_HINT})`);
} else {
  out.push(await turnLatency(chromium));
}
process.stdout.write(`${out.join('\n')}\n`);

/** The page's script: `turns(n)` runs n fresh agents through one echo-tool round each. */
function pageSource() {
  return `
import { createAgent, createFetchHost, openaiAdapter } from 'clm/browser';
const echo = {
  name: 'echo', noPrompt: true, parameters: { type: 'object', properties: { text: { type: 'string' } } },
  invoke: (inv) => inv.complete('echo: ' + JSON.parse(inv.args).text),
};
globalThis.turns = async (n) => {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const agent = createAgent({ baseUrl: '/v1/chat/completions', stream: true }, createFetchHost(), {}, { dialects: [openaiAdapter] });
    agent.addTool(echo);
    const t0 = performance.now();
    const r = await agent.run('echo x');
    ms.push(performance.now() - t0);
    agent.close();
    if (r.status !== 0) throw new Error('turn failed: ' + r.error);
  }
  return ms;
};`;
}

async function turnLatency(executablePath) {
  const app = await bundle(pageSource(), true);
  const sse = (objs) => `${objs.map((o) => `data: ${JSON.stringify(o)}\n\n`).join('')}data: [DONE]\n\n`;
  const callReply = sse([
    {
      choices: [
        {
          index: 0,
          delta: {
            role: 'assistant',
            tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'echo', arguments: '' } }],
          },
        },
      ],
    },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"text":"x"}' } }] } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  ]);
  const textReply = sse([
    { choices: [{ index: 0, delta: { role: 'assistant', content: 'done' } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ]);
  let posts = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><title>bench</title><script type="module" src="/app.js"></script>');
      } else if (req.method === 'GET' && req.url === '/app.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(app);
      } else if (req.method === 'POST') {
        posts++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(body.includes('"role":"tool"') ? textReply : callReply);
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const puppeteer = (await import('puppeteer-core')).default;
  const userDataDir = mkdtempSync(join(tmpdir(), 'clm-bench-chromium-'));
  const browser = await puppeteer.launch({ executablePath, headless: true, pipe: true, args: CHROMIUM_FLAGS, userDataDir });
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForFunction('typeof globalThis.turns === "function"');
    await page.evaluate(`turns(${WARM})`);
    const ms = await page.evaluate(`turns(${TURNS})`);
    if (posts !== 2 * (WARM + TURNS)) throw new Error(`mock saw ${posts} requests, expected ${2 * (WARM + TURNS)}`);
    return `tool turn in the browser (2 streamed requests, loopback, ${TURNS} turns): median ${median(ms).toFixed(1)} ms, min ${Math.min(...ms).toFixed(1)} ms`;
  } finally {
    await browser.close().catch(() => undefined);
    rmSync(userDataDir, { recursive: true, force: true });
    server.close();
  }
}
