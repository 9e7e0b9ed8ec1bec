// secrets.lua values never reach the model, a session file or the debug log — also when a tool
// prints one (as text, as bytes, in a failure or a background job's report), and when a log line
// is cut in the middle of one; --allow-tools "" allows nothing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { show } from '../fixtures/run-cli.js';
import { cliSuite, sessionIdOf } from '../fixtures/cli-suite.js';

const SECRET = 'tvly-SECRETSECRETSECRET1234567890';
const { mock, dirs, run } = await cliSuite({ dirs: 'each' });

test('a secret printed by a tool is masked for the model, in the session file and the debug log', async () => {
  const cfg = join(dirs.config, 'clm');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'secrets.lua'), `return { tavily = "${SECRET}" }\n`, { mode: 0o600 });
  writeFileSync(join(cfg, 'config.lua'), 'return { tools = { web_search = { api_key = clm.secrets.tavily } } }\n');
  const notes = join(dirs.root, 'notes.txt');
  // 118 bytes of padding put the secret across the old 150-character cut of the result log line.
  writeFileSync(notes, `${'A'.repeat(118)}${SECRET}\n`);
  mock.push(oa.toolCall('read_file', { path: notes }), oa.text('ok'));
  const log = join(dirs.root, 'debug.log');
  const r = await run(['-o', 'look'], { env: { CLM_DEBUG_LOG: log } });
  assert.equal(r.code, 0, show(r));
  assert.ok(!mock.posts[1]!.body.includes('SECRETSECRET'), 'the model does not see the secret');
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, `${'A'.repeat(118)}[REDACTED]\n\n[lines 1-1 of 1]`);
  const logText = readFileSync(log, 'utf8');
  assert.ok(!/tvly-SECRET/.test(logText), 'no part of the secret in the debug log');
  assert.match(logText, /\[REDACTED\]/);
  const id = sessionIdOf(r);
  const session = readFileSync(join(dirs.sessions, `${id}.jsonl`), 'utf8');
  assert.ok(!session.includes('SECRETSECRET'), 'no secret in the session file');
  assert.match(session, /A{118}\[REDACTED\]/);
});

test('--allow-tools "" allows no tool at all', async () => {
  mock.push(oa.toolCall('list_dir', { path: dirs.root }), oa.text('ok'));
  const r = await run(['--allow-tools', '', '-o', 'list']);
  assert.equal(r.code, 0, show(r));
  const tool = mock.posts[1]!.json.messages.at(-1);
  assert.equal(tool.content, '[tool failed: denied by policy (not in --allow-tools)]');
  assert.ok(readdirSync(dirs.root).length > 0);
});

function writeSecrets(extra = '') {
  const cfg = join(dirs.config, 'clm');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'secrets.lua'), `return { tavily = "${SECRET}", groq = "gsk_GROQGROQGROQ0987654321" }\n`, { mode: 0o600 });
  writeFileSync(join(cfg, 'config.lua'), `return { tools = { web_search = { api_key = clm.secrets.tavily } } }\n${extra}`);
  return cfg;
}

test("read_file of secrets.lua gives the model the file's text with every value masked", async () => {
  const cfg = writeSecrets();
  mock.push(oa.toolCall('read_file', { path: join(cfg, 'secrets.lua') }), oa.text('ok'));
  // In full: the sandbox's default refuses the read (test/sandbox); masking is the line behind it.
  const r = await run(['-o', 'read my secrets', '--sandbox', 'full']);
  assert.equal(r.code, 0, show(r));
  const body = mock.posts[1]!.body;
  assert.ok(!body.includes('SECRETSECRET') && !body.includes('GROQGROQ'), body);
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, 'return { tavily = "[REDACTED]", groq = "[REDACTED]" }\n\n[lines 1-1 of 1]');
  assert.ok(!r.stdout.includes('SECRETSECRET') && !r.stderr.includes('SECRETSECRET'));
});

test("a secret in a command's output (bytes) and in a tool's failure is masked for the model", async () => {
  const cfg = writeSecrets();
  mock.push(
    oa.toolCalls([
      { name: 'shell_exec', args: { command: `cat '${join(cfg, 'secrets.lua')}'` } },
      { name: 'read_file', args: { path: join(dirs.root, `missing-${SECRET}`) } },
    ]),
    oa.text('done'),
  );
  const r = await run(['-o', 'look', '--sandbox', 'full']);
  assert.equal(r.code, 0, show(r));
  const results = mock.posts[1]!.json.messages.filter((m: { role: string }) => m.role === 'tool');
  const text = JSON.stringify(results);
  assert.ok(!text.includes('SECRETSECRET') && !text.includes('GROQGROQ'), text);
  assert.match(text, /tavily = \\"\[REDACTED\]\\", groq = \\"\[REDACTED\]\\"/);
  assert.match(text, /\[tool failed: [^"]*missing-\[REDACTED\]/);
});

test('secrets.lua without a config.lua: its values are masked all the same (plain table, or code)', async () => {
  const cfg = join(dirs.config, 'clm');
  mkdirSync(cfg, { recursive: true });
  for (const text of [
    `return { tavily = "${SECRET}", groq = "gsk_GROQGROQGROQ0987654321" }\n`,
    `local t = "${SECRET}"\nreturn { tavily = t, groq = "gsk_GROQGROQ" .. "GROQ0987654321" }\n`,
  ]) {
    mock.reset();
    writeFileSync(join(cfg, 'secrets.lua'), text, { mode: 0o600 });
    mock.push(oa.toolCall('shell_exec', { command: `cat '${join(cfg, 'secrets.lua')}'` }), oa.text('ok'));
    const r = await run(['-o', 'read my secrets', '--sandbox', 'full'], { env: { SHELL: '/bin/sh' } });
    assert.equal(r.code, 0, show(r));
    const body = mock.posts[1]!.body;
    assert.ok(!body.includes('SECRETSECRET') && !body.includes('GROQGROQGROQ0987654321'), body);
    assert.match(mock.posts[1]!.json.messages.at(-1).content, /\[REDACTED\]/);
  }
});
