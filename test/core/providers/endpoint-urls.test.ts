// Where each dialect's requests, model lists and llama.cpp props go, from a configured base URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelsUrl, propsUrl, buildUrl, providerFromStr } from '../../../src/core/providers/index.js';

test('URLs by dialect', () => {
  assert.equal(buildUrl('http://h:1/v1/', 'openai'), 'http://h:1/v1/chat/completions');
  assert.equal(buildUrl('http://h/v1', 'anthropic'), 'http://h/v1/messages');
  assert.equal(buildUrl('http://h/v1', 'openai-responses'), 'http://h/v1/responses');
  assert.equal(modelsUrl('http://h/v1/chat/completions'), 'http://h/v1/models');
  assert.equal(modelsUrl('http://h/v1/messages'), 'http://h/v1/models');
  assert.equal(propsUrl('http://h:8080/v1/chat/completions'), 'http://h:8080/props');
  assert.equal(providerFromStr('anthropic'), 'anthropic');
  assert.equal(providerFromStr('ollama'), 'ollama');
  assert.equal(providerFromStr('openai-responses'), 'openai-responses');
  assert.equal(providerFromStr('bogus'), 'openai');
  assert.equal(providerFromStr(undefined), 'openai');
});
