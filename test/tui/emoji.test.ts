import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { completeShortcode, emojiFor, emojiReady, expandShortcodes, loadEmoji, shortcodeBefore } from '../../src/tui/emoji.js';
// @ts-expect-error -- a plain .mjs script without types
import { emojiTableSource } from '../../scripts/gen-emoji.mjs';

test('the generated table is what gemoji gives now (run scripts/gen-emoji.mjs after updating it)', () => {
  const file = readFileSync(new URL('../../src/tui/emoji-data.ts', import.meta.url), 'utf8');
  assert.equal(file, emojiTableSource());
});

test('lookups wait for the table, then expand and complete', async () => {
  assert.equal(emojiReady(), false);
  await loadEmoji();
  assert.equal(emojiFor('smile'), '😄');
  assert.equal(emojiFor('+1'), '👍');
  assert.equal(emojiFor('no_such_emoji'), undefined);
  const c = completeShortcode('thumbs');
  assert.deepEqual(
    c.map((x) => x.name),
    ['thumbsdown', 'thumbsup'],
  );
  assert.equal(completeShortcode('', 5).length, 5);
  assert.equal(completeShortcode('zzzz').length, 0);
  assert.equal(expandShortcodes('ship it :rocket: :nope: 10:30'), 'ship it 🚀 :nope: 10:30');
  const text = 'great :tada:';
  assert.deepEqual(shortcodeBefore(text, text.length - 1), { start: 6, emoji: '🎉' });
  assert.equal(shortcodeBefore('a: b', 1), null);
});
