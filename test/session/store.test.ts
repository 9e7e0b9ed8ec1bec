// The original's test_session_file_roundtrip / test_crash_tolerance / test_id_validation, plus file mode,
// exclusive creation, the state-dir rules and a process killed while writing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  constants,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from '../../src/core/types.js';
import {
  createSession,
  deleteSession,
  forkSession,
  loadSession,
  loadSessionInSteps,
  openSession,
  sessionDir,
  ensureSessionDir,
  newSessionId,
  SessionError,
  sessionLockHolder,
} from '../../src/session/index.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'clm-session-'));
const isErr = (code: string) => (e: unknown) => e instanceof SessionError && e.code === code;

const msgs: Message[] = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'hi 🦴\n"quoted"' },
  { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'list_dir', args: '{}' }] },
  { role: 'tool', content: 'a\nb', toolCallId: 'c1', toolName: 'list_dir' },
  { role: 'assistant', content: 'two files' },
];

test('file round trip: create empty, append, load, reopen, discard', () => {
  const dir = tmp();
  try {
    const s = createSession({ dir, model: 'gpt-x', provider: 'openai', agent: 'coder' });
    assert.match(s.id, /^\d{8}-\d{6}-[0-9a-f]{8}$/);
    assert.equal(s.isEmpty, true);
    for (const m of msgs) s.append(m);
    assert.equal(s.isEmpty, false);
    assert.equal(s.close(), true);

    const text = readFileSync(join(dir, `${s.id}.jsonl`), 'utf8');
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 5, 'meta + 4 messages (system not logged)');
    assert.match(
      lines[0]!,
      new RegExp(`^\\{"type":"meta","v":1,"id":"${s.id}","created":\\d+,"model":"gpt-x","provider":"openai","agent":"coder"\\}$`),
    );

    const loaded = loadSession(s.id, { dir });
    assert.deepEqual(loaded.messages, msgs.slice(1));
    assert.equal(loaded.meta.model, 'gpt-x');
    assert.equal(loaded.meta.id, s.id);

    const r = openSession(s.id, { dir });
    assert.equal(r.isEmpty, false);
    r.append({ role: 'user', content: 'more' });
    r.close();
    assert.equal(loadSession(s.id, { dir }).messages.length, 5);

    r.discard();
    assert.throws(() => loadSession(s.id, { dir }), isErr('ENOENT'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an empty session is deleted on close; a tool-only one too', () => {
  const dir = tmp();
  try {
    const a = createSession({ dir });
    assert.ok(existsSync(a.path));
    a.append({ role: 'system', content: 'x' });
    assert.equal(a.close(), false);
    assert.ok(!existsSync(a.path));
    const b = createSession({ dir });
    b.append({ role: 'tool', content: 'out', toolCallId: 'c', toolName: 't' });
    assert.equal(b.close(), false, 'only user/assistant messages make a session worth keeping');
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('files are 0600 in a 0700 directory, created exclusively', () => {
  const base = tmp();
  try {
    const env = { XDG_STATE_HOME: join(base, 'state') };
    const s = createSession({ env, model: 'm' });
    assert.equal(sessionDir({ env }), join(base, 'state', 'clm'));
    assert.equal(statSync(join(base, 'state', 'clm')).mode & 0o777, 0o700);
    assert.equal(statSync(s.path).mode & 0o777, 0o600);
    s.append({ role: 'user', content: 'u' });
    s.close();
    // The same id cannot be created twice: O_EXCL refuses an existing file.
    assert.throws(() => closeSync(openSync(s.path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)), /EEXIST/);
    // Two sessions in the same second get distinct ids.
    const now = new Date();
    const ids = new Set([createSession({ env, now }).id, createSession({ env, now }).id, createSession({ env, now }).id]);
    assert.equal(ids.size, 3);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('state dir: XDG_STATE_HOME, else HOME/.local/state, else a clear error', () => {
  const home = tmp();
  try {
    assert.equal(sessionDir({ env: { XDG_STATE_HOME: '/x', HOME: home } }), '/x/clm');
    assert.equal(sessionDir({ env: { HOME: home } }), join(home, '.local', 'state', 'clm'));
    assert.throws(
      () => sessionDir({ env: {} }),
      (e: any) => isErr('ENOENT')(e) && /XDG_STATE_HOME nor HOME/.test(e.message),
    );
    assert.throws(() => ensureSessionDir({ env: {} }), isErr('ENOENT'));
    // No usable base: said, and nothing is created (not even a missing home directory).
    const cases: [Record<string, string>, string][] = [
      [{ XDG_STATE_HOME: '/dev/null', HOME: home }, 'XDG_STATE_HOME (/dev/null) is not a directory'],
      [{ XDG_STATE_HOME: 'rel/state' }, 'XDG_STATE_HOME (rel/state) is not an absolute path'],
      [{ HOME: '/dev/null' }, 'HOME (/dev/null) is not a directory'],
      [{ HOME: join(home, 'gone') }, `HOME (${join(home, 'gone')}) does not exist`],
    ];
    for (const [env, why] of cases)
      assert.throws(
        () => ensureSessionDir({ env }),
        (e: any) => isErr('EIO')(e) && e.message === `cannot use the session directory: ${why}`,
      );
    assert.ok(!existsSync(join(home, 'gone')));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('id format: local time and 8 hex digits', () => {
  assert.equal(newSessionId(new Date(2024, 0, 2, 3, 4, 5), Uint8Array.of(0xde, 0xad, 0xbe, 0xef)), '20240102-030405-deadbeef');
});

test('crash tolerance: garbage and a truncated last line are skipped; v:99 is refused', () => {
  const dir = tmp();
  try {
    const id = '20240101-000000-00000000';
    const path = join(dir, `${id}.jsonl`);
    writeFileSync(
      path,
      `{"type":"meta","v":1,"id":"${id}","created":1700000000,"model":"m"}\n` +
        'this is not json\n' +
        '[1,2,3]\n' +
        '{"no":"type"}\n' +
        '{"type":"whatever"}\n' +
        '{"role":"user","content":"kept","type":"msg"}\n' +
        '{"role":"assistant","content":"trunc',
    );
    const loaded = loadSession(id, { dir });
    assert.deepEqual(loaded.messages, [{ role: 'user', content: 'kept' }]);
    assert.equal(loaded.meta.created, 1700000000);

    appendFileSync(path, '\n{"type":"meta","v":99,"id":"x","created":1}\n');
    assert.throws(
      () => loadSession(id, { dir }),
      (e: any) => isErr('EPROTONOSUPPORT')(e) && /newer version/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('reopening after a crash mid-line starts the next message on its own line', () => {
  const dir = tmp();
  try {
    const s = createSession({ dir });
    s.append({ role: 'user', content: 'first' });
    s.close();
    appendFileSync(s.path, '{"role":"assistant","content":"cut o'); // the crash
    const r = openSession(s.id, { dir });
    r.append({ role: 'user', content: 'after resume' });
    r.close();
    assert.deepEqual(
      loadSession(s.id, { dir }).messages.map((m) => m.content),
      ['first', 'after resume'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a writer killed with SIGKILL leaves a loadable, resumable file', async () => {
  const dir = tmp();
  try {
    const store = fileURLToPath(new URL('../../src/session/store.ts', import.meta.url));
    const script = `
      const { createSession } = await import(${JSON.stringify(store)});
      const s = createSession({ dir: ${JSON.stringify(dir)} });
      process.stdout.write(s.id + '\\n');
      const big = 'x'.repeat(20000);
      for (let i = 0; ; i++) s.append({ role: i % 2 ? 'assistant' : 'user', content: i + ':' + big });
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let id = '';
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d) => {
        id += d;
        if (id.includes('\n')) resolve();
      }),
    );
    id = id.trim();
    await new Promise((r) => setTimeout(r, 150));
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const loaded = loadSession(id, { dir });
    assert.ok(loaded.messages.length > 0, 'messages written before the kill survive');
    loaded.messages.forEach((m, i) => assert.ok(m.content!.startsWith(`${i}:`), 'in order, none mangled'));
    const r = openSession(id, { dir });
    r.append({ role: 'user', content: 'resumed' });
    r.close();
    assert.equal(loadSession(id, { dir }).messages.at(-1)!.content, 'resumed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('id validation happens before the file system; unknown ids are ENOENT', () => {
  const dir = join(tmpdir(), 'clm-session-does-not-exist');
  for (const bad of ['../evil', 'a/b', '', 'x'.repeat(65), 'a b', 'é']) {
    assert.throws(() => loadSession(bad, { dir }), isErr('EINVAL'), bad);
    assert.throws(() => openSession(bad, { dir }), isErr('EINVAL'), bad);
    assert.throws(() => deleteSession(bad, { dir }), isErr('EINVAL'), bad);
  }
  assert.throws(() => loadSession('20990101-000000-abcdef01', { dir }), isErr('ENOENT'));
  assert.throws(() => openSession('20990101-000000-abcdef01', { dir }), isErr('ENOENT'));
  assert.ok(!existsSync(dir), 'nothing was created');
});

test('compaction lines are replayed on load; a line that does not fit is skipped; the first prompt survives', async () => {
  const { parseSessionText, encodeMessageLine, encodeCompactLine, encodeMetaLine } = await import('../../src/session/index.js');
  const msg = (role: 'user' | 'assistant', content: string) => encodeMessageLine({ role, content });
  const text =
    encodeMetaLine({ id: 'x', created: 1 }) +
    msg('user', 'first prompt') +
    msg('assistant', 'a1') +
    msg('user', 'u2') +
    msg('assistant', 'a2') +
    encodeCompactLine({ index: 0, count: 2, summary: 'SUMMARY' }) +
    encodeCompactLine({ index: 5, count: 9, summary: 'does not fit' }) +
    msg('user', 'u3');
  const r = parseSessionText(text);
  assert.deepEqual(
    r.messages.map((m) => m.content),
    ['SUMMARY', 'u2', 'a2', 'u3'],
  );
  assert.equal(r.firstUser?.content, 'first prompt');
});

test('a rewind line takes the conversation back to where it stood; compactions before the cut stay, later lines go', async () => {
  const { parseSessionText, encodeMessageLine, encodeCompactLine, encodeMetaLine, encodeRewindLine } = await import(
    '../../src/session/index.js'
  );
  const msg = (role: 'user' | 'assistant', content: string) => encodeMessageLine({ role, content });
  const text =
    encodeMetaLine({ id: 'x', created: 1 }) +
    msg('user', 'u1') +
    msg('assistant', 'a1') +
    msg('user', 'u2') +
    msg('assistant', 'a2') +
    encodeCompactLine({ index: 0, count: 2, summary: 'S' }) +
    msg('user', 'u3') +
    msg('assistant', 'a3') +
    encodeCompactLine({ index: 0, count: 3, summary: 'S2' }) +
    encodeRewindLine(4) +
    msg('user', 'u3 again') +
    encodeRewindLine(2) +
    msg('user', 'u2 again');
  const r = parseSessionText(text);
  assert.deepEqual(
    r.messages.map((m) => m.content),
    ['u1', 'a1', 'u2 again'],
  );
  assert.deepEqual(
    r.transcript.map((m) => m.content),
    ['u1', 'a1', 'u2 again'],
  );
  const once = parseSessionText(
    encodeMetaLine({ id: 'x', created: 1 }) +
      msg('user', 'u1') +
      msg('assistant', 'a1') +
      msg('user', 'u2') +
      msg('assistant', 'a2') +
      encodeCompactLine({ index: 0, count: 2, summary: 'S' }) +
      msg('user', 'u3') +
      encodeRewindLine(4),
  );
  assert.deepEqual(
    once.messages.map((m) => m.content),
    ['S', 'u2', 'a2'],
    'the compaction logged before the cut is kept',
  );
  assert.equal(r.skipped, 0);
});

test('loadSessionInSteps reads what loadSession reads, pausing between pieces; its errors are the same', async () => {
  const { encodeMessageLine, encodeCompactLine, encodeMetaLine, encodeRewindLine } = await import('../../src/session/index.js');
  const dir = tmp();
  try {
    const id = '20240101-000000-0000f00d';
    // ~1.5 MB: multi-byte text (so pieces of 64 KiB end anywhere in a character but at a newline),
    // a line longer than a piece, garbage, invalid UTF-8, compactions, a rewind, a truncated end.
    const parts: (string | Buffer)[] = [encodeMetaLine({ id, created: 1700000000, model: 'm' })];
    for (let i = 0; i < 3000; i++) {
      parts.push(encodeMessageLine({ role: 'user', content: `q${i} ${'é🦴ß'.repeat(i % 97)}` }));
      parts.push(encodeMessageLine({ role: 'assistant', content: `a${i} ${'word '.repeat(i % 131)}` }));
      if (i % 500 === 7) parts.push('not json at all\n', Buffer.from([0x7b, 0xff, 0xfe, 0x0a]));
      if (i === 1000) parts.push(encodeCompactLine({ index: 0, count: 1500, summary: 'S' }));
      if (i === 2000) parts.push(encodeMessageLine({ role: 'assistant', content: 'λ'.repeat(100_000) }));
      if (i === 2500) parts.push(encodeRewindLine(4000));
    }
    parts.push('{"role":"user","content":"cut sh');
    writeFileSync(join(dir, `${id}.jsonl`), Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))));
    let pauses = 0;
    const pause = async () => {
      pauses++;
      await new Promise((r) => setImmediate(r));
    };
    const whole = loadSession(id, { dir });
    assert.equal(whole.skipped, 13, 'the garbage, the invalid bytes and the cut end');
    assert.ok(whole.transcript.length > 4000);
    assert.deepEqual(await loadSessionInSteps(id, { dir, pause, stepMs: 0 }), whole);
    assert.ok(pauses >= 20, `${pauses} pauses`);
    pauses = 0;
    assert.deepEqual(await loadSessionInSteps(id, { dir, pause, stepMs: 60_000 }), whole);
    assert.equal(pauses, 0, 'no pause before a step of 60 s is over');

    await assert.rejects(loadSessionInSteps('20240101-000000-0000beef', { dir, pause }), isErr('ENOENT'));
    appendFileSync(join(dir, `${id}.jsonl`), '\n{"type":"meta","v":99,"id":"x","created":1}\n');
    await assert.rejects(loadSessionInSteps(id, { dir, pause }), isErr('EPROTONOSUPPORT'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Session.appendRewind writes a line loadSession honours', () => {
  const dir = tmp();
  const s = createSession({ dir });
  s.append({ role: 'user', content: 'keep' });
  s.append({ role: 'assistant', content: 'kept' });
  s.append({ role: 'user', content: 'drop' });
  s.appendRewind(2);
  s.close();
  assert.deepEqual(
    loadSession(s.id, { dir }).messages.map((m) => m.content),
    ['keep', 'kept'],
  );
});

test('session locks: a live pid that does not hold the lock is stale; without /proc it counts, unverified', () => {
  const dir = tmp();
  try {
    const s = createSession({ dir });
    s.append({ role: 'user', content: 'hi' });
    s.close();
    const lock = join(dir, `${s.id}.lock`);
    assert.equal(sessionLockHolder(s.id, { dir }), null, 'no lock');
    // pid 1 is alive, and it is not a clm with this lock open.
    writeFileSync(lock, '1\n');
    assert.equal(sessionLockHolder(s.id, { dir }), null);
    // A system without /proc cannot tell: the live pid is taken for the holder, and the message says so.
    const h = sessionLockHolder(s.id, { dir, proc: join(dir, 'no-proc') });
    assert.deepEqual(h, { pid: 1, lockFile: lock, verified: false });
    // A pid that is gone is stale everywhere.
    writeFileSync(lock, '999999999\n');
    assert.equal(sessionLockHolder(s.id, { dir, proc: join(dir, 'no-proc') }), null);
    // This process holding it: the lock stays while the session is open and goes with close().
    rmSync(lock);
    const again = openSession(s.id, { dir });
    assert.equal(readFileSync(lock, 'utf8'), `${process.pid}\n`);
    again.close();
    assert.ok(!existsSync(lock));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('forkSession: a file of a newer format anywhere in it is refused before anything is written; damaged lines are copied as they are', () => {
  const dir = tmp();
  try {
    const id = '20240101-000000-0000cafe';
    const path = join(dir, `${id}.jsonl`);
    // A meta line in other key order is a meta line too: not copied into the body.
    const text = `{"type":"meta","v":1,"id":"${id}","created":5,"model":"m1"}\nnot json\n{"v":1,"type":"meta","id":"${id}","created":6}\n{"role":"user","content":"hi","type":"msg"}\n`;
    writeFileSync(path, text);
    const to = forkSession(id, { dir });
    const copy = readFileSync(join(dir, `${to}.jsonl`), 'utf8').split('\n');
    assert.match(copy[0]!, new RegExp(`"model":"m1","forked_from":"${id}"`));
    assert.deepEqual(copy.slice(1), ['not json', '{"role":"user","content":"hi","type":"msg"}', '']);
    appendFileSync(path, '{"v":99,"type":"meta","id":"x","created":1}\n');
    const files = readdirSync(dir).length;
    assert.throws(() => forkSession(id, { dir }), isErr('EPROTONOSUPPORT'));
    assert.equal(readdirSync(dir).length, files, 'nothing written');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('forkSession: a copy under a new id with its compactions, the meta naming the original; the original as it was', () => {
  const dir = tmp();
  try {
    const s = createSession({ dir, model: 'gpt-x', agent: 'coder' });
    for (const m of msgs) s.append(m);
    s.appendCompaction({ index: 0, count: 2, summary: 'SUMMARY' });
    const before = readFileSync(join(dir, `${s.id}.jsonl`), 'utf8');
    const to = forkSession(s.id, { dir });
    assert.notEqual(to, s.id);
    assert.equal(readFileSync(join(dir, `${s.id}.jsonl`), 'utf8'), before, 'read only, even while open');
    s.close();
    const copy = loadSession(to, { dir });
    const orig = loadSession(s.id, { dir });
    assert.deepEqual(copy.messages, orig.messages);
    assert.deepEqual(copy.transcript, orig.transcript);
    assert.equal(copy.meta.forked_from, s.id);
    assert.equal(copy.meta.id, to);
    assert.equal(copy.meta.model, 'gpt-x');
    assert.equal(copy.meta.agent, 'coder');
    assert.equal(statSync(join(dir, `${to}.jsonl`)).mode & 0o777, 0o600);
    assert.throws(() => forkSession('20990101-000000-00000000', { dir }), isErr('ENOENT'));
    assert.throws(() => forkSession('../x', { dir }), SessionError);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
