// Replays fixture SSE strings through a StreamDecoder and assembles the deltas the way the agent
// does (tool calls by index: first id/name win, args concatenated), so tests assert on outcomes.

import type { StreamDecoder, StreamDelta } from '../../../src/core/providers/adapter.js';
import type { FinishReason, Usage } from '../../../src/core/types.js';
import type { Reply } from '../../fixtures/mock-llm.js';

/** Splits raw SSE text into (event, data) pairs; multi-line data is joined with "\n". */
export function parseSse(raw: string): { event: string; data: string }[] {
  const out: { event: string; data: string }[] = [];
  for (const block of raw.split(/\n\n/)) {
    let event = '';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length) out.push({ event, data: data.join('\n') });
  }
  return out;
}

export function sseOf(reply: Reply): string {
  if (!('sse' in reply)) throw new Error('not a streamed reply');
  return reply.sse.map((e) => (typeof e === 'string' ? e : `data: ${JSON.stringify(e)}\n\n`)).join('');
}

export interface Assembled {
  text: string;
  reasoning: string;
  calls: { index: number; id: string; name: string; args: string }[];
  finishReason?: FinishReason;
  usage?: Usage;
  error?: string;
  done: boolean;
  deltas: StreamDelta[];
}

export function decode(decoder: StreamDecoder, raw: string): Assembled {
  const a: Assembled = { text: '', reasoning: '', calls: [], done: false, deltas: [] };
  const byIndex = new Map<number, Assembled['calls'][number]>();
  for (const { event, data } of parseSse(raw)) {
    const d = decoder.feed(event, data);
    if (!d) continue;
    a.deltas.push(d);
    if (d.text) a.text += d.text;
    if (d.reasoning) a.reasoning += d.reasoning;
    for (const c of d.toolCalls ?? []) {
      let acc = byIndex.get(c.index);
      if (!acc) {
        acc = { index: c.index, id: '', name: '', args: '' };
        byIndex.set(c.index, acc);
      }
      if (c.id && !acc.id) acc.id = c.id;
      if (c.name && !acc.name) acc.name = c.name;
      if (c.args) acc.args += c.args;
    }
    if (d.finishReason) a.finishReason = d.finishReason;
    if (d.usage) a.usage = d.usage;
    if (d.error) a.error = d.error;
    if (d.done) a.done = true;
  }
  a.calls = [...byIndex.values()].sort((x, y) => x.index - y.index);
  return a;
}
