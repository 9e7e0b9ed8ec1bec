// The transport the MCP client is given: the server's own, except that tools/call results reach
// the SDK with every content part it would refuse turned into text describing it
// (withKnownParts). The SDK validates a result whole, so one part of a type it does not know
// would otherwise fail the call with a page of schema errors, losing the parts it does know.

import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { withKnownParts } from './content.js';

type Id = string | number;

export function withReadableCallResults(transport: Transport): Transport {
  /** Ids of tools/call requests sent and not yet answered (or cancelled). */
  const calls = new Set<Id>();
  let handler: Transport['onmessage'];
  const track = (m: JSONRPCMessage) => {
    const r = m as { id?: Id; method?: string; params?: { requestId?: Id } };
    if (r.method === 'tools/call' && r.id !== undefined) calls.add(r.id);
    else if (r.method === 'notifications/cancelled' && r.params?.requestId !== undefined) calls.delete(r.params.requestId);
  };
  const readable = (m: JSONRPCMessage): JSONRPCMessage => {
    const r = m as { id?: Id; result?: unknown };
    if (r.id === undefined || !calls.delete(r.id) || r.result === undefined) return m;
    const result = withKnownParts(r.result);
    return result === r.result ? m : ({ ...m, result } as JSONRPCMessage);
  };
  // A proxy, so every other member (sessionId, setProtocolVersion, …) is the transport's own.
  return new Proxy(transport, {
    get(target, key) {
      if (key === 'onmessage') return handler;
      if (key === 'send')
        return (m: JSONRPCMessage, o?: Parameters<Transport['send']>[1]) => {
          track(m);
          return target.send(m, o);
        };
      const v: unknown = Reflect.get(target, key);
      return typeof v === 'function' ? v.bind(target) : v;
    },
    set(target, key, value) {
      if (key !== 'onmessage') return Reflect.set(target, key, value);
      handler = value as Transport['onmessage'];
      target.onmessage = handler && ((m, extra) => handler?.(readable(m), extra));
      return true;
    },
  });
}
