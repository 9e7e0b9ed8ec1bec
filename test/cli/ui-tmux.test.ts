// The inline UI in a real tmux (Debian's tmux, installed by .ci/run): tmux keeps its own
// scrollback, rewraps and pulls rows back at a resize, and copies a cleared screen into its
// history (scroll-on-clear). A long reply streamed while the window is resized must be in
// tmux's history exactly once, with the status bar and the input on the bottom rows.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { linesReply, uiSuite } from '../fixtures/ui-suite.js';
import { CLI } from '../fixtures/run-cli.js';

const ui = await uiSuite();
const { mock, dirs } = ui;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const socket = `clm-test-${process.pid}`;
const tmuxConf = join(dirs.root, 'tmux.conf');
writeFileSync(tmuxConf, 'set -g history-limit 50000\nset -g status off\n');
// Its own server (socket), also when the tests themselves run inside tmux.
const tmuxEnv = { ...process.env };
delete tmuxEnv.TMUX;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, '-f', tmuxConf, ...args], { encoding: 'utf8', env: tmuxEnv });
after(() => {
  try {
    tmux('kill-server');
  } catch {
    /* not running */
  }
});

/** Every line tmux holds for the pane, its history first, wrapped rows joined. */
const paneLines = () => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'clm').split('\n');
const screenRows = () => tmux('capture-pane', '-p', '-t', 'clm').replace(/\n$/, '').split('\n');

async function until(cond: () => boolean, what: string, ms = 30_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${paneLines().join('\n')}`);
    await sleep(50);
  }
}

test('inline in tmux: a reply streamed while the window is resized is in the history exactly once', async () => {
  const plugins = join(dirs.root, 'no-plugins');
  mkdirSync(plugins, { recursive: true });
  const env = [
    `XDG_CONFIG_HOME=${dirs.config}`,
    `XDG_STATE_HOME=${dirs.state}`,
    `HOME=${dirs.home}`,
    'TERM=tmux-256color',
    'LANG=C.UTF-8',
    'LC_ALL=C.UTF-8',
  ];
  const command = ['env', '-u', 'CLM_API_KEY', '-u', 'NODE_OPTIONS', ...env, process.execPath, CLI, '-p', plugins, '--no-alt-screen']
    .map((a) => `'${a.replace(/'/g, "'\\''")}'`)
    .join(' ');
  tmux('new-session', '-d', '-s', 'clm', '-x', '120', '-y', '30', `${command}; sleep 600`);
  await until(() => screenRows().some((l) => l.includes('[online]')), 'the screen');
  mock.push(linesReply(300, { chunks: 150, delayMs: 20 }));
  tmux('send-keys', '-t', 'clm', 'long', 'Enter');
  await until(() => paneLines().includes('line 60'), 'the reply under way');
  // Wider (nothing to rewrap), lower (rows pushed into the history), higher again (rows pulled
  // back out of it); each taken in by clm before the next (the status bar drawn at the new width,
  // wide enough for its key hints beside the sandbox mode).
  for (const [x, y] of [
    [140, 30],
    [120, 24],
    [120, 30],
  ] as const) {
    tmux('resize-window', '-t', 'clm', '-x', String(x), '-y', String(y));
    await sleep(300);
    await until(() => {
      const rows = screenRows();
      return rows.length === y && rows.at(-2)!.startsWith(' clm [') && x - rows.at(-2)!.trimEnd().length <= 2;
    }, `the screen at ${x}x${y}`);
  }
  assert.ok(!paneLines().includes('line 300'), 'the resizes came while the reply streamed');
  await until(() => paneLines().includes('line 300') && screenRows().some((l) => /\bdone\b|tok\/s/.test(l)), 'the end of the reply');
  await sleep(300);
  const lines = paneLines();
  for (let i = 1; i <= 300; i++) {
    const n = lines.filter((l) => l === `line ${i}`).length;
    assert.equal(n, 1, `line ${i} is there ${n} times:\n${lines.join('\n')}`);
  }
  const rows = screenRows();
  assert.ok(rows.at(-1)!.startsWith('>'), rows.join('\n'));
  assert.ok(rows.at(-2)!.startsWith(' clm ['), rows.join('\n'));
});
