// The Anthropic request as UTF-8 pieces, for a host that sends a body in pieces (the Node host):
// each message's blocks are made once and each block's JSON encoded once, so a round of a long
// conversation encodes only what is new, and the host writes the pieces as they are instead of
// a copy of the whole conversation (serialising every turn again took 17 ms a request at 250
// tool rounds of 8 KiB results). The pieces are byte for byte what buildAnthropicRequest writes.
// Its own module: clm's dialects (providers/index.ts) add it to the adapter, and a browser page,
// whose host takes a body whole, leaves it out.

import type { BuildRequestOptions } from './adapter.js';
import type { Message } from '../types.js';
import { utf8Encoder as enc } from '../utf8.js';
import { type Block, blocksOf, type MessageBlocks, requestFrame, toAnthropicTurns, type Turn } from './anthropic.js';

/** Each message's blocks, without tools and with: messages are immutable. */
const madeBlocks = new WeakMap<Message, [MessageBlocks?, MessageBlocks?]>();

function messageBlocks(m: Message, withTools: boolean): MessageBlocks {
  let made = madeBlocks.get(m);
  if (!made) madeBlocks.set(m, (made = []));
  return (made[+withTools] ??= blocksOf(m, withTools));
}

/** Each block's JSON as UTF-8. */
const blockWire = new WeakMap<Block, Uint8Array>();

function wire(b: Block): Uint8Array {
  let w = blockWire.get(b);
  if (!w) blockWire.set(b, (w = enc.encode(JSON.stringify(b))));
  return w;
}

/** The turns' envelopes and separators: a few strings, encoded once. */
const envelopes = new Map<string, Uint8Array>();

function piece(s: string): Uint8Array {
  let p = envelopes.get(s);
  if (!p) envelopes.set(s, (p = enc.encode(s)));
  return p;
}

/** Where a text block's JSON, `{"type":"text","text":…}`, has its text's. */
const TEXT_AT = '{"type":"text","text":'.length;

/** A turn as JSON.stringify({ role, content }) writes it: a plain single-text turn's content is a string, anything else blocks. */
function turnPieces(t: Turn, out: Uint8Array[]): void {
  const only = t.blocks.length === 1 ? t.blocks[0]! : undefined;
  const open = `{"role":"${t.role}","content":`;
  if (only?.type === 'text') {
    out.push(piece(open), wire(only).subarray(TEXT_AT, -1), piece('}'));
    return;
  }
  out.push(piece(`${open}[`));
  t.blocks.forEach((b, i) => {
    if (i) out.push(piece(','));
    out.push(wire(b));
  });
  out.push(piece(']}'));
}

/** ProviderAdapter.buildRequestPieces of the Anthropic dialect. */
export function anthropicRequestPieces(opts: BuildRequestOptions): Uint8Array[] {
  const turns = toAnthropicTurns(opts.messages, !!opts.tools?.length, messageBlocks);
  const { head, tail } = requestFrame(opts, turns);
  const out: Uint8Array[] = [enc.encode(head)];
  turns.forEach((t, i) => {
    if (i) out.push(piece(','));
    turnPieces(t, out);
  });
  out.push(enc.encode(tail));
  return out;
}
