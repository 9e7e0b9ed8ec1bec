// The interactive UI on the real clm through a pty (@xterm/headless as the screen), against the
// scripted mock LLM: the exit paths, tool lines and their collapsing, the toggles and their config
// defaults, permissions, queued prompts, -f, -r's picker, secrets, keys, compaction, bad input.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TYPING_GAP_MS } from '../../src/cli/permission-desk.js';
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KEYS, type PtyScreen } from '../fixtures/pty-screen.js';
import { writeSession } from '../fixtures/cli-suite.js';
import * as oa from '../fixtures/openai-replies.js';
import { fruitReply, uiSuite } from '../fixtures/ui-suite.js';

const ui = await uiSuite();
const { mock, dirs } = ui;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusRow = (s: PtyScreen) => s.screen().find((l) => l.startsWith(' clm ')) ?? '';
const idle = (s: PtyScreen) => !/\] {2}[|/\\-] /.test(statusRow(s));
const inputRow = (s: PtyScreen) => (s.screen()[s.cursor().row] ?? '').trimEnd();
const gets = () => mock.requests.filter((r) => r.method === 'GET').length;
const sessionFiles = () => (existsSync(dirs.sessions) ? readdirSync(dirs.sessions).filter((f) => f.endsWith('.jsonl')) : []);

async function ask(s: PtyScreen, prompt: string, until = 'Yellow') {
  const before = s.lines().filter((l) => l.includes(until)).length;
  s.type(`${prompt}\r`);
  await s.waitFor(() => s.lines().filter((l) => l.includes(until)).length > before, `the reply to ${prompt}`);
  await s.waitFor(() => idle(s), 'the turn to end');
}

/** The terminal as it was: normal screen, cursor shown, paste, mouse and key modes off. */
function assertRestored(s: PtyScreen) {
  assert.equal(s.buffer(), 'normal', 'still on the alternate screen');
  const m = s.modes();
  assert.equal(m.bracketedPasteMode, false, 'bracketed paste left on');
  assert.equal(m.mouseTrackingMode, 'none', 'mouse reporting left on');
  const raw = s.raw();
  const last = (seq: string) => raw.lastIndexOf(seq);
  assert.ok(last('\x1b[?25h') > last('\x1b[?25l'), 'cursor left hidden');
  assert.ok(last('\x1b[>4;0m') > last('\x1b[>4;2m'), 'modifyOtherKeys left on');
  assert.ok(last('\x1b[<u') > last('\x1b[>1u'), 'kitty keys left on');
}

/** The exit of clm, or a failure with the screen when it does not come. */
async function exited(s: PtyScreen): Promise<{ code: number; signal: number }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`clm did not exit; screen:\n${s.text()}`)), 20_000);
  });
  try {
    return await Promise.race([s.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

const sessionLine = /session: (\S+) \(resume with clm -r \1\)/;

test('the debug log says when the first frame came, counted from the process start', async (t) => {
  const log = join(dirs.root, 'first-frame.log');
  const t0 = Date.now();
  const s = await ui.open(t, [], { env: { CLM_DEBUG_LOG: log } });
  await ask(s, 'hello');
  const waited = Date.now() - t0;
  const m = /ui first frame: ([\d.]+) ms after the process started/.exec(readFileSync(log, 'utf8'));
  assert.ok(m, 'no first-frame line in the debug log');
  const ms = Number(m[1]);
  assert.ok(ms > 0 && ms <= waited, `${ms} ms is not within the ${waited} ms the test waited`);
});

test('a long resumed conversation goes on screen between keys: one typed meanwhile is drawn before it is all there', {
  timeout: 120_000,
}, async (t) => {
  // 1,500 exchanges of 30 lines of markdown: a second or more to lay out, in slices.
  const id = '20250303-000000-cccccccc';
  const reply = (i: number) =>
    Array.from({ length: 30 }, (_, j) => `line ${j} of reply ${i}: **bold** and \`code\` and more words`).join('\n');
  writeSession(
    dirs,
    id,
    Array.from({ length: 1500 }, (_, i) => [
      { role: 'user' as const, content: `question ${i}` },
      { role: 'assistant' as const, content: reply(i) },
    ]).flat(),
  );
  const log = join(dirs.root, 'replay.log');
  const s = await ui.open(t, ['-r', id], { env: { CLM_DEBUG_LOG: log } });
  const started = () => existsSync(log) && readFileSync(log, 'utf8').includes(`ui: replaying 3000 messages of session ${id}`);
  await s.waitFor(started, 'the replay to start', 60_000);
  s.type('Z'); // the transcript, the banner and the status bar have no Z
  const notice = `[resumed session ${id}]`;
  await s.waitFor(notice, 'the end of the replay', 90_000);
  const raw = s.raw();
  assert.ok(raw.slice(0, raw.indexOf(notice)).includes('Z'), 'the key was drawn only once the whole conversation was');
  await s.waitFor(() => inputRow(s).endsWith('> Z'), 'the key in the input box');
  assert.ok(s.text().includes('line 29 of reply 1499'), s.text());
});

test('a long session file is read between keys: one typed while it is read is drawn before the reading ends', {
  timeout: 120_000,
}, async (t) => {
  // 20 MB of records the reading parses and skips (how tool calls ran): a tenth of a second or
  // more of JSON, and next to nothing to lay out afterwards.
  const id = '20250303-000000-dddddddd';
  const file = writeSession(dirs, id, [
    { role: 'user', content: 'question' },
    { role: 'assistant', content: 'answer' },
  ]);
  const record = (i: number) =>
    JSON.stringify({ type: 'tool_run', id: `call_${i}_${'x'.repeat(160)}`, tool: 'bash', sandbox: 'workspace-write' });
  appendFileSync(file, `${Array.from({ length: 100_000 }, (_, i) => record(i)).join('\n')}\n`);
  const log = join(dirs.root, 'reading.log');
  const s = await ui.open(t, ['-r', id], { env: { CLM_DEBUG_LOG: log } });
  const logged = (line: string) => existsSync(log) && readFileSync(log, 'utf8').includes(line);
  await s.waitFor(() => logged(`session: reading ${id}`), 'the reading to start', 60_000);
  s.type('Z');
  await s.waitFor(() => inputRow(s).endsWith('> Z'), 'the key in the input box', 60_000);
  assert.ok(!logged(`session: ${id} read`), 'the key was drawn only once the whole file was read');
  await s.waitFor(`[resumed session ${id}]`, 'the end of the replay', 60_000);
  assert.ok(logged(`session: ${id} read: 2 messages`), readFileSync(log, 'utf8'));
});

// ---- exit paths -----------------------------------------------------------------------------

test('Ctrl-C on an idle empty input quits: terminal restored, then the session line', async (t) => {
  const s = await ui.open(t);
  await ask(s, 'hello');
  s.type(KEYS.ctrl('c'));
  assert.equal((await exited(s)).code, 0);
  await s.settle();
  assertRestored(s);
  const m = sessionLine.exec(s.text());
  assert.ok(m, s.text());
  assert.ok(sessionFiles().includes(`${m[1]}.jsonl`));
});

test('an empty session is deleted at exit and no session line is printed (Ctrl-D)', async (t) => {
  const before = sessionFiles().length;
  const s = await ui.open(t);
  await s.waitFor('[online]');
  s.type(KEYS.ctrl('d'));
  await exited(s);
  await s.settle();
  assertRestored(s);
  assert.ok(!sessionLine.test(s.text()), s.text());
  assert.equal(sessionFiles().length, before);
});

test('Ctrl-C and Esc while a reply streams cancel it; Ctrl-C with text clears the input; /quit leaves', async (t) => {
  const s = await ui.open(t);
  mock.push(fruitReply(400), fruitReply(400));
  s.type('slow one\r');
  await s.waitFor('clm>', 'the reply to start');
  s.type(KEYS.ctrl('c'));
  await s.waitFor('[cancelled]');
  s.type('slow two\r');
  await s.waitFor(() => s.lines().filter((l) => l === 'clm>').length === 2, 'the second reply');
  s.type(KEYS.esc);
  await s.waitFor(() => s.lines().filter((l) => l === '[cancelled]').length === 2, 'the second cancel');
  s.type('typed');
  await s.waitFor(() => inputRow(s) === '> typed', 'typed');
  s.type(KEYS.ctrl('c'));
  await s.waitFor(() => inputRow(s) === '>', 'cleared by Ctrl-C');
  s.type('abc');
  await s.waitFor(() => inputRow(s) === '> abc', 'typed again');
  s.type(KEYS.esc);
  await s.waitFor(() => inputRow(s) === '>', 'cleared by Esc');
  s.type('/quit\r');
  assert.equal((await exited(s)).code, 0);
  await s.settle();
  assertRestored(s);
  assert.match(s.text(), sessionLine);
});

test('a reply cut by Esc or by /quit is saved as far as it was shown, marked; a resume replays it so', async (t) => {
  const s = await ui.open(t);
  mock.push(fruitReply(400), fruitReply(400));
  s.type('slow one\r');
  await s.waitFor('Here is some', 'the reply to start');
  s.type(KEYS.esc);
  await s.waitFor('[cancelled]');
  await s.waitFor(() => idle(s), 'idle');
  s.type('slow two\r');
  await s.waitFor(() => s.lines().filter((l) => l.includes('Here is some')).length === 2, 'the second reply');
  s.type('/quit\r');
  assert.equal((await exited(s)).code, 0);
  await s.settle();
  const id = sessionLine.exec(s.text())?.[1];
  assert.ok(id, s.text());
  const lines = readFileSync(join(dirs.sessions, `${id}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => l.role),
    ['user', 'assistant', 'user', 'assistant'],
  );
  for (const l of [lines[1], lines[3]]) assert.match(l.content, /^## Fruit\n\nHere is some .*\n\n\[reply cancelled by the user\]$/s);
  assert.ok(!lines[1].content.includes('Banana | Yellow'), 'only what was shown');

  // Resumed: replayed with the marks, and the model gets user and assistant turns in turn.
  const r = await ui.open(t, ['-r', id], { waitFor: `[resumed session ${id}]` });
  assert.equal(r.lines().filter((l) => l === '[cancelled]').length, 2, r.text());
  assert.ok(!r.text().includes('reply cancelled by the user'), r.text());
  await r.waitFor(() => idle(r), 'idle');
  r.type('and now?\r');
  await r.waitFor(() => mock.posts.length === 3, 'the request');
  const roles = mock.posts[2]!.json.messages.map((m: { role: string }) => m.role);
  assert.deepEqual(roles, ['system', 'user', 'assistant', 'user', 'assistant', 'user']);
});

test('SIGTERM and SIGHUP restore the terminal; SIGTERM still prints the session line', async (t) => {
  const s = await ui.open(t);
  await ask(s, 'hello');
  s.kill('SIGTERM');
  const e = await exited(s);
  assert.equal(e.code, 143);
  await s.settle();
  assertRestored(s);
  assert.match(s.text(), sessionLine);

  const s2 = await ui.open(t, ['--no-alt-screen']);
  await s2.waitFor('[online]');
  s2.kill('SIGHUP');
  await exited(s2);
  await s2.settle();
  assertRestored(s2);
});

test('a broken config.lua: the terminal back, then the error with its line, exit status 2', async (t) => {
  dirs.write('config.lua', 'return {\n  model = 42,\n}\n');
  const s = await ui.open(t, [], { waitFor: false });
  assert.equal((await exited(s)).code, 2);
  await s.settle();
  assertRestored(s);
  assert.match(s.text(), /clm: config\.lua:2: model must be a string \(got 42\)/);
});

// ---- tools ----------------------------------------------------------------------------------

test('tool lines: verbs, the tally, 6 lines of the latest output, ^O expands, older batches fold', async (t) => {
  const s = await ui.open(t, ['--allow-tools', 'shell_exec,read_file,write_file'], { rows: 40 });
  const file = join(dirs.home, 'notes.txt'); // in the workspace (the terminal's directory)
  mock.push(
    oa.toolCalls([
      { id: 'c1', name: 'shell_exec', args: { command: 'seq 1 20' } },
      { id: 'c2', name: 'write_file', args: { path: file, content: 'a\nb\n' } },
    ]),
    oa.toolCalls([
      { id: 'c3', name: 'read_file', args: { path: file } },
      { id: 'c4', name: 'shell_exec', args: { command: 'seq 1 3' } },
    ]),
    oa.text('all done'),
  );
  s.type('work\r');
  await s.waitFor('all done', 'the end of the turn');
  await s.waitFor(() => idle(s), 'idle');
  const text = s.text();
  // The first batch folded into one line; the second shown.
  assert.ok(text.includes('  -- ran 1 command, wrote 1 file (^O to expand)'), text);
  assert.ok(!text.includes('executing shell command: seq 1 20'), text);
  assert.ok(text.includes(`  reading file: ${file}`), text);
  assert.ok(text.includes('  executing shell command: seq 1 3'), text);
  assert.ok(text.includes('  -- ran 1 command, read 1 file'), text);
  // Results in completion order; the latest output shown (3 lines), the older one counted.
  assert.match(text, /\.\.\. \(\d+ lines?, \^O to expand\)|^ {4}a$/m);
  const toolRow = s.find('executing shell command: seq 1 3')!;
  assert.equal(s.cell(toolRow.row, 2).fg, 5, 'tool lines in magenta');

  s.type(KEYS.ctrl('o'));
  await s.waitFor('executing shell command: seq 1 20', 'expanded');
  await s.waitFor(() => s.lines().some((l) => l.trim() === '20'), 'the whole output');
  assert.ok(!s.text().includes('^O to expand'), s.text());
  s.type(KEYS.ctrl('o'));
  await s.waitFor('(^O to expand)', 'collapsed again');
});

test('tallies count only calls that ran: a denied write, commands cancelled before they ran', async (t) => {
  const s = await ui.open(t, [], { rows: 40 });
  const file = join(dirs.root, 'denied.txt');
  mock.push(oa.toolCall('write_file', { path: file, content: 'x' }), oa.text('as you wish'));
  s.type('write it\r');
  await s.waitFor('(y) once');
  await sleep(TYPING_GAP_MS + 50);
  s.type('n');
  await s.waitFor('as you wish');
  await s.waitFor(() => idle(s), 'idle');
  assert.ok(s.text().includes('  -- 1 call denied'), s.text());
  assert.ok(!s.text().includes('wrote 1 file'), s.text());
  // One command allowed and running, two waiting for their answer: Esc cancels all three.
  mock.push(
    oa.toolCalls([
      { id: 'c1', name: 'shell_exec', args: { command: 'sleep 30' } },
      { id: 'c2', name: 'shell_exec', args: { command: 'echo two' } },
      { id: 'c3', name: 'shell_exec', args: { command: 'echo three' } },
    ]),
  );
  s.type('three\r');
  await s.waitFor('allow tool shell_exec: sleep 30');
  await sleep(TYPING_GAP_MS + 50);
  s.type('y');
  await s.waitFor('allow tool shell_exec: echo two');
  s.type(KEYS.esc);
  await s.waitFor('[cancelled]');
  await s.waitFor(() => idle(s), 'idle');
  assert.ok(s.text().includes('  -- ran 1 command, 2 cancelled'), s.text());
});

test('a running command shows its last lines live; Esc keeps its output on screen, for the model and in the session', async (t) => {
  const s = await ui.open(t, ['--allow-tools', 'shell_exec'], { rows: 40 });
  mock.push(oa.toolCall('shell_exec', { command: 'for i in 1 2 3 4 5 6 7; do echo step $i; done; echo start; sleep 30' }));
  s.type('run it\r');
  await s.waitFor('executing shell command: for i in 1 2 3');
  // Live: the last 5 lines, under the tool line, while the command runs.
  await s.waitFor(() => s.lines().includes('    start'), 'the live output');
  const lines = s.lines();
  assert.ok(lines.includes('    step 4') && !lines.includes('    step 3'), s.text());
  s.type(KEYS.esc);
  await s.waitFor('[cancelled]');
  await s.waitFor(() => idle(s), 'idle');
  // Kept: the output so far, with why it ended; the live lines are gone.
  assert.ok(s.text().includes('[x shell_exec] [tool failed: step 1'), s.text());
  assert.ok(!s.lines().includes('    start'), s.text());
  s.type(KEYS.ctrl('o'));
  await s.waitFor(() => s.lines().some((l) => l.trim() === '(cancelled by user; terminated)]'), 'the whole result');
  assert.equal(s.lines().filter((l) => l.trim() === 'start').length, 1, s.text());
  s.type(KEYS.ctrl('o'));
  // The model sees it with the next prompt, and the session has it.
  s.type('what happened?\r');
  await s.waitFor(() => mock.posts.length === 2, 'the next request');
  const tool = mock.posts[1]!.json.messages.find((m: { role: string }) => m.role === 'tool');
  assert.match(tool.content, /step 7\nstart\n+\(cancelled by user; terminated\)/);
  await s.waitFor(() => idle(s), 'idle');
  const saved = sessionFiles()
    .map((f) => readFileSync(join(dirs.sessions, f), 'utf8'))
    .filter((text) => text.includes('"run it"'));
  assert.equal(saved.length, 1);
  assert.match(saved[0]!, /start(\\n)+\(cancelled by user; terminated\)/);
});

test('a long output shows its first 6 lines then (+N lines, ^O to expand); failures show [x name]', async (t) => {
  const s = await ui.open(t, ['--allow-tools', 'shell_exec,read_file'], { rows: 40 });
  mock.push(
    oa.toolCall('shell_exec', { command: 'seq 101 130' }),
    oa.toolCall('read_file', { path: '/nonexistent/x' }, 'c2'),
    oa.text('ok then'),
  );
  s.type('go\r');
  await s.waitFor('ok then');
  const lines = s.lines();
  await s.waitFor(() => idle(s), 'idle');
  // The shell output was the latest while its batch ran; a newer one (the failure) took over.
  assert.ok(s.text().includes('[x read_file]'), s.text());
  const x = s.find('[x read_file]')!;
  assert.equal(s.cell(x.row, x.col).fg, 1, 'failures in red');
  s.type(KEYS.ctrl('o'));
  await s.waitFor(() => s.lines().some((l) => l.trim() === '130'));
  void lines;
  s.type(KEYS.ctrl('o'));
  mock.push(oa.toolCall('shell_exec', { command: 'seq 201 230' }), oa.text('fine'));
  s.type('more\r');
  await s.waitFor('fine');
  await s.waitFor(() => idle(s), 'idle');
  const text = s.text();
  for (const n of [201, 202, 203, 204, 205, 206])
    assert.ok(
      s.lines().some((l) => l.trim() === String(n)),
      `${n} missing:\n${text}`,
    );
  assert.ok(!s.lines().some((l) => l.trim() === '207'), text);
  assert.ok(text.includes('  ... (+24 lines, ^O to expand)'), text);
});

test('^R shows the reasoning and hides it again; show_thinking and expand_output set the defaults', async (t) => {
  mock.push(oa.streamText(['The answer.'], { reasoning: ['Let me think ', 'about apples.'] }));
  const s = await ui.open(t);
  await ask(s, 'think', 'The answer.');
  assert.ok(!s.text().includes('about apples'), 'reasoning hidden by default');
  s.type(KEYS.ctrl('r'));
  await s.waitFor('Let me think about apples.', 'shown');
  const at = s.find('Let me think')!;
  assert.ok(s.cell(at.row, at.col).dim, 'reasoning dim');
  assert.equal(s.cell(at.row, at.col).fg, 10);
  s.type(KEYS.ctrl('r'));
  await s.waitFor(() => !s.text().includes('about apples'), 'hidden');

  dirs.write(
    'config.lua',
    `return {
  agent = "test", model = "mock/mock-model", show_thinking = "true", expand_output = true,
  providers = { mock = { kind = "openai", url = "${mock.base}" } },
  agents = { test = {} },
}`,
  );
  mock.push(
    oa.streamText(['Done thinking.'], { reasoning: ['Pondering pears.'] }),
    oa.toolCall('shell_exec', { command: 'seq 1 12' }),
    oa.text('listed'),
  );
  const s2 = await ui.open(t, ['--allow-tools', 'shell_exec']);
  await ask(s2, 'think', 'Done thinking.');
  assert.ok(s2.text().includes('Pondering pears.'), s2.text());
  await ask(s2, 'list', 'listed');
  assert.ok(
    s2.lines().some((l) => l.trim() === '12'),
    s2.text(),
  );
});

// ---- permissions ----------------------------------------------------------------------------

test('permissions: a queue of requests; (s) session with its rule edited answers the queued ones and later ones; Esc denies and cancels', async (t) => {
  const s = await ui.open(t);
  mock.push(
    oa.toolCalls([
      { id: 'a1', name: 'shell_exec', args: { command: 'echo one' } },
      { id: 'a2', name: 'shell_exec', args: { command: 'echo two' } },
    ]),
    oa.text('both ran'),
  );
  s.type('two commands\r');
  await s.waitFor('allow tool shell_exec: echo one', 'the first question');
  assert.ok(s.text().includes('(1 more waiting)'), s.text());
  await sleep(TYPING_GAP_MS + 100);
  s.type('x'); // not an answer: it goes into the input, and its run of typing answers nothing
  await s.waitFor(() => inputRow(s) === '> x', 'x kept in the input');
  assert.ok(s.text().includes('allow tool shell_exec: echo one'));
  await sleep(TYPING_GAP_MS + 100);
  s.type('s');
  await s.waitFor('rule 1 of 1 (Enter keeps it, empty drops it, Esc goes back): shell_exec(echo one *)', 'the proposed rule');
  s.type('\x7f'.repeat('one *)'.length));
  s.type('*)');
  await s.waitFor('Esc goes back): shell_exec(echo *)', 'the rule edited');
  s.type('\r');
  await s.waitFor('both ran');
  assert.ok(s.text().includes('-> allowed for this session: allow shell_exec(echo *)'), s.text());
  assert.equal(inputRow(s), '> x', 'the edit did not touch the input');
  const tools = mock.posts[1]!.json.messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.content.trim())
    .sort();
  assert.deepEqual(tools, ['one', 'two']);
  // Remembered for the session: no question the next time.
  mock.push(oa.toolCall('shell_exec', { command: 'echo three' }), oa.text('third ran'));
  s.type('again\r');
  await s.waitFor('third ran');
  assert.ok(!s.text().includes('allow tool shell_exec: echo three'));

  const s2 = await ui.open(t);
  mock.push(oa.toolCall('write_file', { path: join(dirs.root, 'never.txt'), content: 'x' }), oa.text('should not come'));
  s2.type('write\r');
  await s2.waitFor('allow tool write_file', 'the question');
  s2.type(KEYS.esc);
  await s2.waitFor('-> denied (cancelled)');
  await s2.waitFor('[cancelled]');
  assert.ok(!existsSync(join(dirs.root, 'never.txt')));
  assert.ok(!s2.text().includes('(y) once'), 'the question stayed on screen');
});

test('--deny-tools answers without a question; a question is taken off the screen when its turn is cancelled', async (t) => {
  const s = await ui.open(t, ['--deny-tools', 'write_file']);
  mock.push(oa.toolCall('write_file', { path: join(dirs.root, 'no.txt'), content: 'x' }), oa.text('refused'));
  s.type('write\r');
  await s.waitFor('refused');
  assert.ok(!s.text().includes('(y) once'));
  assert.ok(s.text().includes('[x write_file]'), s.text());
  mock.push(oa.toolCall('shell_exec', { command: 'echo hi' }), oa.text('never'));
  s.type('shell\r');
  await s.waitFor('(y) once');
  // Ctrl-C while asking: deny, cancel.
  s.type(KEYS.ctrl('c'));
  await s.waitFor('[cancelled]');
  assert.ok(!s.text().includes('(y) once'));
});

// ---- queued prompts, --forever ---------------------------------------------------------------

test('a command typed while a reply streams: the reply stays one block, the command says its piece after it', async (t) => {
  const s = await ui.open(t, [], { rows: 40 });
  await s.waitFor('[online]');
  mock.push(oa.streamText(['Reply nu', 'mber one, **bo', 'ld** and', ' more.\n\nSecond para', 'graph ends here.'], { chunkDelayMs: 500 }));
  s.type('go\r');
  await s.waitFor('Reply nu', 'the reply to start');
  s.type('/reasoning\r');
  s.type('/help\r');
  await s.waitFor('Second paragraph ends here.', 'the whole reply');
  await s.waitFor('/compact', 'the help');
  await s.waitFor(() => idle(s), 'the turn to end');
  const rows = s.lines().map((l) => l.trimEnd());
  const line = (text: string) => rows.findIndex((l) => l.includes(text));
  assert.ok(line('Reply number one, bold and more.') >= 0, `the reply cut:\n${rows.join('\n')}`);
  assert.equal(rows.filter((l) => l === 'clm>').length, 1);
  assert.equal(line('Second paragraph ends here.'), line('Reply number one') + 2, rows.join('\n'));
  assert.ok(line('[reasoning shown]') > line('Second paragraph'), `the notice after the reply:\n${rows.join('\n')}`);
  assert.ok(line('commands (') > line('[reasoning shown]'), 'in the order typed');
  const b = s.find('bold')!;
  assert.ok(s.cell(b.row, b.col).bold, 'drawn as one piece of markdown');
});

test('prompts typed during a tool round wait as (queued) and become turns of their own, in order', async (t) => {
  const s = await ui.open(t, ['--allow-tools', 'shell_exec'], { rows: 50 });
  mock.push(
    oa.toolCall('shell_exec', { command: 'sleep 0.6; echo slept' }),
    oa.text('first reply'),
    oa.text('second reply'),
    oa.text('third reply'),
  );
  s.type('start\r');
  await s.waitFor('executing shell command: sleep 0.6; echo slept');
  s.type('second\r');
  s.type('third\r');
  await s.waitFor(() => s.text().includes('you> second  (queued)') && s.text().includes('you> third  (queued)'), 'both queued');
  await s.waitFor('third reply', 'the last reply', 30_000);
  const users = mock.posts.map((p) => p.json.messages.filter((m: any) => m.role === 'user').at(-1).content);
  assert.deepEqual(users, ['start', 'start', 'second', 'third']);
  const order = ['you> start', 'first reply', 'you> second', 'second reply', 'you> third', 'third reply'].map((w) => s.lines().indexOf(w));
  assert.ok(
    order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1]!)),
    `${order}\n${s.text()}`,
  );
  assert.ok(!s.text().includes('(queued)'));
});

test('-f PROMPT: sent at start and again after each turn; Ctrl-C stops it', async (t) => {
  const s = await ui.open(t, ['-f', 'keep going']);
  await s.waitFor(() => mock.posts.length >= 3, 'three turns', 30_000);
  assert.ok(mock.posts.every((p) => p.json.messages.at(-1).content === 'keep going'));
  s.type(KEYS.ctrl('c'));
  await s.waitFor('[--forever stopped]');
  await s.waitFor(() => idle(s), 'idle');
  const n = mock.posts.length;
  await sleep(500);
  assert.ok(mock.posts.length <= n + 1, 'it went on');
});

test('-f PROMPT stops when a turn fails, and says why', async (t) => {
  mock.push(oa.text('first round'), oa.httpError(400, 'the server refused this'));
  const s = await ui.open(t, ['-f', 'keep going']);
  await s.waitFor('[--forever stopped: ', 'the stop', 20_000);
  assert.match(s.text(), /\[--forever stopped: HTTP 400: the server refused this\]/);
  await s.waitFor(() => idle(s), 'idle');
  await sleep(500);
  assert.equal(mock.posts.length, 2, 'it went on');
});

// ---- sessions -------------------------------------------------------------------------------

test('-r without an id: the picker (asking again after an answer out of range), then the chosen session replayed with its tool calls', async (t) => {
  writeSession(
    dirs,
    '20250101-000000-aaaaaaaa',
    [
      { role: 'user', content: 'older session' },
      { role: 'assistant', content: 'old answer' },
    ],
    1_735_689_600,
  );
  writeSession(
    dirs,
    '20250202-000000-bbbbbbbb',
    [
      { role: 'user', content: 'list the files' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 't1', name: 'shell_exec', args: '{"command":"ls"}' },
          { id: 't2', name: 'write_file', args: '{"path":"x.txt","content":"x"}' },
        ],
      },
      { role: 'tool', content: 'a.txt\nb.txt\n', tool_call_id: 't1', tool_name: 'shell_exec' },
      { role: 'tool', content: '[tool failed: denied by user]', tool_call_id: 't2', tool_name: 'write_file' },
      { role: 'assistant', content: 'There are **two** files.' },
    ],
    1_738_454_400,
  );
  const s = await ui.open(t, ['-r'], { waitFor: 'resume which session?' });
  // Other tests of this file left sessions too: the list may be longer than the screen.
  const listed = s.lines().join('\n');
  assert.ok(listed.includes('list the files') && listed.includes('older session'), listed);
  const row = /^ *(\d+)\) 20250202-000000-bbbbbbbb /m.exec(listed);
  assert.ok(row, listed);
  // An answer out of range is asked again.
  s.type('999\r');
  await s.waitFor(/no session 999: answer a number from 1 to \d+\n/, 'asked again');
  const asked = () => s.lines().filter((l) => l.includes('resume which session?')).length;
  await s.waitFor(() => asked() === 2, 'the question again');
  s.type(`${row[1]}\r`);
  await s.waitFor('[resumed session 20250202-000000-bbbbbbbb]');
  const text = s.text();
  assert.ok(text.includes('you> list the files'), text);
  assert.ok(text.includes('  executing shell command: ls'), text);
  assert.ok(text.includes('  ... (2 lines, ^O to expand)'), text);
  assert.ok(text.includes('[x write_file] [tool failed: denied by user]'), text);
  assert.ok(text.includes('  -- ran 1 command, 1 denied'), text);
  assert.ok(text.includes('There are two files.'), text);
  assert.equal(s.buffer(), 'alternate');
});

// ---- secrets, keys, status ------------------------------------------------------------------

test('a secret from secrets.lua or the API key is masked on screen', async (t) => {
  dirs.write('secrets.lua', 'return { token = "tok-SECRET-123456" }');
  dirs.write(
    'config.lua',
    `return {
  agent = "test", model = "mock/mock-model",
  providers = { mock = { kind = "openai", url = "${mock.base}", api_key = "sk-KEY-abcdef" } },
  agents = { test = {} },
}`,
  );
  mock.push(oa.streamText(['the token is tok-SEC', 'RET-123456 and the key sk-KEY-', 'abcdef, see?']));
  const s = await ui.open(t);
  await ask(s, 'tell me', 'see?');
  const text = s.text();
  assert.ok(!text.includes('SECRET-123456') && !text.includes('KEY-abcdef'), text);
  assert.ok(text.includes('the token is [REDACTED] and the key [REDACTED], see?'), text);
});

test('Shift+Enter and Alt+Enter make new lines; :tada: becomes the emoji; ^L redraws', async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  s.type('one');
  s.type(KEYS.shiftEnter);
  s.type('two');
  s.type(KEYS.altEnter);
  s.type('three :tada:');
  await s.waitFor(() => s.text().includes('three 🎉'), 'the emoji');
  assert.ok(s.text().includes('> one\n  two\n  three'), s.text());
  const before = s.raw().length;
  s.type(KEYS.ctrl('l'));
  await s.waitFor(() => s.raw().length > before, 'the redraw');
  await sleep(100);
  await s.settle();
  assert.ok(s.text().includes('three 🎉'));
  s.type('\r');
  await s.waitFor('Yellow');
  assert.equal(mock.posts[0]!.json.messages.at(-1).content, 'one\ntwo\nthree 🎉');
});

test('fenced code in a reply is highlighted once its grammar is ready; a second language too', { timeout: 60_000 }, async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  const code = (lang: string, line: string, end: string) =>
    oa.streamText(['Here is **code**:\n\n', `\`\`\`${lang}\n`, `${line}\n`, '```\n', `\n${end}`], { chunkDelayMs: 40 });
  mock.push(code('ts', 'const greeting = "hello";', 'first done'), code('python', 'def shout(): return "hi"', 'second done'));
  const fg = (text: string) => {
    const at = s.find(text);
    return at ? s.cell(at.row, at.col).fg : -2;
  };
  s.type('show code\r');
  await s.waitFor('first done');
  await s.waitFor(() => fg('const') === 5, 'the TypeScript keyword in magenta');
  assert.equal(fg('"hello"'), 2, 'its string in green');
  const prose = s.find('code:')!;
  assert.ok(s.cell(prose.row, prose.col).bold, 'the prose around it as it was');
  s.type('more\r');
  await s.waitFor('second done');
  await s.waitFor(() => fg('def') === 5, 'the Python keyword in magenta');
  assert.equal(fg('const'), 5, 'the first block still highlighted');
});

test('a long block of code (too long to highlight on the main thread) is highlighted by the worker thread', {
  timeout: 60_000,
}, async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  // Over 16 KiB: only the highlighter thread (dist/highlight-worker.js) colours code this long.
  const lines = Array.from({ length: 400 }, (_, i) => `const value${i}: number = compute(${i}, "a string"); // ${i}\n`);
  const parts = ['A long one:\n\n', '```ts\n'];
  for (let i = 0; i < lines.length; i += 50) parts.push(lines.slice(i, i + 50).join(''));
  mock.push(oa.streamText([...parts, '```\n', '\nlong done'], { chunkDelayMs: 20 }));
  s.type('long code\r');
  await s.waitFor('long done');
  await s.waitFor(() => {
    const at = s.find('const value399');
    return !!at && s.cell(at.row, at.col).fg === 5;
  }, 'the last line of the block highlighted');
  const str = s.find('"a string"); // 399')!;
  assert.equal(s.cell(str.row, str.col).fg, 2, 'its string in green');
});

test('code is coloured as it streams: the complete lines of a fence still open', { timeout: 60_000 }, async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  // Over half a KiB before the fence closes (shorter code is coloured once closed).
  const lines = Array.from({ length: 16 }, (_, i) => `const a${i} = compute(${i}, "a string of some length"); // ${i}\n`);
  assert.ok(lines.slice(0, 12).join('').length > 512);
  const parts = ['Code:\n\n```ts\n', ...lines, '```\n', '\ncode done'];
  mock.push(oa.streamText(parts, { chunkDelayMs: 250 }));
  s.type('code\r');
  await s.waitFor(() => {
    const at = s.find('const a0 ');
    return !!at && s.cell(at.row, at.col).fg === 5;
  }, 'the first line of the open block coloured');
  assert.ok(!s.text().includes('code done'), 'coloured only once the fence had closed');
  await s.waitFor('code done');
});

test('code in a resumed conversation, drawn before the highlighter was there, is drawn again highlighted', {
  timeout: 60_000,
}, async (t) => {
  const id = '20250303-000000-c0dec0de';
  writeSession(dirs, id, [
    { role: 'user', content: 'show rust' },
    { role: 'assistant', content: 'Some **rust**:\n\n```rust\nfn main() { let s = "x"; }\n```\n\nthat was it' },
  ]);
  const s = await ui.open(t, ['-r', id]);
  await s.waitFor(`[resumed session ${id}]`);
  await s.waitFor(() => {
    const at = s.find('fn main');
    return !!at && s.cell(at.row, at.col).fg === 5;
  }, 'the keyword fn in magenta');
  const prose = s.find('rust:')!;
  assert.ok(s.cell(prose.row, prose.col).bold);
});

test('a prompt typed before the screen is up, Enter included, is sent (the cooked terminal made Enter a line feed)', async (t) => {
  const s = await ui.open(t, [], { waitFor: false });
  // At once: clm has not even started, the terminal is still in its cooked mode (ICRNL).
  s.type('typed early\r');
  await s.waitFor('Yellow', 'the reply');
  assert.equal(mock.posts[0]!.json.messages.at(-1).content, 'typed early');
  assert.equal(inputRow(s), '>', 'nothing left in the input');
});

test(':name: inside a burst of keys (a :thumbsup: b arriving at once) becomes the emoji; a paste stays as it is', async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  s.type(':tada:');
  await s.waitFor(() => inputRow(s) === '> 🎉', 'the emoji table loaded');
  s.type(KEYS.ctrl('u'));
  await s.waitFor(() => inputRow(s) === '>', 'cleared');
  s.type('a :thumbsup: b :nosuchname: c :+1::heart:');
  await s.waitFor(() => inputRow(s).endsWith(':nosuchname: c 👍❤️'), 'the burst typed');
  assert.equal(inputRow(s), '> a 👍 b :nosuchname: c 👍❤️');
  s.type(KEYS.ctrl('u'));
  s.type(KEYS.paste('x :thumbsup: y'));
  await s.waitFor(() => inputRow(s) === '> x :thumbsup: y', 'the paste as it is');
});

test('the status bar: spinner while busy, tok/s, the context gauge, the key hints', async (t) => {
  smallContext();
  const s = await ui.open(t, [], { cols: 140 });
  await s.waitFor('PgUp/PgDn/End scroll', 'the hints');
  mock.push(fruitReply(200));
  s.type('fruit\r');
  await s.waitFor(() => /\] {2}[|/\\-] thinking/.test(statusRow(s)), 'the spinner');
  await s.waitFor(() => idle(s), 'idle');
  // usage 11 + 42 = 53 of 100.
  assert.match(statusRow(s), /20\.0 tok\/s\s+\[█████░░░░░\] 53%/);
  assert.equal(s.cell(s.find(' clm ')!.row, 1).bg, 4, 'blue status bar');
});

test('the spinner turns while the turn waits and rests while the reply streams', { timeout: 60_000 }, async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
  mock.push({ ...oa.streamText([...words, 'STREAM-END'], { chunkDelayMs: 20 }), delayMs: 800 });
  const glyph = () => /\] {2}([|/\\-]) /.exec(statusRow(s))?.[1] ?? '';
  /** How often the spinner changed while `phase` held, sampled every 10 ms. */
  const changes = async (phase: () => boolean) => {
    let last = glyph();
    let n = 0;
    while (phase()) {
      await sleep(10);
      const g = glyph();
      if (g && last && g !== last) n++;
      last = g || last;
    }
    return n;
  };
  s.type('stream\r');
  await s.waitFor(() => glyph() !== '', 'the spinner');
  const waiting = await changes(() => !s.text().includes('word0'));
  const streaming = await changes(() => !s.text().includes('STREAM-END'));
  assert.ok(waiting >= 2, `the spinner turned ${waiting} times in the 800 ms before the reply`);
  assert.ok(streaming <= 3, `the spinner turned ${streaming} times while the reply streamed (1.2 s)`);
  await s.waitFor(() => idle(s), 'idle');
});

test('the status bar after Esc says cancelled, not done', async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  mock.push(fruitReply(400));
  s.type('slow\r');
  await s.waitFor('clm>', 'the reply to start');
  s.type(KEYS.esc);
  await s.waitFor('[cancelled]');
  await s.waitFor(() => idle(s), 'idle');
  await sleep(200);
  await s.settle();
  assert.match(statusRow(s), /\] {4}cancelled /, statusRow(s));
  await ask(s, 'again');
  assert.doesNotMatch(statusRow(s), /cancelled/, 'the next turn says how it went');
});

/** A server that counts tokens as characters / 4 of what it is sent and what it sends. */
function countingServer(reply = 'Short answer.') {
  mock.script((req) => {
    const usage = { prompt: Math.ceil(req.body.length / 4), completion: Math.ceil(reply.length / 4) };
    return req.json?.stream ? oa.streamText([reply], { usage }) : oa.text(reply, { usage });
  });
}
const gaugeOf = (s: PtyScreen) => Number(/\] (\d+)%/.exec(statusRow(s))?.[1] ?? Number.NaN);
const gaugeConfig = () => `return {
  agent = "test", model = "mock/mock-model",
  providers = { mock = { kind = "openai", url = "${mock.base}", models = { ["mock-model"] = { context_size = 8000 } } } },
  agents = { test = {} },
}`;

test('the context gauge after a resume reads what the live session read: the tool schemas count', async (t) => {
  dirs.write('config.lua', gaugeConfig());
  countingServer();
  const s = await ui.open(t);
  await ask(s, 'hello there', 'Short answer.');
  const live = gaugeOf(s);
  assert.ok(live >= 5, `the live gauge: ${statusRow(s)}`);
  s.type('/quit\r');
  await s.exited;
  const id = sessionLine.exec(s.text())?.[1];
  assert.ok(id, s.text());
  const r = await ui.open(t, ['-r', id]);
  await r.waitFor(`[resumed session ${id}]`);
  await r.waitFor(() => !Number.isNaN(gaugeOf(r)), 'the gauge');
  const resumed = gaugeOf(r);
  assert.ok(Math.abs(resumed - live) <= Math.max(2, live / 4), `live ${live}%, resumed ${resumed}%: ${statusRow(r)}`);
});

test('the context gauge stays after /compact and /clear (what the next request holds)', async (t) => {
  dirs.write('config.lua', gaugeConfig());
  countingServer('A summary of it all.');
  const s = await ui.open(t);
  for (const q of ['first', 'second', 'third', 'fourth', 'fifth']) await ask(s, `${q} question`, 'A summary of it all.');
  const before = gaugeOf(s);
  assert.ok(before >= 5, statusRow(s));
  s.type('/compact\r');
  await s.waitFor('[compacted', 'the compaction');
  await s.waitFor(() => idle(s), 'idle');
  const compacted = gaugeOf(s);
  assert.ok(compacted > 0 && compacted <= before, `after /compact: ${statusRow(s)}`);
  s.type('/clear\r');
  await s.waitFor('[new session', 'the clear');
  await sleep(100);
  await s.settle();
  const cleared = gaugeOf(s);
  assert.ok(cleared > 0 && cleared <= compacted, `after /clear: ${statusRow(s)}`);
});

test('probes: at start, after a failed turn', async (t) => {
  const s = await ui.open(t);
  await s.waitFor('[online]');
  const n = gets();
  mock.push(oa.httpError(400, 'bad request'));
  s.type('fail please\r');
  await s.waitFor('error: ', 'the error');
  await s.waitFor(() => gets() > n, 'a probe after the failure');
  assert.ok(n >= 1);
});

test('a reply shows the server online, whatever the last probe said', async (t) => {
  mock.onGet('/models', { status: 503, body: { error: { message: 'warming up' } } });
  const s = await ui.open(t);
  await s.waitFor('[offline', 'the failed probe');
  await ask(s, 'hello');
  await s.waitFor(() => statusRow(s).includes('[online]'), 'the server online after its reply');
  assert.doesNotMatch(statusRow(s), /offline/);
});

/** A model with a context of 100 tokens: a turn of 70 is over the compaction threshold. */
function smallContext() {
  dirs.write(
    'config.lua',
    `return {
  agent = "test", model = "mock/mock-model",
  providers = { mock = { kind = "openai", url = "${mock.base}", models = { ["mock-model"] = { context_size = 100 } } } },
  agents = { test = {} },
}`,
  );
}

test('end-of-turn compaction is shown as it happens, with what it folded', async (t) => {
  smallContext();
  mock.push(
    oa.streamText(['first answer'], { usage: { prompt: 10, completion: 5 } }),
    oa.streamText(['second answer'], { usage: { prompt: 20, completion: 5 } }),
    oa.streamText(['third answer'], { usage: { prompt: 90, completion: 5 } }),
    oa.text('SUMMARY: they talked.'),
  );
  const s = await ui.open(t, [], { rows: 40 });
  await ask(s, 'one', 'first answer');
  await ask(s, 'two', 'second answer');
  await ask(s, 'three', 'third answer');
  await s.waitFor('[compacted ', 'the compaction', 20_000);
  assert.ok(s.text().includes('[compacting the conversation...]'), s.text());
  assert.match(s.text(), /\[compacted \d+ messages into a summary: \d+ → \d+ messages/);
  s.type(KEYS.ctrl('o'));
  await s.waitFor('SUMMARY: they talked.', 'the summary on ^O');
});

test('an end-of-turn compaction with nothing to fold says so once, not as an error', async (t) => {
  smallContext();
  mock.push(
    oa.streamText(['first answer'], { usage: { prompt: 90, completion: 5 } }),
    oa.streamText(['second answer'], { usage: { prompt: 92, completion: 5 } }),
  );
  const s = await ui.open(t, [], { rows: 40 });
  await ask(s, 'one', 'first answer');
  await s.waitFor('nothing to compact yet', 'the notice');
  await ask(s, 'two', 'second answer');
  await sleep(300);
  const text = s.text();
  assert.equal(text.split('nothing to compact yet').length - 1, 1, text);
  assert.ok(!text.includes('compaction failed') && !text.includes('error'), text);
  assert.match(statusRow(s), / done /);
  assert.equal(mock.posts.length, 2, 'no summary request');
});

// ---- bad input ------------------------------------------------------------------------------

test('a terminal of 15×6 works (and when it grows back, everything is there)', async (t) => {
  const s = await ui.open(t, [], { cols: 15, rows: 6, waitFor: 'clm' });
  s.type('tiny\r');
  await s.waitFor(() => mock.posts.length === 1, 'the request');
  await s.waitFor(() => s.screen().at(-1)!.startsWith('>') && s.screen().at(-2)!.startsWith(' clm'), 'status bar and input at the bottom');
  await sleep(300);
  await s.resize(100, 30);
  await s.waitFor('Yellow', 'the reply after growing');
  await s.waitFor(() => idle(s), 'idle');
  s.type(KEYS.ctrl('c'));
  await exited(s);
  await s.settle();
  assertRestored(s);
});

test('invalid UTF-8 and escape sequences from the model are drawn harmlessly', async (t) => {
  mock.push({
    handle: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (text: string) =>
        Buffer.concat([
          Buffer.from('data: '),
          Buffer.from(JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })),
          Buffer.from('\n\n'),
        ]);
      res.write(chunk('bad bytes: '));
      // Raw invalid UTF-8 inside the JSON string, then a title-setting and a clear-screen sequence.
      res.write(
        Buffer.concat([
          Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"\\u001b]0;pwned\\u0007\\u001b[2J x'),
          Buffer.from([0xff, 0xfe]),
          Buffer.from(' y end"}}]}\n\n'),
        ]),
      );
      res.write('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
      res.end();
    },
  });
  const s = await ui.open(t);
  await ask(s, 'garbage', 'y end');
  assert.ok(s.text().includes('bad bytes:'), s.text());
  assert.ok(!s.raw().includes('pwned'), 'the title sequence reached the terminal');
  assert.match(s.text(), /x.*y end/);
  assert.ok(!s.raw().includes('\x1b[2J'), 'the clear-screen sequence reached the terminal');
});

test('10 MB of tool output, a 1 MB paste and a resize storm: the screen keeps up, nothing is lost', async (t) => {
  const s = await ui.open(t, ['--allow-tools', 'shell_exec']);
  mock.push(oa.toolCall('shell_exec', { command: 'head -c 10000000 /dev/zero | tr "\\0" "x" | fold -w 100' }), oa.text('big done'));
  s.type('big\r');
  await s.waitFor('big done', 'the end of the turn', 60_000);
  assert.ok(s.text().includes('^O to expand'), s.text());
  const tool = mock.posts[1]!.json.messages.find((m: any) => m.role === 'tool');
  assert.ok(tool.content.length > 1000, 'the output reached the model');

  const big = 'word '.repeat(200_000);
  s.type(KEYS.paste(big));
  s.type('END');
  await s.waitFor(() => inputRow(s).endsWith('END'), 'the paste and what was typed after it', 60_000);
  for (let i = 0; i < 20; i++) {
    void s.resize(60 + (i % 5) * 10, 20 + (i % 4) * 3);
  }
  await s.resize(100, 30);
  s.type('\r');
  await s.waitFor(() => mock.posts.length === 3, 'the pasted prompt sent', 60_000);
  assert.equal(mock.posts[2]!.json.messages.at(-1).content, `${big}END`);
  await s.waitFor('Yellow', 'its reply', 60_000);
  await s.waitFor(() => idle(s), 'idle');
  // The echo shows the start of it and says how much more there is (the session has it all).
  assert.match(s.text(), /word +\(\+\d+ more characters\)/);
  s.type(KEYS.ctrl('c'));
  await exited(s);
  await s.settle();
  assertRestored(s);
});

test('a model that streams for a long time: thousands of chunks, the whole reply on screen', async (t) => {
  const parts: string[] = [];
  for (let i = 1; i <= 3000; i++) parts.push(i % 50 === 0 ? ` w${i}\n\n` : ` w${i}`);
  mock.push(oa.streamText(parts, { chunkDelayMs: 0 }));
  const s = await ui.open(t, [], { rows: 20 });
  s.type('talk\r');
  await s.waitFor('w3000', 'the last words', 60_000);
  await s.waitFor(() => idle(s), 'idle');
  s.type('x');
  await s.waitFor(() => inputRow(s) === '> x', 'still responsive');
});
