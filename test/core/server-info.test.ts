// The llama.cpp /props and OpenAI-style /models replies read into what the agent needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseProps, parseModelsList } from '../../src/core/server-info.js';

test('parse /props (test_parse_props)', () => {
  const p = (n: unknown, slots?: number, build = true) =>
    JSON.stringify({
      ...(build ? { build_info: 'b1' } : {}),
      default_generation_settings: { n_ctx: n },
      ...(slots ? { total_slots: slots } : {}),
    });
  assert.equal(parseProps(p(262144, 1)), 262144);
  assert.equal(parseProps(p(262144, 4)), 65536);
  assert.equal(parseProps(p(262144, 1, false)), null);
  assert.equal(parseProps(JSON.stringify({ build_info: 'x' })), null);
  assert.equal(parseProps('garbage'), null);
  assert.equal(parseProps(null), null);
  assert.equal(parseProps(p(0)), null);
});

test('parse models list (test_parse_models_list)', () => {
  assert.deepEqual(parseModelsList('{"data":[{"id":"a"},{"x":1},{"id":5},{"id":"b"}]}'), ['a', 'b']);
  assert.equal(parseModelsList('{"data":[]}'), null);
  assert.equal(parseModelsList('{}'), null);
  assert.equal(parseModelsList('{"data":{}}'), null);
  assert.equal(parseModelsList('garbage'), null);
  assert.equal(parseModelsList(null), null);
});
