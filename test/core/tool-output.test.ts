// What a tool's output becomes before the model sees it: binary detected, long output clamped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clampOutput, outputText, firstBinaryOffset } from '../../src/core/tool-output.js';

test('binary detection reports the first bad byte offset (test_binary_tool_output)', () => {
  const b = new Uint8Array([0x68, 0x69, 0x00, 0x89, 0x50, 0x4e, 0x47]);
  assert.equal(firstBinaryOffset(b), 2);
  assert.equal(outputText(b), '[tool output contained binary data at byte offset 2 of 7; not displayed]');
  assert.equal(outputText(new Uint8Array([0x61, 0xe2, 0x82])), '[tool output contained binary data at byte offset 1 of 3; not displayed]');
  assert.equal(outputText(new TextEncoder().encode('héllo ✓ 🦴')), 'héllo ✓ 🦴');
  assert.equal(outputText('a\0b'), '[tool output contained binary data at byte offset 1 of 3; not displayed]');
  assert.equal(outputText('plain'), 'plain');
});

test('clamp keeps the head, marks the cut and never splits a character', () => {
  assert.equal(clampOutput('short', 100), 'short');
  const s = clampOutput('x'.repeat(1000), 100);
  assert.equal(new TextEncoder().encode(s).length, 100);
  assert.ok(s.endsWith('\n[output truncated]'));
  const e = clampOutput('é'.repeat(100), 50);
  assert.ok(e.endsWith('\n[output truncated]'));
  assert.ok(!e.includes('\ufffd'));
  assert.ok(new TextEncoder().encode(e).length <= 50);
});
