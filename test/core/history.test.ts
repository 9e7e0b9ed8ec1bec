import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foldHistory, supersede, systemMessage, contextUpdateMessage, estimateTokens } from '../../src/core/history.js';
import type { Message } from '../../src/core/types.js';
import { rfc2822 } from '../../src/core/time-stamp.js';

const u = (c: string): Message => ({ role: 'user', content: c });
const a = (c: string): Message => ({ role: 'assistant', content: c });
const call = (id: string, name = 'read_file'): Message => ({ role: 'assistant', content: null, toolCalls: [{ id, name, args: '{}' }] });
const res = (id: string, c: string, name = 'read_file'): Message => ({ role: 'tool', content: c, toolCallId: id, toolName: name });

test('history compact: keeps system, inserts summary, keeps the last 2 user turns (test_history_compact)', () => {
  const sys: Message = { role: 'system', content: 'SYS' };
  const h: Message[] = [
    sys,
    u('turn1'),
    a('r1'),
    u('turn2'),
    call('c1'),
    res('c1', 'out'),
    a('r2'),
    u('turn3'),
    a('r3'),
    u('turn4'),
    a('r4'),
  ];
  const f = foldHistory(h, 'SUMMARY');
  assert.deepEqual(f, { at: 1, count: 6 });
  assert.equal(h[0], sys);
  assert.deepEqual(h[1], { role: 'user', content: 'SUMMARY' });
  assert.ok(!h.some((m) => m.role === 'tool'));
  const texts = h.map((m) => m.content);
  assert.ok(texts.includes('turn3') && texts.includes('turn4'));
  assert.ok(!texts.includes('turn1') && !texts.includes('turn2'));
});

test('history compact: one user turn makes no progress and leaves history unchanged', () => {
  const h: Message[] = [{ role: 'system', content: 'S' }, u('only'), a('x')];
  const before = JSON.stringify(h);
  assert.equal(foldHistory(h, 'S2').count, 0);
  assert.equal(JSON.stringify(h), before);
});

test('history compact agentic fallback keeps mission and the 2 most recent exchanges (test_history_compact_agentic)', () => {
  const h: Message[] = [{ role: 'system', content: 'SYS' }, u('MISSION')];
  for (let i = 0; i < 4; i++) h.push(call(`c${i}`), res(`c${i}`, `out${i}`));
  const f = foldHistory(h, 'SUMMARY');
  assert.deepEqual(f, { at: 2, count: 4 });
  assert.deepEqual(
    h.map((m) => m.content),
    ['SYS', 'MISSION', 'SUMMARY', null, 'out2', null, 'out3'],
  );
  const short: Message[] = [{ role: 'system', content: 'SYS' }, u('MISSION'), call('a'), res('a', 'x'), call('b'), res('b', 'y')];
  assert.equal(foldHistory(short, 'S').count, 0);
  assert.equal(short.length, 6);
});

test('supersede stubs earlier results of the same tool only, idempotently (test_history_supersede)', () => {
  const h: Message[] = [
    u('go'),
    call('1', 'local_map'),
    res('1', 'map v1', 'local_map'),
    call('2', 'other'),
    res('2', 'keep', 'other'),
    call('3', 'local_map'),
    res('3', 'map v2', 'local_map'),
  ];
  // The current batch head is the last tool-call message (index 5): only results before it are stubbed.
  const orig = h[2];
  assert.equal(supersede(h, 'local_map'), 1);
  assert.equal(h[2]!.content, '[superseded by newer local_map]');
  assert.notEqual(h[2], orig, 'replaced by a new object, never edited in place');
  assert.equal(h[6]!.content, 'map v2');
  assert.equal(h[4]!.content, 'keep');
  assert.equal(h.length, 7);
  h.push(call('4', 'local_map'), res('4', 'map v3', 'local_map'));
  assert.equal(supersede(h, 'local_map'), 1);
  assert.equal(h[6]!.content, '[superseded by newer local_map]');
  assert.equal(supersede(h, 'local_map'), 0);
});

test('system prompt carries the time stamp and the context-update rule', () => {
  const d = new Date(2026, 10, 30, 9, 5, 7);
  const s = systemMessage('BASE', d).content!;
  assert.match(
    s,
    /^BASE\n\ncurrent time: Mon, 30 Nov 2026 09:05:07 [+-]\d{4}\n\nYou may periodically receive a line beginning with "\[context update\]"/,
  );
  assert.match(systemMessage(undefined, d).content!, /^You are a helpful assistant\./);
  assert.match(
    contextUpdateMessage(d).content!,
    /^\[context update\] current time: Mon, 30 Nov 2026 09:05:07 [+-]\d{4}\n\(automatic context, not user input; do not acknowledge\)$/,
  );
  assert.equal(contextUpdateMessage(d).role, 'user');
});

test('the time stamp is RFC 2822 local time in every time zone (a half-hour or 45-minute offset, west or east)', () => {
  const saved = process.env.TZ;
  const p2 = (n: number) => String(n).padStart(2, '0');
  try {
    for (const tz of ['UTC', 'Europe/Berlin', 'America/St_Johns', 'Asia/Kathmandu', 'Pacific/Chatham', 'America/Los_Angeles']) {
      process.env.TZ = tz;
      for (const d of [
        new Date(2026, 10, 30, 9, 5, 7),
        new Date(2024, 1, 29, 23, 59, 59),
        new Date(2027, 6, 4, 0, 0, 0),
        new Date(1999, 11, 31, 12, 30, 1),
      ]) {
        const off = -d.getTimezoneOffset();
        const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getDay()];
        const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getMonth()];
        const zone = `${off < 0 ? '-' : '+'}${p2(Math.floor(Math.abs(off) / 60))}${p2(Math.abs(off) % 60)}`;
        const want = `${day}, ${p2(d.getDate())} ${month} ${d.getFullYear()} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${zone}`;
        assert.equal(contextUpdateMessage(d).content!.split('\n')[0], `[context update] current time: ${want}`, tz);
        // Date's own text of the same fields (ECMAScript fixes its form), in RFC 2822's order.
        assert.equal(rfc2822(d), d.toString().replace(/^(\w+) (\w+) (\d+) (-?\d+) (\S+) GMT(\S+).*/s, '$1, $3 $2 $4 $5 $6'), tz);
      }
    }
    process.env.TZ = 'Asia/Kathmandu';
    assert.equal(rfc2822(new Date(Date.UTC(2026, 10, 30, 3, 20, 7))), 'Mon, 30 Nov 2026 09:05:07 +0545');
    process.env.TZ = 'America/St_Johns';
    assert.equal(rfc2822(new Date(Date.UTC(2027, 0, 1, 3, 0, 0))), 'Thu, 31 Dec 2026 23:30:00 -0330');
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
});

test('estimateTokens grows with content', () => {
  assert.ok(estimateTokens([u('x'.repeat(4000))]) > 1000);
});
