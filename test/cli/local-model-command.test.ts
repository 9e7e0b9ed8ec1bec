// `/model` on a run that found its local server: every local server's models, the loaded ones
// marked, over the real runtime (the one that found the server) and fake servers on loopback.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../fixtures/run-cli.js';
import { runtimeSuite } from '../fixtures/command-context.js';
import { asOllama, placesEnv } from '../fixtures/local-servers.js';
import { runCommand } from '../../src/cli/ui/commands.js';

const s = runtimeSuite();

test('/model lists the models of every local server, the loaded ones marked', async () => {
  asOllama(s.mock, { models: ['qwen3:8b', 'llama3.2:3b'], running: { 'qwen3:8b': 8192 } });
  const { rt, ctx, printed, events } = await s.start([], { env: { CLM_LOCAL_SERVERS: placesEnv(['ollama', s.mock]) } });
  assert.equal(rt.agent.model, 'qwen3:8b');
  assert.equal(rt.agent.baseUrl, `${s.mock.base}/chat/completions`);
  assert.equal(rt.agent.ctxMax, 8192);
  assert.ok(events.some((e) => e.type === 'notice' && e.text.startsWith('using Ollama at ')));
  await runCommand('/model', ctx);
  await waitFor(() => printed.at(-1)!.text.startsWith('local servers:'), 'the local list');
  assert.equal(printed.at(-1)!.text, `local servers:\nOllama at ${s.mock.url.slice(7)}\n  qwen3:8b  (loaded)\n  llama3.2:3b`);
});

test('/model on a run with -u lists that server alone', async () => {
  s.mock.onGet('/v1/models', { body: { data: [{ id: 'live-1' }] } });
  const { rt, ctx, printed } = await s.start(['-u', s.mock.base], { env: { CLM_LOCAL_SERVERS: placesEnv(['ollama', s.mock]) } });
  assert.equal(rt.localServers(), null);
  await runCommand('/model', ctx);
  await waitFor(() => printed.at(-1)!.text.startsWith('from server:'), 'the live list');
});
