// The real `clm` binary repairing a tool call a local model wrote as text: the call runs, the
// repair is said on every output (a dim line on stderr, a stream-json `repair` line, `repairs`
// in the json result, a `[repair]` line in the debug log), and `repair = false` in config.lua
// turns it off.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { show } from '../fixtures/run-cli.js';
import { cliSuite, jsonLines } from '../fixtures/cli-suite.js';
import { tokens } from '../fixtures/text-call-replies.js';

const { mock, dirs, run } = await cliSuite({
  dirs: 'each',
  setup: (d) => {
    mkdirSync(join(d.root, 'work'));
    writeFileSync(join(d.root, 'work', 'f.txt'), 'x');
  },
});

const callAsText = () => tokens(`<tool_call>\n{"name": "list_dir", "arguments": {"path": "${join(dirs.root, 'work')}",}}\n</tool_call>`);

test('a call written as text runs, and json counts the repair', async () => {
  mock.push(oa.streamText(callAsText()), oa.text('one file'));
  const r = await run(['--output-format', 'json', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const o = JSON.parse(r.stdout);
  assert.deepEqual(
    o.tool_calls.map((c: any) => [c.name, c.outcome]),
    [['list_dir', 'ok']],
  );
  assert.equal(o.repairs, 1);
  assert.equal(o.result, 'one file');
  assert.match(mock.posts[1]!.json.messages.at(-1).content, /f\.txt/);
});

test('text output: a dim line on stderr, no part of the call on stdout; the debug log has [repair]', async () => {
  mock.push(oa.streamText(callAsText()), oa.text('one file'));
  const log = join(dirs.root, 'debug.log');
  const r = await run(['-o', 'q'], { env: { CLM_DEBUG_LOG: log } });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'one file\n');
  assert.match(r.stderr, /^\[repaired a tool call written as text\]$/m);
  assert.match(r.stderr, /^\[tool: list_dir /m);
  assert.match(readFileSync(log, 'utf8'), /\[repair\] <tool_call> \(Hermes, Qwen\): <tool_call>/);
});

test('stream-json: a repair line before the tool_begin', async () => {
  mock.push(oa.streamText(callAsText()), oa.text('one file'));
  const r = await run(['--output-format', 'stream-json', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const types = jsonLines(r.stdout).map((l) => l.type);
  const i = types.indexOf('repair');
  assert.ok(i > 0 && types.indexOf('tool_begin') > i, types.join(' '));
  assert.equal(jsonLines(r.stdout)[i]!.text, 'repaired a tool call written as text');
  assert.ok(!types.includes('text') || types.indexOf('text') > types.indexOf('tool_begin'), 'no text before the call');
});

test('repair = false: the reply stays text', async () => {
  dirs.write('config.lua', 'return { repair = false }');
  const parts = callAsText();
  mock.push(oa.streamText(parts));
  const r = await run(['--output-format', 'json', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const o = JSON.parse(r.stdout);
  assert.equal(o.repairs, 0);
  assert.deepEqual(o.tool_calls, []);
  assert.equal(o.result, parts.join(''));
  assert.equal(mock.posts.length, 1);
});
