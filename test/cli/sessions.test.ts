// The real `clm` binary and its session log: the JSONL file a run
// writes, resuming with -o and with the REPL picker, a corrupt line, a crash (kill -9) mid-run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { show, waitFor } from '../fixtures/run-cli.js';
import { cliSuite, sessionIdOf, writeSession } from '../fixtures/cli-suite.js';

const KEY = 'sk-session-secret-4242';
const { mock, dirs, run, spawn } = await cliSuite({ dirs: 'each', env: { CLM_API_KEY: KEY } });
const fileOf = (id: string) => join(dirs.sessions, `${id}.jsonl`);
const linesOf = (id: string) => readFileSync(fileOf(id), 'utf8').split('\n').filter(Boolean);
const parses = (l: string) => {
  try {
    JSON.parse(l);
    return true;
  } catch {
    return false;
  }
};
const records = (id: string) =>
  linesOf(id)
    .filter(parses)
    .map((l) => JSON.parse(l) as Record<string, any>);
const sessionFiles = () => readdirSync(dirs.sessions).filter((f) => f.endsWith('.jsonl'));
const convo = (i: number) =>
  mock.posts[i]!.json.messages.filter((m: any) => m.role !== 'system').map((m: any) => `${m.role}:${m.content ?? ''}`);

test('a one-shot run writes <state>/clm/<id>.jsonl: 0600, meta line, messages, no system prompt, no key', async () => {
  mock.push(oa.toolCall('list_dir', { path: dirs.root }, 'c1'), oa.text('the reply'));
  const before = Math.floor(Date.now() / 1000);
  const r = await run(['-S', '-m', 'm-test', '-o', 'the question']);
  const after = Math.ceil(Date.now() / 1000);
  assert.equal(r.code, 0, show(r));
  const id = sessionIdOf(r);
  assert.match(id, /^\d{8}-\d{6}-[0-9a-f]{8}$/);
  assert.deepEqual(sessionFiles(), [`${id}.jsonl`]);
  assert.equal(statSync(fileOf(id)).mode & 0o777, 0o600);
  assert.equal(statSync(dirs.sessions).mode & 0o077, 0, 'the session directory is private');
  const raw = readFileSync(fileOf(id), 'utf8');
  assert.ok(!raw.includes(KEY), 'the API key is not in the session file');
  assert.ok(raw.endsWith('\n'));
  const recs = records(id);
  assert.deepEqual(Object.keys(recs[0]!).slice(0, 4), ['type', 'v', 'id', 'created']);
  assert.equal(recs[0]!.type, 'meta');
  assert.equal(recs[0]!.v, 1);
  assert.equal(recs[0]!.id, id);
  assert.equal(recs[0]!.model, 'm-test');
  assert.ok(recs[0]!.created >= before && recs[0]!.created <= after, `created ${recs[0]!.created}, run between ${before} and ${after}`);
  // Besides the messages, a record of how each tool call ran (its sandbox mode).
  assert.deepEqual(
    recs
      .slice(1)
      .filter((m) => m.type !== 'msg')
      .map((m) => [m.type, m.tool]),
    [['tool_run', 'list_dir']],
  );
  const msgs = recs.slice(1).filter((m) => m.type === 'msg');
  assert.ok(msgs.every((m) => Object.keys(m).at(-1) === 'type'));
  assert.deepEqual(
    msgs.map((m) => m.role),
    ['user', 'assistant', 'tool', 'assistant'],
  );
  assert.equal(msgs[0]!.content, 'the question');
  assert.equal(msgs[1]!.tool_calls[0].name, 'list_dir');
  assert.equal(JSON.parse(msgs[1]!.tool_calls[0].args).path, dirs.root);
  assert.equal(msgs[2]!.tool_call_id, 'c1');
  assert.equal(msgs[3]!.content, 'the reply');
});

test('-r ID -o continues the conversation and appends to the same file', async () => {
  mock.push(oa.text('first answer'));
  const r1 = await run(['-S', '-o', 'first question']);
  assert.equal(r1.code, 0, show(r1));
  const id = sessionIdOf(r1);
  const before = linesOf(id).length;
  mock.push(oa.text('second answer'));
  const r2 = await run(['-S', '-r', id, '-o', 'next']);
  assert.equal(r2.code, 0, show(r2));
  assert.equal(r2.stdout, 'second answer\n');
  assert.equal(sessionIdOf(r2), id);
  assert.deepEqual(convo(1), ['user:first question', 'assistant:first answer', 'user:next']);
  assert.equal(mock.posts[1]!.json.messages[0].role, 'system', 'a fresh system prompt is sent');
  assert.deepEqual(sessionFiles(), [`${id}.jsonl`], 'no second file');
  const recs = records(id);
  assert.equal(recs.length, before + 2);
  assert.equal(recs.filter((x) => x.type === 'meta').length, 1);
  assert.deepEqual(
    recs.slice(-2).map((m) => `${m.role}:${m.content}`),
    ['user:next', 'assistant:second answer'],
  );
  // The other spellings: --resume=ID and -rID.
  mock.push(oa.text('third'), oa.text('fourth'));
  assert.equal((await run(['-S', `--resume=${id}`, '-o', 'q3'])).code, 0);
  assert.equal((await run(['-S', `-r${id}`, '-o', 'q4'])).code, 0);
  assert.equal(convo(3).length, 7);
  assert.equal(records(id).length, before + 6);
});

test('-r in the REPL without an id: the numbered picker, then the chosen session resumes', async () => {
  mock.push(oa.text('answer A'), oa.text('answer B'));
  const a = sessionIdOf(await run(['-S', '-o', 'question A']));
  const b = sessionIdOf(await run(['-S', '-o', 'question B\nwith two lines']));
  assert.notEqual(a, b);
  const c = spawn(['-S', '-r'], { keepStdin: true });
  await waitFor(() => c.stdout.includes('resume which session? [1-2] '), 'the picker');
  const rows = [...c.stdout.matchAll(/^ {2}([12])\) (\S+) {2}\d{4}-\d\d-\d\d \d\d:\d\d {2}local-model\n {5}(.*)$/gm)];
  assert.equal(rows.length, 2, c.stdout);
  const snippets = Object.fromEntries(rows.map((m) => [m[2], m[3]]));
  assert.equal(snippets[a], 'question A');
  assert.equal(snippets[b], 'question B with two lines');
  const pick = rows.find((m) => m[2] === a)![1]!;
  mock.push(oa.text('continued'));
  c.child.stdin!.end(`${pick}\nand now?\n`);
  const r = await c.result;
  assert.equal(r.code, 0, show(r));
  assert.ok(r.stdout.includes(`[resumed session ${a}]`), r.stdout);
  assert.ok(r.stdout.includes('assistant> continued'));
  assert.deepEqual(convo(2), ['user:question A', 'assistant:answer A', 'user:and now?']);
  assert.equal(sessionIdOf(r), a);
  assert.deepEqual(
    records(a)
      .slice(-2)
      .map((m) => m.content),
    ['and now?', 'continued'],
  );
  assert.equal(records(b).length, 3, 'the other session is untouched');
});

test("-H -r ID shows the conversation it resumed; the picker's piped answer ends its line", async () => {
  mock.push(oa.toolCall('list_dir', { path: dirs.root }, 'c1'), oa.text('answer A'));
  const a = sessionIdOf(await run(['-S', '-o', 'question A']));
  mock.push(oa.text('continued'));
  const r = await run(['-H', '-S', '-r', a], { input: 'and now?\n' });
  assert.equal(r.code, 0, show(r));
  const shown = r.stdout.slice(0, r.stdout.indexOf(`[resumed session ${a}]`));
  assert.ok(shown.includes('user> question A\n'), r.stdout);
  assert.ok(shown.includes('[tool: list_dir {"path":'), r.stdout);
  assert.ok(shown.includes('[result: list_dir]\n'), r.stdout);
  assert.ok(shown.includes('assistant> answer A\n'), r.stdout);
  assert.ok(shown.indexOf('user> question A') < shown.indexOf('assistant> answer A'));
  assert.ok(r.stdout.includes('assistant> continued'));

  mock.push(oa.text('bye'));
  const p = await run(['-S', '-r'], { input: '1\nbye?\n' });
  assert.equal(p.code, 0, show(p));
  assert.match(p.stdout, /resume which session\? \[1-1\] \n/, 'the answer was not echoed: the line ends here');
});

test('the picker: no saved sessions is a clear error; an answer out of range is asked again; no answer chooses nothing', async () => {
  let r = await run(['-r'], { input: '1\n' });
  assert.notEqual(r.code, 0, show(r));
  assert.match(r.stderr, /no saved sessions/);
  mock.push(oa.text('x'));
  const id = sessionIdOf(await run(['-S', '-o', 'q']));
  r = await run(['-r'], { input: '7\n' });
  assert.equal(r.code, 1, show(r));
  assert.match(r.stdout, /no session 7: answer a number from 1 to 1\nresume which session\? \[1-1\] /);
  assert.match(r.stderr, /no session chosen/);
  assert.equal(mock.posts.length, 1);
  mock.push(oa.text('resumed after all'));
  r = await run(['-S', '-r'], { input: '7\nzero\n\n1\nagain\n' });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout.match(/resume which session\? \[1-1\] /g)?.length, 4, r.stdout);
  assert.ok(r.stdout.includes(`[resumed session ${id}]`), r.stdout);
  assert.deepEqual(convo(1), ['user:q', 'assistant:x', 'user:again']);
});

test('the picker lists sessions by last use: one resumed a minute ago comes first', async () => {
  const now = Math.floor(Date.now() / 1000);
  const a = '20240101-100000-aaaaaaaa';
  const b = '20240601-100000-bbbbbbbb';
  writeSession(dirs, a, [{ role: 'user', content: 'question A' }], now - 7200);
  writeSession(dirs, b, [{ role: 'user', content: 'question B' }], now - 3600);
  utimesSync(fileOf(a), now - 7200, now - 7200);
  utimesSync(fileOf(b), now - 3600, now - 3600);
  mock.push(oa.text('answer A'));
  assert.equal((await run(['-S', '-r', a, '-o', 'more on A'])).code, 0);
  mock.push(oa.text('bye'));
  const r = await run(['-S', '-r'], { input: '1\nbye?\n' });
  assert.equal(r.code, 0, show(r));
  const ids = [...r.stdout.matchAll(/^ {2}\d\) (\S+) /gm)].map((m) => m[1]);
  assert.deepEqual(ids, [a, b], r.stdout);
  assert.ok(r.stdout.includes(`[resumed session ${a}]`), r.stdout);
});

test('-r without an id and -o: usage error (exit 2)', async () => {
  const r = await run(['-r', '-o', 'x']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /-r without an id/);
});

test('a corrupt line in the session file is skipped on resume', async () => {
  mock.push(oa.text('one'));
  const id = sessionIdOf(await run(['-S', '-o', 'q1']));
  const lines = linesOf(id);
  // Garbage between the messages: not JSON, a non-object, an unknown type, a bad role.
  lines.splice(2, 0, '{"role":"user","content":"tru', '[1,2]', '{"type":"weird"}', '{"role":"robot","content":"x","type":"msg"}');
  writeFileSync(fileOf(id), lines.join('\n') + '\n');
  mock.push(oa.text('two'));
  const r = await run(['-S', '-r', id, '-o', 'q2']);
  assert.equal(r.code, 0, show(r));
  assert.deepEqual(convo(1), ['user:q1', 'assistant:one', 'user:q2']);
});

test('kill -9 mid-run, then resume that id (a truncated last line is skipped)', async () => {
  mock.push({ hang: true });
  const c = spawn(['-S', '-o', 'interrupted question']);
  await waitFor(() => mock.posts.length === 1, 'the request');
  await waitFor(
    () => sessionFiles().length === 1 && readFileSync(join(dirs.sessions, sessionFiles()[0]!), 'utf8').includes('interrupted question'),
    'the user message in the log',
  );
  c.child.kill('SIGKILL');
  const killed = await c.result;
  assert.equal(killed.signal, 'SIGKILL');
  const id = sessionFiles()[0]!.replace(/\.jsonl$/, '');
  // As if the crash had cut a write short.
  appendFileSync(fileOf(id), '{"role":"assistant","content":"half a li');
  mock.push(oa.text('after the crash'));
  const r = await run(['-S', '-r', id, '-o', 'again']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'after the crash\n');
  assert.deepEqual(convo(1), ['user:interrupted question', 'user:again']);
  assert.equal(sessionIdOf(r), id);
  // The new lines start on a line of their own; every line but the cut one parses.
  const lines = linesOf(id);
  const bad = lines.filter((l) => !parses(l));
  assert.deepEqual(bad, ['{"role":"assistant","content":"half a li']);
  assert.deepEqual(
    records(id)
      .filter((x) => x.type === 'msg')
      .map((m) => m.content),
    ['interrupted question', 'again', 'after the crash'],
  );
});

test('-r with an id that does not exist, or is not an id: a clear error, nothing sent', async () => {
  let r = await run(['-S', '-r', '20990101-000000-deadbeef', '-o', 'x']);
  assert.notEqual(r.code, 0, show(r));
  assert.match(r.stderr, /no such session: 20990101-000000-deadbeef/);
  r = await run(['-S', '-r', 'nonexistent', '-o', 'x']);
  assert.ok(r.code === 1 || r.code === 2, show(r));
  assert.match(r.stderr, /nonexistent/);
  r = await run(['-S', '--resume=../../etc/passwd', '-o', 'x']);
  assert.ok(r.code === 1 || r.code === 2, show(r));
  assert.doesNotMatch(r.stderr, /at .*\.js:\d+/, 'no stack trace');
  assert.equal(mock.posts.length, 0);
});

test('a session file from a newer version is refused on resume', async () => {
  mock.push(oa.text('x'));
  const id = sessionIdOf(await run(['-S', '-o', 'q']));
  const lines = linesOf(id);
  lines[0] = lines[0]!.replace('"v":1', '"v":99');
  writeFileSync(fileOf(id), lines.join('\n') + '\n');
  const r = await run(['-S', '-r', id, '-o', 'x']);
  assert.notEqual(r.code, 0, show(r));
  assert.match(r.stderr, /clm: .*(newer|version)/i);
  assert.equal(mock.posts.length, 1);
});

test('a session another clm has open is not resumed beside it (two runs would interleave their turns in one file)', async () => {
  mock.push(oa.text('first'));
  const id = sessionIdOf(await run(['-S', '-o', 'start']));
  // Run A resumes the session and waits for its reply.
  mock.push({ hang: true });
  const a = spawn(['-S', '-r', id, '-o', 'from A']);
  await waitFor(() => mock.posts.length === 2, "A's request");
  const before = readFileSync(fileOf(id), 'utf8');
  // Run B may not append to it meanwhile.
  const b = await run(['-S', '-r', id, '-o', 'from B']);
  assert.equal(b.code, 1, show(b));
  assert.match(b.stderr, new RegExp(`clm: session ${id} is in use by another clm \\(pid ${a.child.pid}\\)`));
  assert.equal(mock.posts.length, 2, 'B sent nothing');
  assert.equal(readFileSync(fileOf(id), 'utf8'), before, 'B wrote nothing to the file');
  // Once A has ended (and also after a crash: kill -9 leaves the lock behind), the session can be resumed.
  a.child.kill('SIGKILL');
  await a.result;
  mock.push(oa.text('B now'));
  const again = await run(['-S', '-r', id, '-o', 'from B']);
  assert.equal(again.code, 0, show(again));
  assert.equal(again.stdout, 'B now\n');
  mock.push(oa.text('and again'));
  assert.equal((await run(['-S', '-r', id, '-o', 'more'])).code, 0, 'a clean end leaves no lock behind');
});

test('a one-shot reply cut by Ctrl-C is saved as shown, marked; -H -r shows it so and the model gets it', async () => {
  mock.push(oa.streamText(['partial ', 'answer', ' never finished'], { chunkDelayMs: 400 }));
  const c = spawn(['-o', 'cut me off']);
  await waitFor(() => c.stdout.includes('partial answer'), 'the streamed text');
  c.child.kill('SIGINT');
  const r = await c.result;
  assert.equal(r.code, 130, show(r));
  const id = sessionIdOf(r);
  const msgs = records(id).filter((x) => x.type === 'msg');
  assert.deepEqual(
    msgs.map((m) => [m.role, m.content]),
    [
      ['user', 'cut me off'],
      ['assistant', 'partial answer\n\n[reply cancelled by the user]'],
    ],
  );
  mock.push(oa.text('sorry about that'));
  const h = await run(['-H', '-S', '-r', id], { input: 'go on\n' });
  assert.equal(h.code, 0, show(h));
  assert.ok(h.stdout.includes('assistant> partial answer\n[cancelled]\n'), h.stdout);
  assert.deepEqual(convo(1), ['user:cut me off', 'assistant:partial answer\n\n[reply cancelled by the user]', 'user:go on']);
});

test('-r ID --fork goes on in a copy under a new id: the original file stays byte for byte', async () => {
  mock.push(oa.text('first answer'));
  const r1 = await run(['-S', '-o', 'first question']);
  assert.equal(r1.code, 0, show(r1));
  const id = sessionIdOf(r1);
  const original = readFileSync(fileOf(id), 'utf8');
  mock.push(oa.text('forked answer'));
  const r2 = await run(['-S', '-r', id, '--fork', '-o', 'in the fork']);
  assert.equal(r2.code, 0, show(r2));
  const forked = sessionIdOf(r2);
  assert.notEqual(forked, id);
  assert.match(r2.stderr, new RegExp(`forked session ${id} as ${forked}; ${id} stays as it was`));
  assert.deepEqual(convo(1), ['user:first question', 'assistant:first answer', 'user:in the fork']);
  assert.equal(readFileSync(fileOf(id), 'utf8'), original, 'the original is untouched');
  const recs = records(forked);
  assert.equal(recs[0]!.forked_from, id);
  assert.equal(statSync(fileOf(forked)).mode & 0o777, 0o600);
  assert.deepEqual(
    recs.slice(1).map((m) => `${m.role}:${m.content}`),
    ['user:first question', 'assistant:first answer', 'user:in the fork', 'assistant:forked answer'],
  );
  assert.equal(sessionFiles().length, 2);
  const bad = await run(['--fork', '-o', 'x']);
  assert.equal(bad.code, 2, show(bad));
  assert.match(bad.stderr, /--fork needs -r\/--resume/);
});
