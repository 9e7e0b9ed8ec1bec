// The slash commands and TAB completion end to end: the real clm on a pseudo-terminal, what the
// person sees interpreted by @xterm/headless, against the loopback mock LLM.

import { test, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as A from '../fixtures/anthropic-replies.js';
import * as O from '../fixtures/openai-replies.js';
import { startMockLlm } from '../fixtures/mock-llm.js';
import { spawnPty, KEYS, type PtyScreen } from '../fixtures/pty-screen.js';
import { makeDirs, type CliDirs } from '../fixtures/run-cli.js';

const mock = await startMockLlm();
let dirs: CliDirs;
const running: PtyScreen[] = [];
after(async () => {
  for (const s of running) await s.dispose();
  await mock.close();
});
beforeEach(() => {
  mock.reset();
  dirs = makeDirs('clm-ui-cmd-pty-');
  dirs.write(
    'config.lua',
    `return {
  model = "oa/gpt",
  providers = {
    oa = { url = "${mock.base}" },
    anth = { kind = "anthropic", url = "${mock.url}/anth/v1", api_key = "sk-ant-0123456789", models = { claude = {}, ["claude-opus"] = {} } },
  },
}
`,
  );
});

function start(): PtyScreen {
  const s = spawnPty(['-S', '-p', dirs.empty], { dirs, cols: 100, rows: 30 });
  running.push(s);
  return s;
}

/** The input row (`> …`), trailing blanks trimmed. */
const inputLine = (s: PtyScreen) => s.screen().find((l) => l.startsWith('> ')) ?? '';

test("TAB completes a command and a provider, lists the configured models, then the server's; /model switches the dialect with the history", async () => {
  mock.onGet('/anth/v1/models', { body: { data: [{ id: 'claude' }, { id: 'claude-haiku' }] } });
  const s = start();
  await s.waitFor('[online]', 'the connection');
  mock.push(O.text('the first answer'));
  s.type(`first question${KEYS.enter}`);
  await s.waitFor('the first answer');

  s.type(`/mo${KEYS.tab}`);
  await s.waitFor(() => inputLine(s) === '> /model', 'the command completed');
  s.type(`an${KEYS.tab}`);
  await s.waitFor(() => inputLine(s) === '> /model anth/', 'the provider completed');
  s.type(KEYS.tab);
  await s.waitFor('from server:', 'the live list');
  assert.ok(s.text().includes('anth/claude-haiku'), s.text());
  assert.equal(inputLine(s), '> /model anth/claude', 'the common part of the configured specs');
  s.type(KEYS.enter);
  await s.waitFor('[switched to model: anth/claude]');
  await s.waitFor('[anth/claude]', 'the status bar');
  assert.ok(!s.text().includes('from server:'), 'the list is gone after the next key');

  mock.push(A.text('the second answer'));
  s.type(`second question${KEYS.enter}`);
  await s.waitFor('the second answer');
  const req = mock.posts.at(-1)!;
  assert.equal(req.path, '/anth/v1/messages');
  assert.deepEqual(
    req.json.messages.map((m: { content: unknown }) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))),
    ['first question', 'the first answer', 'second question'],
  );
  assert.ok(!s.raw().includes('sk-ant-0123456789'), 'the key never reaches the screen');
  s.type(`/quit${KEYS.enter}`);
  assert.equal((await s.exited).code, 0);
});

test('/help keys, an unknown command, /clear with a new session, then quit', async () => {
  const s = start();
  await s.waitFor('[online]', 'the connection');
  s.type(`/help keys${KEYS.enter}`);
  await s.waitFor('quit when idle with an empty input');
  s.type(`/frobnicate${KEYS.enter}`);
  await s.waitFor('unknown command (try /help)');
  mock.push(O.text('an answer to forget'));
  s.type(`remember this${KEYS.enter}`);
  await s.waitFor('an answer to forget');
  const before = readdirSync(join(dirs.state, 'clm'));
  s.type(`/clear${KEYS.enter}`);
  await s.waitFor(/\[new session \S+\]/);
  const id = /\[new session (\S+)\]/.exec(s.text())![1]!;
  assert.ok(!s.text().includes('an answer to forget'), 'the transcript is cleared');
  assert.ok(!before.includes(`${id}.jsonl`));
  assert.ok(existsSync(join(dirs.state, 'clm', before[0]!)), 'the session with the conversation is kept');
  s.type(`quit${KEYS.enter}`);
  assert.equal((await s.exited).code, 0);
  // The new session holds nothing: it is deleted at exit and no session line names it.
  assert.ok(!existsSync(join(dirs.state, 'clm', `${id}.jsonl`)));
});
