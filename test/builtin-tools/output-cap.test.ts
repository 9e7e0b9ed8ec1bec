import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CappedOutput, utf8Boundary, bytesToText } from '../../src/builtin-tools/output-cap.js';

test('utf8Boundary: never inside a character', () => {
  const b = Buffer.from('a€b'); // 61 e2 82 ac 62
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 9].map((n) => utf8Boundary(b, n)),
    [0, 1, 1, 1, 4, 5, 5],
  );
  const bad = Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80]); // not UTF-8 at all: cut where asked
  assert.equal(utf8Boundary(bad, 4), 4);
});

test('CappedOutput: under the cap passes through; over it keeps head + marker (+ suffix) within the cap', () => {
  const o = new CappedOutput(10);
  o.push(Buffer.from('hello'));
  assert.equal(o.renderText(10), 'hello');
  assert.equal(o.renderText(10, '!'), 'hello!');
  o.push(Buffer.from(' world, and more'));
  assert.equal(o.total, 21);
  const big = new CappedOutput(100);
  big.push(Buffer.from('x'.repeat(150)));
  const t = big.renderText(100, '\n(exit status 1)');
  assert.ok(Buffer.byteLength(t) <= 100, `${Buffer.byteLength(t)}`);
  const m = /^(x*)\n\[output truncated: (\d+) of 150 bytes dropped\]\n\(exit status 1\)$/.exec(t);
  assert.ok(m, t);
  assert.equal(m![1]!.length + Number(m![2]), 150);
  // Output that fits alone but not with its suffix is cut, so the suffix survives.
  const edge = new CappedOutput(60);
  edge.push(Buffer.from('y'.repeat(60)));
  assert.match(edge.renderText(60, '\n(exit status 2)'), /\(exit status 2\)$/);
  assert.ok(Buffer.byteLength(edge.renderText(60, '\n(exit status 2)')) <= 60);
});

test('bytesToText: binary becomes a note', () => {
  assert.equal(bytesToText(Buffer.from('ok')), 'ok');
  assert.equal(bytesToText(Buffer.from([0xff, 0xfe, 0x00])), '(binary output of 3 bytes not displayed)');
});
