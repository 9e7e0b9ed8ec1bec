// Terminal modes on and off: on the virtual terminal, and on a real pseudo-terminal (script(1))
// where the process ends by exit, by an uncaught exception, by SIGTERM and by SIGHUP — the
// terminal must be given back exactly each time (screen, paste, mouse, cursor, cooked mode).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { spawn as ptySpawn } from '@lydell/node-pty';
import { join } from 'node:path';
import { VirtualTerminal } from '../fixtures/virtual-terminal.js';
import { waitFor } from '../fixtures/run-cli.js';
import { tally } from '../fixtures/tally.js';

test('virtual terminal: modes on, then restore turns every one off, and again is harmless', async () => {
  const vt = new VirtualTerminal(40, 10);
  vt.enter({ altScreen: true, bracketedPaste: true, mouse: true, modifyOtherKeys: true });
  vt.write('\x1b[?25l\x1b[31m');
  await vt.flush();
  assert.ok(vt.altScreen && vt.bracketedPaste && vt.raw);
  assert.equal(vt.mouseTracking, 'vt200');
  vt.setRestorePreamble(() => 'PRE');
  vt.restore();
  await vt.flush();
  assert.ok(!vt.altScreen && !vt.bracketedPaste && !vt.raw && !vt.cursorHidden);
  assert.equal(vt.mouseTracking, 'none');
  const once = vt.takeWritten();
  assert.ok(once.includes('PRE') && once.includes('\x1b[>4;0m') && once.includes('\x1b[0m'));
  vt.restore();
  assert.equal(vt.takeWritten(), '', 'a second restore writes nothing');
});

test('virtual terminal: a cursor position query is answered, or times out with null', async () => {
  const vt = new VirtualTerminal(40, 10);
  vt.write('\x1b[5;7H');
  assert.deepEqual(await vt.queryCursorPosition(), { row: 5, col: 7 });
  const mute = new VirtualTerminal(40, 10, { answerQueries: false });
  assert.equal(await mute.queryCursorPosition(50), null);
});

const haveScript = spawnSync('script', ['--version']).status === 0;
const child = join(import.meta.dirname, '../fixtures/tui-child.ts');
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs the child on a pty, then `stty -a` on the same pty; resolves to everything written. */
async function onPty(how: string, mode: string, signal?: NodeJS.Signals): Promise<string> {
  const cmd = `${q(process.execPath)} --import tsx ${q(child)} ${how} ${mode}; echo STATUS=$?; stty -a`;
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color' };
  delete env.NODE_OPTIONS;
  const p = spawn('script', ['-qfec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'], cwd: join(import.meta.dirname, '../..') });
  let out = '';
  p.stdout.on('data', (d) => {
    out += d;
  });
  const exited = new Promise((r) => p.on('exit', r));
  await waitFor(() => /READY pid=\d+/.test(out), 'the child to draw', 30_000);
  if (signal) process.kill(Number(/READY pid=(\d+)/.exec(out)![1]), signal);
  await waitFor(() => out.includes('speed'), 'stty -a', 30_000);
  await exited;
  return out;
}

function assertRestored(out: string, alt: boolean): void {
  const after = out.slice(out.lastIndexOf('READY'));
  if (alt) assert.ok(after.includes('\x1b[?1049l'), 'alternate screen left');
  assert.ok(after.includes('\x1b[?2004l'), 'bracketed paste off');
  assert.ok(after.includes('\x1b[?25h'), 'cursor shown');
  if (alt) assert.ok(after.includes('\x1b[?1000l'), 'mouse off');
  const stty = out.slice(out.lastIndexOf('STATUS='));
  assert.match(stty, /(^|\s)icanon(\s|$)/m, 'canonical mode back');
  assert.match(stty, /(^|\s)echo(\s|$)/m, 'echo back');
}

test('pty: process.exit restores the terminal', { skip: !haveScript && 'script(1) not installed' }, async () => {
  assertRestored(await onPty('exit', 'fullscreen'), true);
});

test('pty: an uncaught exception restores the terminal before the error is printed', {
  skip: !haveScript && 'script(1) not installed',
}, async () => {
  const out = await onPty('throw', 'fullscreen');
  assertRestored(out, true);
  const err = out.indexOf('boom from the child');
  assert.ok(err > out.lastIndexOf('\x1b[?1049l'), 'the error lands on the normal screen');
  tally('faults', 1);
});

for (const sig of ['SIGTERM', 'SIGHUP'] as const) {
  test(`pty: ${sig} restores the terminal (and still ends the process)`, { skip: !haveScript && 'script(1) not installed' }, async () => {
    const out = await onPty('wait', 'fullscreen', sig);
    assertRestored(out, true);
    assert.match(out, new RegExp(`STATUS=${sig === 'SIGTERM' ? 143 : 129}`));
    tally('faults', 1);
  });
}

test('pty: inline mode, SIGTERM: the footer is cleared, the transcript stays, the terminal is restored', {
  skip: !haveScript && 'script(1) not installed',
}, async () => {
  const out = await onPty('wait', 'inline', 'SIGTERM');
  assertRestored(out, false);
  assert.ok(!out.includes('\x1b[?1049h'), 'never on the alternate screen');
  const tail = out.slice(out.lastIndexOf('STATUS LINE'));
  assert.ok(tail.includes('\x1b[J'), 'the footer rows are erased');
});

test('pty: stop() in inline mode leaves the transcript and the cursor below it', {
  skip: !haveScript && 'script(1) not installed',
}, async () => {
  const out = await onPty('stop', 'inline');
  assertRestored(out, false);
  assert.ok(out.indexOf('after stop') > out.lastIndexOf('READY'));
});

for (const mode of ['fullscreen', 'inline'] as const) {
  test(`pty, ${mode}: a line typed and entered while the program starts (cooked mode made its CR a LF) arrives as text and Enter`, async () => {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), TERM: 'xterm-256color' };
    delete env.NODE_OPTIONS;
    const p = ptySpawn(process.execPath, ['--import', 'tsx', child, 'keys', mode], {
      cols: 60,
      rows: 20,
      env,
      cwd: join(import.meta.dirname, '../..'),
    });
    let out = '';
    p.onData((d) => {
      out += d;
    });
    const events = () => [...out.matchAll(/EVENT ([^\s\x1b]+)/g)].map((m) => m[1]);
    try {
      // Typed at once, before the program has taken the terminal.
      p.write('hi\r');
      await waitFor(() => /READY pid=/.test(out), 'the child to draw', 30_000);
      await waitFor(() => events().length >= 2, 'the keys', 30_000);
      assert.deepEqual(events(), ['text:hi', 'enter']);
      // Typed once the terminal is raw, a line feed is Ctrl-J again.
      p.write('\n');
      await waitFor(() => events().length >= 3, 'Ctrl-J', 30_000);
      assert.equal(events()[2], 'j');
    } finally {
      p.kill();
    }
  });
}
