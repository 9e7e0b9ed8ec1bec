// The REPL's permission prompt on a terminal, as a unit: the question's text, the keys, the
// echoes, the queue of parallel requests, always/never for the session, Esc, turn end.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argsSummary, PermissionPrompt, type Key } from '../../src/cli/permission-prompt.js';
import type { PermissionDecision } from '../../src/core/types.js';

const QUESTION = '(y) once  (n) deny  (a) always  (d) never  [esc = deny+cancel]';

function setup() {
  let out = '';
  let onKey: ((k: Key) => void) | null = null;
  const log: string[] = [];
  const answers: [string, PermissionDecision][] = [];
  const p = new PermissionPrompt({
    write: (s) => {
      out += s;
    },
    listen: (fn) => {
      assert.equal(onKey, null, 'listen twice');
      onKey = fn;
      log.push('listen');
    },
    unlisten: () => {
      onKey = null;
      log.push('unlisten');
    },
    cancelTurn: () => {
      log.push('cancel');
    },
    interrupt: () => {
      log.push('interrupt');
    },
  });
  const ask = (name: string, args = '{}') =>
    p.request({
      id: `call_${name}`,
      name,
      args,
      signal: new AbortController().signal,
      respond: (d) => answers.push([`${name} ${args}`, d]),
    });
  const press = (sequence: string, name = sequence.toLowerCase(), extra: Partial<Key> = {}) => {
    assert.ok(onKey, `no key listener for ${sequence}`);
    onKey!({ sequence, name, ...extra });
  };
  return {
    p,
    ask,
    press,
    answers,
    log,
    get out() {
      return out;
    },
    get listening() {
      return onKey !== null;
    },
  };
}

test('argument summary: one field = its value, several = key: value, non-object raw, {} nothing', () => {
  assert.equal(argsSummary('{"command":"echo hi"}'), 'echo hi');
  assert.equal(argsSummary('{"path":"a.txt","limit":200}'), 'path: a.txt  limit: 200');
  assert.equal(argsSummary('{"opts":{"x":1}}'), '{"x":1}');
  assert.equal(argsSummary('[1,2]'), '[1,2]');
  assert.equal(argsSummary('not json'), 'not json');
  assert.equal(argsSummary('{}'), '');
  assert.equal(argsSummary(''), '');
  // Nothing is cut (the person must see the whole command) and control characters cannot redraw
  // the line: a carriage return or an escape sequence is shown, not obeyed.
  const long = 'x'.repeat(5000);
  assert.equal(argsSummary(JSON.stringify({ command: long })), long);
  assert.equal(argsSummary(JSON.stringify({ command: 'rm -rf ~\rls' })), 'rm -rf ~\\rls');
  assert.equal(argsSummary(JSON.stringify({ command: 'a\x1b[2Kb' })), 'a\\x1b[2Kb');
  assert.equal(argsSummary(JSON.stringify({ command: 'line1\nline2\ttab' })), 'line1\nline2\ttab');
  // A bidi override would show `cat notestxt.sh` for `cat notes<U+202E>txt.sh`; C1 controls are escapes too.
  assert.equal(argsSummary(JSON.stringify({ command: 'cat notes\u202etxt.sh' })), 'cat notes<U+202E>txt.sh');
  assert.equal(argsSummary(JSON.stringify({ command: 'a\u2066b\u0085c\u009bd' })), 'a<U+2066>b\\x85c\\x9bd');
});

test('y allows once, n denies; the question and the echoes are the original strings', () => {
  const s = setup();
  s.ask('shell_exec', '{"command":"echo RAN"}');
  assert.equal(s.out, `allow tool shell_exec: echo RAN\n${QUESTION}\n`);
  assert.deepEqual(s.answers, [], 'nothing is answered before a key');
  s.press('x');
  s.press('\r', 'return');
  assert.deepEqual(s.answers, [], 'other keys are ignored');
  s.press('y');
  assert.deepEqual(s.answers, [['shell_exec {"command":"echo RAN"}', 'allow_once']]);
  assert.ok(s.out.endsWith('-> allowed\n'));
  assert.equal(s.listening, false, 'keys go back to the line editor');
  s.ask('write_file', '{}');
  assert.ok(s.out.endsWith(`allow tool write_file\n${QUESTION}\n`), JSON.stringify(s.out));
  s.press('N');
  assert.deepEqual(s.answers.at(-1), ['write_file {}', 'deny_once']);
  assert.ok(s.out.endsWith('-> denied\n'));
});

test('parallel requests queue and are asked one at a time; always answers the queued ones of that tool', () => {
  const s = setup();
  s.ask('shell_exec', '{"command":"one"}');
  s.ask('write_file', '{"path":"p","content":"c"}');
  s.ask('shell_exec', '{"command":"two"}');
  assert.equal(s.out.split('allow tool').length - 1, 1, 'one question at a time');
  s.press('A');
  assert.deepEqual(s.answers, [
    ['shell_exec {"command":"one"}', 'allow_always'],
    ['shell_exec {"command":"two"}', 'allow_always'],
  ]);
  assert.ok(s.out.includes('-> always allowed\n'));
  assert.ok(s.out.endsWith(`allow tool write_file: path: p  content: c\n${QUESTION}\n`), s.out);
  s.press('d');
  assert.deepEqual(s.answers.at(-1), ['write_file {"path":"p","content":"c"}', 'deny_always']);
  assert.ok(s.out.endsWith('-> always denied\n'));
  assert.equal(s.listening, false);
  // Remembered for the session: later requests of these tools are answered without a question.
  const before = s.out;
  s.ask('shell_exec', '{"command":"three"}');
  s.ask('write_file', '{"path":"q"}');
  assert.equal(s.out, before);
  assert.deepEqual(s.answers.slice(-2), [
    ['shell_exec {"command":"three"}', 'allow_always'],
    ['write_file {"path":"q"}', 'deny_always'],
  ]);
});

test('Esc denies the current and every queued request and cancels the turn', () => {
  const s = setup();
  s.ask('shell_exec', '{"command":"one"}');
  s.ask('write_file', '{"path":"p"}');
  s.press('\x1b', 'escape');
  assert.deepEqual(
    s.answers.map((a) => a[1]),
    ['deny_once', 'deny_once'],
  );
  assert.ok(s.out.endsWith('-> denied (cancelled)\n'));
  assert.deepEqual(s.log, ['listen', 'unlisten', 'cancel']);
  assert.equal(s.out.split('allow tool').length - 1, 1, 'the queued request is not asked');
  // Esc is not remembered.
  s.ask('shell_exec', '{"command":"again"}');
  assert.ok(s.out.endsWith(`allow tool shell_exec: again\n${QUESTION}\n`));
});

test('Ctrl-C while asking is an interrupt; the turn end clears what is still queued', () => {
  const s = setup();
  s.ask('shell_exec', '{"command":"one"}');
  s.ask('shell_exec', '{"command":"two"}');
  s.press('\x03', 'c', { ctrl: true });
  assert.deepEqual(s.log, ['listen', 'interrupt']);
  s.p.turnEnded();
  assert.equal(s.listening, false);
  assert.deepEqual(s.answers, [], 'the agent resolved the parked calls itself');
  // A new turn starts with an empty queue.
  s.ask('list_x', '{"a":1}');
  assert.ok(s.out.endsWith(`allow tool list_x: 1\n${QUESTION}\n`));
  s.press('y');
  assert.deepEqual(s.answers, [['list_x {"a":1}', 'allow_once']]);
});

test('an answer that ends the turn synchronously leaves nothing behind', () => {
  const s = setup();
  let ended = false;
  s.p.request({
    id: 'call_t',
    name: 't',
    args: '{}',
    signal: new AbortController().signal,
    respond: () => {
      ended = true;
      s.p.turnEnded();
    },
  });
  s.ask('u');
  s.press('y');
  assert.ok(ended);
  assert.equal(s.listening, false);
  assert.equal(s.out.split('allow tool').length - 1, 1, 'the cleared queue is not asked');
});
