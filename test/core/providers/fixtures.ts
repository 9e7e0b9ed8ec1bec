// Shared request-building fixtures of the dialect adapter tests: the read_file tool schema, the
// request options and a parsed build, and the histories several tests start from.

import type { BuildRequestOptions, ProviderAdapter, ToolSchema } from '../../../src/core/providers/adapter.js';
import type { Message } from '../../../src/core/types.js';

export const readFile: ToolSchema = {
  name: 'read_file',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  // Deliberately a different key order from `parameters`: the adapter must send these bytes.
  parametersJson: '{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}',
};

export interface RequestHelpers {
  /** Request options: `model`, read_file as the only tool, not streamed, parallel calls allowed, max 64000 tokens. */
  opts(messages: Message[], o?: Partial<BuildRequestOptions>): BuildRequestOptions;
  /** The adapter's request body for `opts(messages, o)`, parsed. */
  build(messages: Message[], o?: Partial<BuildRequestOptions>): any;
}

export function requestHelpers(adapter: ProviderAdapter, model: string): RequestHelpers {
  const opts = (messages: Message[], o: Partial<BuildRequestOptions> = {}): BuildRequestOptions => ({
    model,
    messages,
    tools: [readFile],
    stream: false,
    disableParallelToolCalls: false,
    maxTokens: 64000,
    ...o,
  });
  return { opts, build: (messages, o) => JSON.parse(adapter.buildRequest(opts(messages, o))) };
}

const results: Record<'a' | 'b', Message> = {
  a: { role: 'tool', content: 'A!', toolCallId: 'call_a', toolName: 'read_file' },
  b: { role: 'tool', content: 'B!', toolCallId: 'call_b', toolName: 'read_file' },
};

/**
 * A system prompt, a user turn, one assistant message calling read_file on "a" (call_a) and "b"
 * (call_b), then their results ("A!", "B!") in the order given (the order they completed in).
 */
export function toolRound(...order: ('a' | 'b')[]): Message[] {
  return [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'read a and b' },
    {
      role: 'assistant',
      content: 'Reading.',
      toolCalls: [
        { id: 'call_a', name: 'read_file', args: '{"path":"a"}' },
        { id: 'call_b', name: 'read_file', args: '{"path":"b"}' },
      ],
    },
    ...order.map((k) => ({ ...results[k] })),
  ];
}

/** An assistant message (no text) calling read_file with `{}` once per id. */
export function readCalls(...ids: string[]): Message {
  return { role: 'assistant', content: null, toolCalls: ids.map((id) => ({ id, name: 'read_file', args: '{}' })) };
}
