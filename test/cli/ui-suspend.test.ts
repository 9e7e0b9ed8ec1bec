// Ctrl-Z in the interactive UI, both modes: the terminal is given back, the process stops, and on
// SIGCONT (the shell's `fg`) the screen comes back with the prompt being typed, and clm goes on.
// On a pty without a job-control shell the stop may not happen (an orphaned process group ignores
// SIGTSTP), so the test sends SIGCONT itself once the process stopped or the stop did not come.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { KEYS, type PtyScreen } from '../fixtures/pty-screen.js';
import { uiSuite } from '../fixtures/ui-suite.js';

const ui = await uiSuite();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The process state letter from /proc (T when stopped), or '' once it is gone. */
function state(pid: number): string {
  try {
    return /\) (\S) /.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1] ?? '';
  } catch {
    return '';
  }
}

async function suspendAndContinue(s: PtyScreen) {
  s.type(KEYS.ctrl('z'));
  const end = Date.now() + 2000;
  while (state(s.pid) !== 'T' && Date.now() < end) await sleep(20);
  await sleep(300);
  try {
    process.kill(s.pid, 'SIGCONT');
  } catch {
    /* gone: asserted below */
  }
  await sleep(500);
}

for (const mode of ['fullscreen', 'inline'] as const) {
  test(`${mode}: Ctrl-Z then SIGCONT (fg) brings the screen back with the draft, and clm goes on`, async (t) => {
    const s = await ui.open(t, mode === 'inline' ? ['--no-alt-screen'] : []);
    s.type('hello\r');
    await s.waitFor('Yellow', 'the first reply');
    s.type('draft');
    await s.waitFor('> draft');
    await suspendAndContinue(s);
    assert.notEqual(state(s.pid), '', `clm exited after SIGCONT; screen:\n${s.text()}`);
    s.type(' more');
    await s.waitFor('> draft more', 'the draft, and the keys typed after fg');
    s.type('\r');
    await s.waitFor((x) => x.lines().filter((l) => l.includes('Yellow')).length === 2, 'the second reply');
    s.type(KEYS.ctrl('d'));
    const e = await s.exited;
    assert.equal(e.code, 0);
  });
}
