// The original's test_listing (ordered by last use here), plus the snippet rules and the picker's line format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSession, formatSessionList, formatSessionTime, listSessions, firstUserSnippet } from '../../src/session/index.js';

test('listing: last used first (the file written last), whatever the order of creation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clm-list-'));
  try {
    const mk = (when: Date, user: string) => {
      const s = createSession({ dir, now: when });
      s.append({ role: 'user', content: user });
      s.close();
      return s.id;
    };
    const oldest = mk(new Date(2024, 0, 1), 'created first, resumed a minute ago');
    const middle = mk(new Date(2024, 5, 1), 'created second, last used yesterday');
    const newest = mk(new Date(2024, 9, 1), 'created last, untouched for a week');
    const now = Date.now() / 1000;
    utimesSync(join(dir, `${oldest}.jsonl`), now - 60, now - 60);
    utimesSync(join(dir, `${middle}.jsonl`), now - 86_400, now - 86_400);
    utimesSync(join(dir, `${newest}.jsonl`), now - 7 * 86_400, now - 7 * 86_400);
    const rows = listSessions({ dir });
    assert.deepEqual(
      rows.map((r) => r.id),
      [oldest, middle, newest],
    );
    assert.ok(Math.abs(rows[0]!.used - (now - 60)) < 2, `used is the file's last write: ${rows[0]!.used}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('listing: files written in the same instant, newest created first (then id desc); unreadable and newer files skipped', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clm-list-'));
  try {
    const mk = (when: Date, user: string | null, model?: string) => {
      const s = createSession({ dir, now: when, model });
      if (user !== null) s.append({ role: 'user', content: user });
      s.append({ role: 'assistant', content: 'ok' });
      s.close();
      return s.id;
    };
    const old = mk(new Date(2024, 0, 1, 10, 0, 0), 'old one', 'm1');
    const a = mk(new Date(2024, 5, 1, 10, 0, 0), '[context update] time\nnow', 'm2');
    const b = mk(new Date(2024, 5, 1, 10, 0, 0), null);
    writeFileSync(join(dir, '20990101-000000-ffffffff.jsonl'), '{"type":"meta","v":2,"id":"x","created":4000000000}\n');
    writeFileSync(join(dir, 'not a session.jsonl'), '{}\n');
    writeFileSync(join(dir, 'README.txt'), 'hi');
    for (const id of [old, a, b]) utimesSync(join(dir, `${id}.jsonl`), 1_700_000_000, 1_700_000_000);
    const rows = listSessions({ dir });
    const sameSecond = [a, b].sort().reverse();
    assert.deepEqual(
      rows.map((r) => r.id),
      [...sameSecond, old],
    );
    for (const r of rows) assert.ok(r.id);
    assert.equal(rows.find((r) => r.id === old)!.firstUser, 'old one');
    assert.equal(rows.find((r) => r.id === a)!.firstUser, null, '[context update] is not a prompt');
    assert.equal(rows.find((r) => r.id === old)!.model, 'm1');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('listing a directory that does not exist gives no rows', () => {
  assert.deepEqual(listSessions({ dir: join(tmpdir(), 'clm-list-nope', 'deeper') }), []);
});

test('snippet: first 80 bytes, CR/LF become spaces, never a split character', () => {
  assert.equal(firstUserSnippet([{ role: 'user', content: 'a\r\nb' }]), 'a  b');
  assert.equal(firstUserSnippet([{ role: 'user', content: 'x'.repeat(100) }]), 'x'.repeat(80));
  const bones = '🦴'.repeat(30); // 4 bytes each: 80 bytes is exactly 20 of them
  assert.equal(firstUserSnippet([{ role: 'user', content: 'é' + bones }]), 'é' + '🦴'.repeat(19));
  assert.equal(firstUserSnippet([{ role: 'assistant', content: 'no' }]), null);
});

test('formatSessionList prints the picker rows like the C program', () => {
  const created = Math.floor(new Date(2024, 2, 9, 7, 5, 0).getTime() / 1000);
  const used = Math.floor(new Date(2024, 3, 10, 8, 6, 0).getTime() / 1000);
  const out = formatSessionList([
    { id: '20240309-070500-0a0b0c0d', created, used, model: 'llama', firstUser: 'hello there', messageCount: 2 },
    { id: 'legacy', created: 0, used: 0, firstUser: null, messageCount: 0 },
  ]);
  // The time shown is the last use, the order of the list.
  assert.equal(out, '  1) 20240309-070500-0a0b0c0d  2024-04-10 08:06  llama\n     hello there\n' + '  2) legacy  ?  ?\n     (empty)\n');
  assert.equal(formatSessionTime(0), '?');
});

test('listing reads the head of a long session; a rewind anywhere (even across two reads) is honoured; the count is exact', async () => {
  const { encodeMessageLine, encodeMetaLine, encodeRewindLine } = await import('../../src/session/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'clm-list-'));
  try {
    const file = (id: string) => join(dir, `${id}.jsonl`);
    const long = `${'é🦴'.repeat(60_000)} the end`; // ~360 KB: the first prompt spans more than one read of 256 KiB
    const body = Array.from({ length: 200 }, (_, i) =>
      encodeMessageLine({ role: 'assistant', content: `answer ${i} ${'x'.repeat(2000)}` }),
    ).join('');
    // A: a long first prompt, then 400 KB of answers.
    const a = '20240101-000000-0000000a';
    writeFileSync(file(a), encodeMetaLine({ id: a, created: 1, model: 'm' }) + encodeMessageLine({ role: 'user', content: long }) + body);
    // B: the first prompt taken back by a rewind line that starts a few bytes before the second read.
    const b = '20240101-000000-0000000b';
    const before = encodeMetaLine({ id: b, created: 2 }) + encodeMessageLine({ role: 'user', content: 'taken back' });
    const empty = Buffer.byteLength(encodeMessageLine({ role: 'assistant', content: '' }));
    const filler = encodeMessageLine({ role: 'assistant', content: 'y'.repeat(256 * 1024 - 7 - Buffer.byteLength(before) - empty) });
    const bText = before + filler + encodeRewindLine(0) + encodeMessageLine({ role: 'user', content: 'asked again' }) + body;
    assert.equal(bText.indexOf('{"type":"rewind"'), 256 * 1024 - 7, 'the rewind line straddles the first read');
    writeFileSync(file(b), bText);
    const rows = new Map(listSessions({ dir }).map((r) => [r.id, r]));
    assert.equal(rows.get(a)!.firstUser, firstUserSnippet([{ role: 'user', content: long }]));
    assert.equal(rows.get(a)!.model, 'm');
    assert.equal(rows.get(a)!.messageCount, 201);
    assert.equal(rows.get(b)!.firstUser, 'asked again', 'the prompt after the rewind');
    assert.equal(rows.get(b)!.messageCount, 201);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
