#!/usr/bin/env node
// A scripted OpenAI-chat mock LLM for `npm run bench`. It runs as its own process so that the
// CPU time and memory measured around clm are clm's alone.
//
//   node bench/mock-server.mjs text
//   node bench/mock-server.mjs read_file:N[:BYTES] FIXTURE_PATH
//   node bench/mock-server.mjs plan
//
// (or BENCH_MOCK_MODE / BENCH_MOCK_FIXTURE in the environment). POST …/chat/completions answers in
// the OpenAI chat dialect, POST …/messages in Anthropic's. Listens on 127.0.0.1, port 0, and
// prints the port as the first line on stdout.
//
// Modes:
//   text              every chat request gets a short plain-text reply.
//   read_file:N       while the request carries fewer than N tool results, the reply is a
//                     `read_file` call of FIXTURE_PATH ({"path": ..., "limit": 200}); then text.
//   read_file:N:BYTES as above, and the fixture is (re)written first: BYTES of 64-byte text lines.
//   shell_exec:N      as read_file:N, with a `shell_exec` call of `seq 1 500` (a tool process per round).
//   plan              every chat request gets the reply the driver set last with POST /__plan
//                     ({"parts": [...], "everyMs": N}): each part a content delta, N ms apart
//                     (the UI benches: a short answer, or a stream at a given pace).
//   MODE@MS           any of the above, every request (chat, models, /props) answered after MS
//                     milliseconds: a remote, hosted API's time to first byte.
//
// Requests with `"stream": true` are answered as an event stream (deltas, finish, usage, [DONE]),
// others with one JSON body. Usage is reported with small fixed token counts on purpose: the
// loops measure the engine, and a realistic count (~2 MB of history at 250 rounds) would cross
// the auto-compaction threshold and turn the run into a compaction benchmark.
//
// Side doors for the bench driver: GET /__stats (counters as JSON), POST /__reset, POST /__plan.
// bench/mock.mjs starts it and calls them.

import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { fixtureText } from './fixture.mjs';

const modeArg = process.argv[2] ?? process.env.BENCH_MOCK_MODE ?? 'text';
const fixture = process.argv[3] ?? process.env.BENCH_MOCK_FIXTURE;

/** Parse `text` | `plan` | `read_file:N[:BYTES]` | `shell_exec:N`, each optionally `@MS`. */
function parseMode(arg) {
  const at = /^(.*)@(\d+)$/.exec(arg);
  const s = at ? at[1] : arg;
  const delayMs = at ? Number(at[2]) : 0;
  if (s === 'text' || s === 'plan') return { kind: s, delayMs };
  const m = /^(read_file|shell_exec):(\d+)(?::(\d+))?$/.exec(s);
  if (!m) throw new Error(`unknown mode '${arg}' (want text, read_file:N[:BYTES] or shell_exec:N, optionally @MS)`);
  return { kind: 'read_file', tool: m[1], rounds: Number(m[2]), bytes: m[3] === undefined ? undefined : Number(m[3]), delayMs };
}

const mode = parseMode(modeArg);
if (mode.kind === 'read_file' && mode.tool === 'read_file') {
  if (!fixture) throw new Error('read_file mode needs a fixture path (argv[3] or BENCH_MOCK_FIXTURE)');
  if (mode.bytes !== undefined) writeFileSync(fixture, fixtureText(mode.bytes));
}

const USAGE = { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 };
const TEXT_PARTS = ['Hello', '! This is ', 'the bench', ' mock.'];
/** The `plan` mode's next reply. */
let plan = { parts: ['ok'], everyMs: 0 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const stats = { requests: 0, chat: 0, other: 0, maxToolResults: 0, lastToolBytes: 0, requestBytes: 0, cpuStart: process.cpuUsage() };

function sseBody(events) {
  let s = '';
  for (const e of events) s += `data: ${JSON.stringify(e)}\n\n`;
  return `${s}data: [DONE]\n\n`;
}

function chunk(delta, finish = null) {
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'local-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function textReply(stream) {
  if (stream) {
    const ev = [chunk({ role: 'assistant', content: '' })];
    for (const p of TEXT_PARTS) ev.push(chunk({ content: p }));
    ev.push(chunk({}, 'stop'));
    ev.push({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: 'local-model', choices: [], usage: USAGE });
    return { sse: sseBody(ev) };
  }
  return {
    json: {
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 0,
      model: 'local-model',
      choices: [{ index: 0, message: { role: 'assistant', content: TEXT_PARTS.join('') }, finish_reason: 'stop' }],
      usage: USAGE,
    },
  };
}

function toolReply(stream, id, args) {
  if (stream) {
    const half = Math.floor(args.length / 2);
    const ev = [
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id, type: 'function', function: { name: mode.tool, arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }),
      chunk({}, 'tool_calls'),
      { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: 'local-model', choices: [], usage: USAGE },
    ];
    return { sse: sseBody(ev) };
  }
  return {
    json: {
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 0,
      model: 'local-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id, type: 'function', function: { name: mode.tool, arguments: args } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: USAGE,
    },
  };
}

function send(res, status, reply) {
  if (res.destroyed) return; // the client went away while the delay ran
  if (reply.sse !== undefined) {
    res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(reply.sse);
  } else {
    const body = JSON.stringify(reply.json);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }
}

/** The `plan` mode's reply: its parts as deltas, everyMs apart (a stream however the request asked). */
async function planReply(res) {
  const { parts, everyMs } = plan;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (let i = 0; i < parts.length && !res.destroyed; i++) {
    if (i > 0 && everyMs > 0) await sleep(everyMs);
    res.write(`data: ${JSON.stringify(chunk({ content: parts[i] }))}\n\n`);
  }
  if (res.destroyed) return;
  res.write(`data: ${JSON.stringify(chunk({}, 'stop'))}\n\n`);
  res.end(
    sseBody([{ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: 'local-model', choices: [], usage: USAGE }]),
  );
}

function handleChat(raw, res) {
  let req;
  try {
    req = JSON.parse(raw);
  } catch {
    return send(res, 400, { json: { error: { message: 'bench mock: request body is not JSON', type: 'invalid_request_error' } } });
  }
  stats.chat++;
  const messages = Array.isArray(req.messages) ? req.messages : [];
  let tools = 0;
  let last;
  for (const m of messages)
    if (m && m.role === 'tool') {
      tools++;
      last = m;
    }
  if (tools > stats.maxToolResults) stats.maxToolResults = tools;
  if (last) stats.lastToolBytes = Buffer.byteLength(typeof last.content === 'string' ? last.content : JSON.stringify(last.content ?? ''));
  if (mode.kind === 'plan') return void planReply(res);
  const stream = req.stream === true;
  if (mode.kind === 'read_file' && tools < mode.rounds) {
    const args = mode.tool === 'shell_exec' ? { command: 'seq 1 500' } : { path: fixture, limit: 200 };
    return send(res, 200, toolReply(stream, `call_${tools + 1}`, JSON.stringify(args)));
  }
  return send(res, 200, textReply(stream));
}

/** The Anthropic Messages dialect (POST …/messages): the same modes, tool results counted as tool_result blocks. */
function handleMessages(raw, res) {
  let req;
  try {
    req = JSON.parse(raw);
  } catch {
    return send(res, 400, {
      json: { type: 'error', error: { type: 'invalid_request_error', message: 'bench mock: request body is not JSON' } },
    });
  }
  stats.chat++;
  const results = (Array.isArray(req.messages) ? req.messages : []).flatMap((m) =>
    Array.isArray(m?.content) ? m.content.filter((b) => b?.type === 'tool_result') : [],
  );
  const tools = results.length;
  if (tools > stats.maxToolResults) stats.maxToolResults = tools;
  if (tools) stats.lastToolBytes = Buffer.byteLength(String(results.at(-1).content ?? ''));
  const usage = { input_tokens: USAGE.prompt_tokens, output_tokens: USAGE.completion_tokens };
  const call = mode.kind === 'read_file' && tools < mode.rounds;
  const args = mode.tool === 'shell_exec' ? { command: 'seq 1 500' } : { path: fixture, limit: 200 };
  const block = call
    ? { type: 'tool_use', id: `toolu_${tools + 1}`, name: mode.tool, input: args }
    : { type: 'text', text: TEXT_PARTS.join('') };
  const stop = call ? 'tool_use' : 'end_turn';
  if (req.stream !== true) {
    return send(res, 200, {
      json: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'local-model', content: [block], stop_reason: stop, usage },
    });
  }
  const ev = (type, o) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
  let sse = ev('message_start', {
    message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'local-model', content: [], usage },
  });
  if (call) {
    sse += ev('content_block_start', { index: 0, content_block: { ...block, input: {} } });
    sse += ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(args) } });
  } else {
    sse += ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (const t of TEXT_PARTS) sse += ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: t } });
  }
  sse += ev('content_block_stop', { index: 0 });
  sse += ev('message_delta', { delta: { stop_reason: stop }, usage: { output_tokens: USAGE.completion_tokens } });
  sse += ev('message_stop', {});
  return send(res, 200, { sse });
}

const server = createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(parts).toString('utf8');
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/__stats') {
      const cpu = process.cpuUsage(stats.cpuStart);
      const { cpuStart, ...rest } = stats;
      return send(res, 200, { json: { ...rest, mockCpuMs: (cpu.user + cpu.system) / 1000 } });
    }
    if (req.method === 'POST' && path === '/__reset') {
      Object.assign(stats, {
        requests: 0,
        chat: 0,
        other: 0,
        maxToolResults: 0,
        lastToolBytes: 0,
        requestBytes: 0,
        cpuStart: process.cpuUsage(),
      });
      return send(res, 200, { json: { ok: true } });
    }
    if (req.method === 'POST' && path === '/__plan') {
      const p = JSON.parse(raw);
      plan = { parts: p.parts?.length ? p.parts.map(String) : ['ok'], everyMs: Number(p.everyMs) || 0 };
      return send(res, 200, { json: { ok: true } });
    }
    stats.requests++;
    stats.requestBytes += raw.length;
    const chat = req.method === 'POST' && path.endsWith('/chat/completions');
    const messages = req.method === 'POST' && path.endsWith('/messages');
    // Counted on arrival: a probe the client gives up on still shows.
    if (!chat && !messages) stats.other++;
    const answer = () => (chat ? handleChat(raw, res) : messages ? handleMessages(raw, res) : other(req, path, res));
    if (mode.delayMs) setTimeout(answer, mode.delayMs);
    else answer();
  });
});

function other(req, path, res) {
  if (req.method === 'GET' && path.endsWith('/models')) {
    return send(res, 200, { json: { object: 'list', data: [{ id: 'local-model', object: 'model', owned_by: 'bench' }] } });
  }
  return send(res, 404, { json: { error: { message: `bench mock: no route ${req.method} ${path}`, type: 'not_found' } } });
}
server.keepAliveTimeout = 10_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
