// tools/call results → text: every item kept, non-text summarised.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callResultToText, contentItemToText, withKnownParts } from '../../src/mcp/content.js';

test('text items are joined with newlines; others are summarised', () => {
  assert.equal(
    callResultToText({
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    }),
    'a\nb',
  );
  assert.equal(contentItemToText({ type: 'image', data: 'AAECAw==', mimeType: 'image/png' }), '[image: image/png, 4 bytes]');
  assert.equal(contentItemToText({ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }), '[audio: audio/wav, 3 bytes]');
  assert.equal(contentItemToText({ type: 'resource', resource: { uri: 'file:///a', text: 'body' } }), '[resource: file:///a]\nbody');
  assert.equal(
    contentItemToText({ type: 'resource', resource: { uri: 'file:///b', mimeType: 'application/zip', blob: 'AAE=' } }),
    '[resource: file:///b, application/zip, 2 bytes]',
  );
  assert.equal(contentItemToText({ type: 'resource_link', uri: 'file:///c', name: 'c file' }), '[resource link: file:///c (c file)]');
  assert.equal(contentItemToText({ type: 'hologram' }), '[hologram content]');
  assert.equal(contentItemToText(42), '[unknown content]');
});

test('no content: structuredContent as JSON, else empty', () => {
  assert.equal(callResultToText({ content: [], structuredContent: { sum: 3 } }), '{"sum":3}');
  assert.equal(callResultToText({ content: [] }), '');
  assert.equal(callResultToText(null), '');
});

test('withKnownParts: a result the schema accepts is the same object; parts it would refuse become text describing them', () => {
  const good = {
    content: [
      { type: 'text', text: 'a' },
      { type: 'resource_link', uri: 'file:///x', name: 'x' },
    ],
  };
  assert.equal(withKnownParts(good), good);
  assert.equal(withKnownParts(null), null);
  assert.deepEqual(
    withKnownParts({ content: [{ type: 'image', mimeType: 'image/png' }, { type: 'clip', data: 'A'.repeat(4 << 20) }, 7], isError: true }),
    {
      content: [
        { type: 'text', text: '[unsupported content: image, image/png]' },
        { type: 'text', text: '[unsupported content: clip, 3 MiB]' },
        { type: 'text', text: '[unsupported content: number]' },
      ],
      isError: true,
    },
  );
});
