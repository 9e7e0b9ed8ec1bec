// Tool schemas as MCP servers send them (with a top-level `$schema`) are advertised without it
// in every dialect; other schemas keep their pre-serialised bytes; the result is computed once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parametersWireJson } from '../../../src/core/providers/tool-schema.js';
import { adapterFor } from '../../../src/core/providers/index.js';
import type { ToolSchema } from '../../../src/core/providers/adapter.js';
import type { ProviderKind } from '../../../src/core/types.js';

function schema(parameters: Record<string, unknown>, parametersJson = JSON.stringify(parameters)): ToolSchema {
  return { name: 'mcp__db__query', description: 'Run a query', parameters, parametersJson };
}

const mcpParams = {
  type: 'object',
  properties: { sql: { type: 'string', description: 'uses "$schema" in text' } },
  required: ['sql'],
  additionalProperties: false,
  $schema: 'http://json-schema.org/draft-07/schema#',
};

/** The advertised parameters of the first tool, per dialect. */
function advertised(kind: ProviderKind, t: ToolSchema): any {
  const j = JSON.parse(
    adapterFor(kind).buildRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [t],
      stream: false,
      disableParallelToolCalls: false,
      maxTokens: 100,
    }),
  );
  const tool = j.tools[0];
  return kind === 'anthropic' ? tool.input_schema : kind === 'openai-responses' ? tool.parameters : tool.function.parameters;
}

test('top-level $schema is dropped, everything else kept in its order', () => {
  const t = schema(mcpParams);
  const s = parametersWireJson(t);
  assert.equal(
    s,
    '{"type":"object","properties":{"sql":{"type":"string","description":"uses \\"$schema\\" in text"}},"required":["sql"],"additionalProperties":false}',
  );
  // Computed once per ToolSchema: the very same string every request.
  assert.equal(parametersWireJson(t), s);
});

test('schemas without a top-level $schema are the pre-serialised bytes, untouched', () => {
  const ordered = schema({ type: 'object', properties: {} }, '{"properties":{},"type":"object"}');
  assert.equal(parametersWireJson(ordered), ordered.parametersJson);
  // A nested "$schema" (e.g. a property named so) is not the top-level keyword.
  const nested = schema({ type: 'object', properties: { $schema: { type: 'string' } } });
  assert.equal(parametersWireJson(nested), nested.parametersJson);
});

for (const kind of ['openai', 'ollama', 'anthropic', 'openai-responses'] as const) {
  test(`${kind}: tools are advertised without $schema`, () => {
    const p = advertised(kind, schema(mcpParams));
    assert.ok(!('$schema' in p));
    const { $schema: _, ...rest } = mcpParams;
    assert.deepEqual(p, rest);
  });
}
