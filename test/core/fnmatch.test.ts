// Shell-style patterns as the permission lists and tool filters use them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fnmatch } from '../../src/core/fnmatch.js';

test('fnmatch: * crosses / and leading dots, classes, ?', () => {
  assert.ok(fnmatch('mcp__*', 'mcp__github__create_issue'));
  assert.ok(fnmatch('web/*', 'web/fetch/x'));
  assert.ok(fnmatch('*', '.hidden'));
  assert.ok(fnmatch('local_ma?', 'local_map'));
  assert.ok(fnmatch('[lm]ap', 'map'));
  assert.ok(!fnmatch('[!lm]ap', 'map'));
  assert.ok(!fnmatch('local_map', 'local_map2'));
  assert.ok(fnmatch('a.b', 'a.b') && !fnmatch('a.b', 'axb'));
});

test('fnmatch: ] first in a class belongs to it; an unclosed [, an escaped or a regex character is itself', () => {
  assert.ok(fnmatch('[]a]x', ']x') && fnmatch('[]a]x', 'ax') && !fnmatch('[]a]x', 'bx'));
  assert.ok(fnmatch('[^a]', 'b') && !fnmatch('[^a]', 'a'));
  assert.ok(fnmatch('[a-c]', 'b') && fnmatch('[\\]', '\\') && fnmatch('[a^]', '^'));
  assert.ok(fnmatch('a[b', 'a[b') && !fnmatch('a[b', 'ab'));
  assert.ok(fnmatch('\\*', '*') && !fnmatch('\\*', 'x') && fnmatch('\\[x]', '[x]'));
  assert.ok(fnmatch('a\\', 'a\\'));
  assert.ok(fnmatch('(a|b)+$', '(a|b)+$') && !fnmatch('(a|b)+$', 'a'));
  assert.ok(fnmatch('a*b', 'a\nb') && fnmatch('a?b', 'a\nb'));
});
