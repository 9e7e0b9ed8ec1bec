// The REPL on a real terminal (a pty from script(1)): line editing with history, Ctrl-C cancels
// a running turn and shows [cancelled], `exit` ends it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { waitFor } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';

const { mock, dirs } = await cliSuite({ dirs: 'each' });
const haveScript = spawnSync('script', ['--version']).status === 0;
const bin = join(import.meta.dirname, '../../bin/clm.cjs');
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

test('on a terminal: history recall with the Up arrow, Ctrl-C cancels the turn, exit ends', { skip: !haveScript && 'script(1) not installed' }, async () => {
  mock.push(oa.text('first answer'), { hang: true }, oa.text('third answer'));
  const cmd = `${q(process.execPath)} ${q(bin)} -u ${q(mock.base)} -p ${q(dirs.empty)}`;
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: dirs.config, XDG_STATE_HOME: dirs.state, HOME: dirs.home, NO_COLOR: '1', TERM: 'xterm' };
  delete env.NODE_OPTIONS;
  delete env.CLM_API_KEY;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  await waitFor(() => out.includes('user> '), 'the prompt');
  child.stdin.write('hello there\r');
  await waitFor(() => out.includes('first answer'), 'the first answer');
  child.stdin.write('\x1b[A again\r'); // Up recalls "hello there"
  await waitFor(() => mock.posts.length === 2, 'the second request');
  assert.equal(oa.lastMessage(mock.posts[1]!.json).content, 'hello there again');
  child.stdin.write('\x03'); // Ctrl-C: cancels the hanging turn, the REPL stays
  await waitFor(() => out.includes('[cancelled]'), 'the cancel');
  child.stdin.write('third\r');
  await waitFor(() => out.includes('third answer'), 'the third answer');
  child.stdin.write('exit\r');
  assert.equal(await exited, 0);
});
