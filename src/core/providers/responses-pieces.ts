// The Responses request as UTF-8 pieces, for a host that sends a body in pieces (the Node host):
// each message's input items are encoded once, so a round of a long conversation encodes only
// what is new and the host writes the pieces as they are (serialising every item again took
// 10 ms a request at 250 tool rounds of 8 KiB results). The pieces are byte for byte what
// buildResponsesRequest writes. Its own module, as anthropic-pieces.ts, for the same reason.

import type { BuildRequestOptions } from './adapter.js';
import type { Message } from '../types.js';
import { utf8Encoder as enc } from '../utf8.js';
import { isReasoningItem, itemsOf, pairedForResponses, requestFrame } from './responses.js';

/** A message's input items as JSON (comma-separated; empty when it has none), and whether one is reasoning. */
interface Wire {
  bytes: Uint8Array;
  reasoning: boolean;
}

/** Messages are immutable: each one's items are encoded once. */
const wired = new WeakMap<Message, Wire>();

function wire(m: Message): Wire {
  let w = wired.get(m);
  if (!w) {
    const items = itemsOf(m);
    w = { bytes: enc.encode(items.map((i) => JSON.stringify(i)).join(',')), reasoning: items.some(isReasoningItem) };
    wired.set(m, w);
  }
  return w;
}

const COMMA = /* @__PURE__ */ enc.encode(',');

/** ProviderAdapter.buildRequestPieces of the Responses dialect. */
export function responsesRequestPieces(opts: BuildRequestOptions): Uint8Array[] {
  const items: Uint8Array[] = [];
  let reasoning = false;
  for (const m of pairedForResponses(opts.messages)) {
    const w = wire(m);
    if (!w.bytes.length) continue;
    if (items.length) items.push(COMMA);
    items.push(w.bytes);
    reasoning ||= w.reasoning;
  }
  const { head, tail } = requestFrame(opts, reasoning);
  return [enc.encode(head), ...items, enc.encode(tail)];
}
