import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type InputEvent, keyId, KeyParser, type Timers } from '../../src/tui/keys.js';
import { tally } from '../fixtures/tally.js';

/** A parser with a hand-driven clock: tick() runs the pending wait. */
function parser() {
  const events: InputEvent[] = [];
  let pending: (() => void) | null = null;
  const timers: Timers = {
    setTimeout: (fn) => {
      pending = fn;
      return 1;
    },
    clearTimeout: () => {
      pending = null;
    },
  };
  const p = new KeyParser((e) => events.push(e), { timers });
  return {
    p,
    events,
    tick: () => {
      const f = pending;
      pending = null;
      f?.();
    },
    waiting: () => pending !== null,
  };
}
const ids = (evs: InputEvent[]) =>
  evs.map((e) =>
    e.type === 'key'
      ? keyId(e.key)
      : e.type === 'text'
        ? `text:${e.text}`
        : e.type === 'paste'
          ? `paste:${e.text}`
          : e.type === 'wheel'
            ? `wheel:${e.delta}@${e.row},${e.col}`
            : e.type === 'cursor'
              ? `cursor:${e.row},${e.col}`
              : `focus:${e.focused}`,
  );
const parse = (...chunks: (string | Uint8Array)[]) => {
  const t = parser();
  for (const c of chunks) t.p.feed(c);
  return ids(t.events);
};

test('control characters and plain keys', () => {
  assert.deepEqual(parse('\r'), ['enter']);
  assert.deepEqual(parse('\t'), ['tab']);
  assert.deepEqual(parse('\x7f'), ['backspace']);
  assert.deepEqual(parse('\x08'), ['backspace']);
  assert.deepEqual(parse('\x01\x05\x02\x06\x15\x0b\x19\x04\x0c\x0f\x12\x03'), [
    'ctrl+a',
    'ctrl+e',
    'ctrl+b',
    'ctrl+f',
    'ctrl+u',
    'ctrl+k',
    'ctrl+y',
    'ctrl+d',
    'ctrl+l',
    'ctrl+o',
    'ctrl+r',
    'ctrl+c',
  ]);
  assert.deepEqual(parse('\n'), ['ctrl+j']);
  assert.deepEqual(parse('\x00'), ['ctrl+space']);
  assert.deepEqual(parse('\x1f'), ['ctrl+_']);
});

test('typed text arrives as runs, split at keys', () => {
  assert.deepEqual(parse('hello'), ['text:hello']);
  assert.deepEqual(parse('ab\rcd'), ['text:ab', 'enter', 'text:cd']);
  assert.deepEqual(parse('日本語👍'), ['text:日本語👍']);
});

test('CSI and SS3 forms with modifiers', () => {
  assert.deepEqual(parse('\x1b[A\x1b[B\x1b[C\x1b[D'), ['up', 'down', 'right', 'left']);
  assert.deepEqual(parse('\x1bOA\x1bOD\x1bOH\x1bOF'), ['up', 'left', 'home', 'end']);
  assert.deepEqual(parse('\x1b[H\x1b[F\x1b[1~\x1b[4~\x1b[7~\x1b[8~'), ['home', 'end', 'home', 'end', 'home', 'end']);
  assert.deepEqual(parse('\x1b[2~\x1b[3~\x1b[5~\x1b[6~'), ['insert', 'delete', 'pageup', 'pagedown']);
  assert.deepEqual(parse('\x1b[1;5C\x1b[1;3D\x1b[1;2A\x1b[1;6B'), ['ctrl+right', 'alt+left', 'shift+up', 'ctrl+shift+down']);
  assert.deepEqual(parse('\x1b[3;5~\x1b[5;2~'), ['ctrl+delete', 'shift+pageup']);
  assert.deepEqual(parse('\x1bOP\x1bOS\x1b[15~\x1b[24~\x1b[1;2P'), ['f1', 'f4', 'f5', 'f12', 'shift+f1']);
  assert.deepEqual(parse('\x1b[Z'), ['shift+tab']);
  assert.deepEqual(parse('\x1b[[A'), ['f1']);
  assert.deepEqual(parse('\x1bOM'), ['enter']);
  assert.deepEqual(parse('\x1bO5C'), ['ctrl+right']);
});

test('Shift/Alt+Enter in CSI-u, modifyOtherKeys and Meta forms', () => {
  assert.deepEqual(parse('\x1b[13;2u'), ['shift+enter']);
  assert.deepEqual(parse('\x1b[13;3u'), ['alt+enter']);
  assert.deepEqual(parse('\x1b[27;2;13~'), ['shift+enter']);
  assert.deepEqual(parse('\x1b[27;5;13~'), ['ctrl+enter']);
  assert.deepEqual(parse('\x1b\r'), ['alt+enter']);
  assert.deepEqual(parse('\x1b[97;5u'), ['ctrl+a']);
  assert.deepEqual(parse('\x1b[97u'), ['text:a']);
  assert.deepEqual(parse('\x1b[97;2u'), ['text:A']);
  assert.deepEqual(parse('\x1b[97;5:3u'), [], 'a key release is not a key');
  assert.deepEqual(parse('\x1b[27u'), ['escape']);
  assert.deepEqual(parse('\x1b[127;3u'), ['alt+backspace']);
});

test('Alt+letter and Alt+Backspace', () => {
  assert.deepEqual(parse('\x1bb\x1bf\x1bd'), ['alt+b', 'alt+f', 'alt+d']);
  assert.deepEqual(parse('\x1b\x7f'), ['alt+backspace']);
  assert.deepEqual(parse('\x1b\x1b[A'), ['alt+up']);
});

test('bracketed paste is one event, CR made LF, whatever it contains', () => {
  assert.deepEqual(parse('\x1b[200~line 1\rline 2\r\nline 3\x1b[201~'), ['paste:line 1\nline 2\nline 3']);
  assert.deepEqual(parse('x\x1b[200~\x1b[A\x03\x1b[201~y'), ['text:x', 'paste:\x1b[A\x03', 'text:y']);
  // Split anywhere, the end marker too.
  assert.deepEqual(parse('\x1b[20', '0~ab', 'c\x1b[2', '01~\r'), ['paste:abc', 'enter']);
});

test('a paste of 1 MB in many reads arrives whole, once', () => {
  const big = 'x'.repeat(1 << 20);
  const t = parser();
  t.p.feed('\x1b[200~');
  for (let i = 0; i < big.length; i += 4096) t.p.feed(big.slice(i, i + 4096));
  t.p.feed('\x1b[201~');
  assert.equal(t.events.length, 1);
  assert.equal(t.events[0]!.type === 'paste' && t.events[0]!.text.length, big.length);
});

test('a paste whose end marker never comes is delivered after the wait', () => {
  const t = parser();
  t.p.feed('\x1b[200~half a paste');
  assert.deepEqual(t.events, []);
  t.tick();
  assert.deepEqual(ids(t.events), ['paste:half a paste']);
  t.p.feed('a');
  assert.deepEqual(ids(t.events).slice(1), ['text:a']);
});

test('a lone Esc is a key only after the wait; a sequence split across reads is not', () => {
  const t = parser();
  t.p.feed('\x1b');
  assert.deepEqual(t.events, []);
  assert.ok(t.waiting());
  t.tick();
  assert.deepEqual(ids(t.events), ['escape']);
  const u = parser();
  u.p.feed('\x1b');
  u.p.feed('[');
  u.p.feed('1;5');
  u.p.feed('A');
  assert.deepEqual(ids(u.events), ['ctrl+up']);
});

test('real wait: the Esc comes after ~25 ms of silence', async () => {
  const events: InputEvent[] = [];
  const p = new KeyParser((e) => events.push(e));
  p.feed('\x1b');
  await new Promise((r) => setTimeout(r, 60));
  while (!events.length) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(ids(events), ['escape']);
});

test('UTF-8 split across reads', () => {
  const bytes = Buffer.from('é日👍', 'utf8');
  const chunks = [...bytes].map((b) => Uint8Array.of(b));
  assert.deepEqual(parse(...chunks).join(''), 'text:étext:日text:👍');
  assert.deepEqual(parse(Uint8Array.of(0xff, 0x61)), ['text:\ufffda']);
});

test('SGR mouse wheel; other mouse events are dropped', () => {
  assert.deepEqual(parse('\x1b[<64;10;5M\x1b[<65;1;1M'), ['wheel:-1@4,9', 'wheel:1@0,0']);
  assert.deepEqual(parse('\x1b[<0;3;3M\x1b[<0;3;3m\x1b[<35;4;4M'), []);
  assert.deepEqual(parse('\x1b[M`!!'), ['wheel:-1@0,0']);
});

test('cursor position reports only when one is expected (else Shift+F3)', () => {
  const t = parser();
  t.p.expectCursorReport();
  t.p.feed('\x1b[12;40R\x1b[1;2R');
  assert.deepEqual(ids(t.events), ['cursor:12,40', 'shift+f3']);
});

test('focus events, terminal replies ignored', () => {
  assert.deepEqual(parse('\x1b[I\x1b[O'), ['focus:true', 'focus:false']);
  assert.deepEqual(parse('\x1b[?1u\x1b[?62;4c\x1b]11;rgb:0000/0000/0000\x07x'), ['text:x']);
});

test('garbage does not throw and never turns into text with escapes', () => {
  const junk = [
    '\x1b[',
    '\x1b[999999999999~',
    '\x1b[;;;;;u',
    '\x1b[<a;b;cM',
    '\x1b[27;;~',
    '\x9b\x9c',
    '\x1bO',
    '\x1b[1;9999999A',
    '\x1b[1114112u',
  ];
  for (const j of junk) {
    const t = parser();
    t.p.feed(j);
    t.tick();
    for (const e of t.events) if (e.type === 'text') assert.ok(!e.text.includes('\x1b'), JSON.stringify(j));
  }
  tally('bad_inputs', junk.length);
});

test('kitty keyboard protocol: Esc and Ctrl keys as CSI-u, keypad keys never become odd text', () => {
  assert.deepEqual(parse('\x1b[27u\x1b[99;5u\x1b[100;5u'), ['escape', 'ctrl+c', 'ctrl+d']);
  assert.deepEqual(parse('\x1b[57414u\x1b[57399u\x1b[57413u\x1b[57419;5u'), ['enter', 'text:0', 'text:+', 'ctrl+up']);
  assert.deepEqual(parse('\x1b[57441;2u\x1b[57400u'), ['text:1'], 'a modifier key alone is no key');
  assert.deepEqual(parse('\x1b[58000u'), ['unknown']);
});
