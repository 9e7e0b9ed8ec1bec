// /diff, /undo and /rewind through the real UI on a pty: a turn whose shell command changes the
// workspace, its coloured diff, the undo's preview and question, the files and the conversation
// back as they were.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { uiSuite } from '../fixtures/ui-suite.js';

const ui = await uiSuite();

function workspace(): string {
  const ws = join(ui.dirs.root, `ws-${Date.now()}`);
  mkdirSync(ws);
  writeFileSync(join(ws, 'gone.txt'), 'I was here\n');
  writeFileSync(join(ws, 'kept.txt'), 'untouched\n');
  return ws;
}

const lastUser = (json: any) => [...(json?.messages ?? [])].reverse().find((m: any) => m.role === 'user')?.content ?? '';
const toolDone = (json: any) => json?.messages?.at(-1)?.role === 'tool';

/** The model answers `make files` with one shell command, then "files made". */
function script(): void {
  ui.mock.script((req) => {
    if (/make files/.test(String(lastUser(req.json))) && !toolDone(req.json))
      return oa.toolCall('shell_exec', { command: 'printf "hello\\n" > made.txt && rm gone.txt' });
    return oa.text(toolDone(req.json) ? 'files made' : 'just talking');
  });
}

/** The UI in `ws`, after one turn: `prompt` sent, its shell command allowed, `reply` shown. */
async function afterTurn(t: Parameters<typeof ui.open>[0], ws: string, prompt: string, reply: string) {
  const s = await ui.open(t, ['-S'], { cwd: ws });
  s.type(`${prompt}\r`);
  await s.waitFor('allow tool shell_exec', 'the permission question');
  s.type('y');
  await s.waitFor(reply, 'the reply after the tool');
  return s;
}

test('/diff shows the turn in colour; /undo previews, asks, and puts files and conversation back', async (t) => {
  const ws = workspace();
  script();
  const s = await afterTurn(t, ws, 'make files', 'files made');
  assert.equal(readFileSync(join(ws, 'made.txt'), 'utf8'), 'hello\n');

  s.type('/diff\r');
  await s.waitFor('+hello', 'the diff');
  assert.match(s.text(), /turn 1 \("make files"\): 1 created, 1 deleted/);
  const plus = s.find('+hello')!;
  assert.equal(s.cell(plus.row, plus.col).fg, 2, 'added lines are green');

  s.type('/rewind\r');
  await s.waitFor(/1\. make files {2}\(2 files\)/, 'the list of turns');

  s.type('/undo\r');
  await s.waitFor('undo turn 1?', 'the question');
  assert.match(s.text(), /A made\.txt/);
  assert.match(s.text(), /D gone\.txt/);
  s.type('y');
  await s.waitFor('[undone to before turn 1', 'the outcome');
  assert.ok(!existsSync(join(ws, 'made.txt')));
  assert.equal(readFileSync(join(ws, 'gone.txt'), 'utf8'), 'I was here\n');
  assert.equal(readFileSync(join(ws, 'kept.txt'), 'utf8'), 'untouched\n');
  // The conversation went back too: the transcript is replayed without the turn, and the next
  // request carries none of it.
  assert.doesNotMatch(s.text(), /files made/);
  const posts = ui.mock.posts.length;
  s.type('hello again\r');
  await s.waitFor('just talking', 'the next reply');
  const sent = ui.mock.posts[posts]!.json.messages.map((m: any) => m.content ?? '');
  assert.ok(!sent.some((c: string) => /make files|files made/.test(c)), sent.join('\n'));
});

test('/undo answered no, or with Esc, changes nothing', async (t) => {
  const ws = workspace();
  script();
  const s = await afterTurn(t, ws, 'make files', 'files made');
  s.type('/undo\r');
  await s.waitFor('undo turn 1?', 'the question');
  s.type('n');
  await s.waitFor('[nothing changed]', 'the refusal');
  s.type('/undo\r');
  await s.waitFor((x) => x.text().split('undo turn 1?').length > 2, 'the question again');
  s.type('\x1b');
  await s.waitFor('-> cancelled', 'Esc');
  assert.ok(existsSync(join(ws, 'made.txt')));
  assert.ok(!existsSync(join(ws, 'gone.txt')));
});

test('/undo with a file changed outside clm says so and asks; y keeps that file, the rest goes back', async (t) => {
  const ws = workspace();
  ui.mock.script((req) => {
    if (/edit both/.test(String(lastUser(req.json))) && !toolDone(req.json))
      return oa.toolCall('shell_exec', { command: 'echo turn > kept.txt && echo turn > gone.txt' });
    return oa.text(toolDone(req.json) ? 'both edited' : 'just talking');
  });
  const s = await afterTurn(t, ws, 'edit both', 'both edited');
  // The turn's checkpoint is complete once /diff answers; only then does the person edit.
  s.type('/diff\r');
  await s.waitFor('2 modified', 'the diff');
  writeFileSync(join(ws, 'kept.txt'), 'mine\n');
  s.type('/undo\r');
  await s.waitFor('(o) yes, overwrite them', 'the question with the conflict');
  assert.match(s.text(), /M kept\.txt {2}\(changed outside clm since: conflict\)/);
  assert.match(s.text(), /1 file was changed outside clm since the checkpoint/);
  s.type('y');
  await s.waitFor('kept as it is: kept.txt', 'the outcome');
  assert.equal(readFileSync(join(ws, 'kept.txt'), 'utf8'), 'mine\n', 'the file changed outside clm is not overwritten');
  assert.equal(readFileSync(join(ws, 'gone.txt'), 'utf8'), 'I was here\n');
});

test('/rewind N, conversation only: the files stay as the turn left them', async (t) => {
  const ws = workspace();
  script();
  const s = await afterTurn(t, ws, 'make files', 'files made');
  s.type('/rewind 1\r');
  await s.waitFor('(c) conversation only', 'what goes back');
  s.type('c');
  await s.waitFor('rewind turn 1?', 'the question');
  s.type('y');
  await s.waitFor('[rewound to before turn 1: files as they are; conversation back]', 'the outcome');
  assert.equal(readFileSync(join(ws, 'made.txt'), 'utf8'), 'hello\n');
  assert.ok(!existsSync(join(ws, 'gone.txt')));
  assert.doesNotMatch(s.text(), /files made/);
});

test('/rewind to a turn long ago takes the conversation back from the session file', async (t) => {
  // The UI keeps the conversation before only its last few turns in memory; an older turn's comes
  // from the session file.
  const ws = workspace();
  ui.mock.script((req) => oa.text(`heard ${lastUser(req.json)}`));
  const s = await ui.open(t, ['-S'], { cwd: ws });
  const TURNS = 20;
  for (let i = 1; i <= TURNS; i++) {
    s.type(`say ${i}\r`);
    await s.waitFor(`heard say ${i}`, `reply ${i}`);
  }
  s.type('/rewind 2\r');
  await s.waitFor('rewind turns 2, 3,', 'the question');
  s.type('y');
  await s.waitFor('[rewound to before turn 2: files as they are; conversation back]', 'the outcome');
  s.type('after\r');
  await s.waitFor('heard after', 'the reply after the rewind');
  const users = ui.mock.posts
    .at(-1)!
    .json.messages.filter((m: any) => m.role === 'user')
    .map((m: any) => m.content);
  assert.deepEqual(users, ['say 1', 'after']);
});

test('inline, /undo replays what stays: its long code goes into the scrollback coloured', { timeout: 90_000 }, async (t) => {
  // Over 2 KiB of code: the highlighter thread colours it, a round trip after it is laid out.
  const code = Array.from({ length: 40 }, (_, i) => `const kept${i}: number = compute(${i}, "a string"); // ${i}`).join('\n');
  ui.mock.script((req) =>
    /code/.test(String(lastUser(req.json))) ? oa.text(`Code:\n\n\`\`\`ts\n${code}\n\`\`\`\n\ncode done`) : oa.text('chat done'),
  );
  const s = await ui.open(t, ['--no-alt-screen'], { cwd: workspace(), rows: 24, cols: 100 });
  s.type('code\r');
  await s.waitFor('code done', 'the first reply');
  s.type('chat\r');
  await s.waitFor('chat done', 'the second reply');
  s.type('/undo\r');
  await s.waitFor('undo turn 2?', 'the question');
  s.type('y');
  await s.waitFor('[undone to before turn 2', 'the outcome');
  await s.settle();
  const lines = s.lines();
  for (const i of [0, 39]) {
    const at = lines.flatMap((l, n) => (l.startsWith(`const kept${i}:`) ? [n] : []));
    // Once as the turn showed it, once replayed.
    assert.equal(at.length, 2, `const kept${i} written ${at.length} times`);
    assert.equal(s.cellOfLine(at[1]!, 0).fg, 5, `const kept${i}, replayed: the keyword const is not magenta`);
  }
});
