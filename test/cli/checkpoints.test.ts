// Checkpoints end to end through the real `clm` with the mock LLM: a one-shot turn whose shell
// command changes the workspace names its checkpoint in the json result; `clm diff ID` shows
// what it changed; `clm undo ID` without a terminal and without -y shows what it would do and
// changes nothing; `clm undo ID -y` puts the files back and takes the conversation back too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { runCli, show } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';
import { workspaceState } from '../fixtures/workspace-state.js';
import { loadSession } from '../../src/session/index.js';

const { mock, dirs, run } = await cliSuite({
  dirs: 'each',
  setup: (d) => {
    mkdirSync(join(d.root, 'work', 'src'), { recursive: true });
    writeFileSync(join(d.root, 'work', 'src', 'main.c'), 'int main() { return 0; }\n');
    writeFileSync(join(d.root, 'work', 'notes.txt'), 'keep me\n');
  },
});

const work = () => join(dirs.root, 'work');
/** `clm` without the suite's leading flags (`diff` and `undo` come first). */
const clm = (args: string[]) => runCli(args, { dirs });
const WRECK = 'rm -rf src && echo changed >> notes.txt && printf new > new.txt';

async function oneShot(): Promise<{ id: string; checkpoint: { session_id: string; turn: number; files: number } }> {
  mock.push(oa.toolCall('shell_exec', { command: WRECK }), oa.text('done'));
  const r = await run(['--output-format', 'json', '-o', 'tidy up'], { cwd: work() });
  assert.equal(r.code, 0, show(r));
  const o = JSON.parse(r.stdout);
  return { id: o.session_id, checkpoint: o.checkpoint };
}

test('the json result names the checkpoint; clm diff ID shows the change, file by file', async () => {
  const { id, checkpoint } = await oneShot();
  assert.deepEqual(checkpoint, { session_id: id, turn: 1, files: 4 });
  const d = await clm(['diff', id]);
  assert.equal(d.code, 0, show(d));
  assert.match(d.stdout, /diff --git a\/notes\.txt b\/notes\.txt/);
  assert.match(d.stdout, /^\+changed$/m);
  assert.match(d.stdout, /^-int main\(\) \{ return 0; \}$/m);
  assert.match(d.stdout, /^\+new$/m);
  assert.doesNotMatch(d.stdout, /\x1b\[/, 'no colour without a terminal');
});

test('clm undo ID without a terminal and without -y shows what it would do and changes nothing', async () => {
  const before = workspaceState(work());
  const { id } = await oneShot();
  const changed = workspaceState(work());
  const r = await clm(['undo', id]);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /undo turn 1 \(from "tidy up"\)/);
  assert.match(r.stdout, /^ {2}D src\/$/m);
  assert.match(r.stdout, /^ {2}M notes\.txt$/m);
  assert.match(r.stdout, /^ {2}A new\.txt$/m);
  assert.match(r.stdout, /nothing changed \(run with -y/);
  assert.deepEqual(workspaceState(work()), changed);
  assert.notDeepEqual(changed, before);
});

test('clm undo ID -y puts the files back byte for byte and the conversation back to before the turn', async () => {
  const before = workspaceState(work());
  const { id } = await oneShot();
  assert.ok(loadSession(id, { env: { XDG_STATE_HOME: dirs.state } }).messages.length > 0);
  const r = await clm(['undo', id, '-y']);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /undone: .*the conversation is back to before turn 1/);
  assert.deepEqual(workspaceState(work()), before);
  assert.deepEqual(loadSession(id, { env: { XDG_STATE_HOME: dirs.state } }).messages, []);
  const again = await clm(['undo', id, '-y']);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /no turn to undo/);
});

test('clm undo of an unknown session, and bad arguments, say so', async () => {
  const r = await clm(['undo', 'nosuchsession']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /session nosuchsession has no checkpoints/);
  const u = await clm(['diff']);
  assert.equal(u.code, 2);
  assert.match(u.stderr, /diff needs a session id/);
});
