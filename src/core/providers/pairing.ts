// Tool-call/result pairing, shared by every wire dialect. All three APIs reject (400) a history
// where an assistant tool call is not answered by a result before the conversation moves on, or
// a result answers no call — both happen after restoreHistory of a session cut by a crash, or a
// result arriving after the user spoke again. The repair, on the canonical history:
// - results of a block (the tool messages after an assistant message with calls) follow it in
//   their arrival order, each answering the first unanswered call with its id;
// - a call left unanswered gets a stand-in result (MISSING_RESULT), placed after the real ones;
// - a result that answers no call becomes user text, after the block's results;
// - call ids are made valid and unique for the dialect (results follow their call's new id).
// A well-paired history — every normal agent history — is returned as the same array with the
// same message objects (one cheap pass), so per-message wire caches keep working; repaired
// messages are memoised per source object, so even a broken history re-serialises little.
// Everything derives from the messages before it, so an unchanged prefix keeps its bytes.

import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from '../types.js';

/** The stand-in result of a call the history never answered (e.g. a turn cut by a crash). */
export const MISSING_RESULT = '[no result: the tool call was interrupted]';

export interface PairingPolicy {
  /** The dialect's form of a call id ('' ⇒ `fallbackId`), e.g. a restricted character set. */
  wireId(id: string): string;
  /** Base id for calls whose id is empty (or maps to ''). */
  readonly fallbackId: string;
  /** Ids must be unique in the whole request (Anthropic, Responses), not just within one message. */
  readonly uniqueInRequest: boolean;
  /** Longest id the dialect accepts (OpenAI chat: 40); `wireId` must already respect it. */
  readonly maxLength?: number;
}

const standIns = new WeakSet<Message>();
/** Whether `m` is a stand-in made by the repair (Anthropic marks it `is_error`). */
export function isStandIn(m: Message): boolean {
  return standIns.has(m);
}

/** `[tool result from <tool>]` + output: how a result that answers no call is shown to the model. */
export function resultAsText(m: Message): string {
  return `[tool result${m.toolName ? ` from ${m.toolName}` : ''}]\n${m.content ? m.content : '(no output)'}`;
}

/** One pass: does the history need repair under this policy? */
export function needsRepair(messages: readonly Message[], policy: PairingPolicy): boolean {
  const seen = policy.uniqueInRequest ? new Set<string>() : null;
  let open: Set<string> | null = null; // ids of the current block still unanswered
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!open?.delete(m.toolCallId ?? '')) return true;
      continue;
    }
    if (open && open.size > 0) return true;
    open = null;
    if (m.role !== 'assistant' || !m.toolCalls?.length) continue;
    open = new Set();
    for (const c of m.toolCalls) {
      if (c.id === '' || policy.wireId(c.id) !== c.id || open.has(c.id)) return true;
      if (seen) {
        if (seen.has(c.id)) return true;
        seen.add(c.id);
      }
      open.add(c.id);
    }
  }
  return open !== null && open.size > 0;
}

/** The history as the dialect must see it: `messages` itself when already well paired. */
export function pairToolCalls(messages: readonly Message[], policy: PairingPolicy): readonly Message[] {
  return needsRepair(messages, policy) ? repairPairing(messages, policy) : messages;
}

interface Pending {
  call: ToolCall;
  wire: string;
  answered: boolean;
}

// Derived messages, memoised per source object (checked against the id they were made for).
const renamedCalls = new WeakMap<Message, Message>();
const renamedResults = new WeakMap<Message, Message>();
const standInFor = new WeakMap<ToolCall, Message>();
const orphanText = new WeakMap<Message, Message>();

/** What `cache` holds for `key` when it `fits`, else a new one from `make` (then held). */
export function memo<K extends object, V>(cache: WeakMap<K, V>, key: K, make: () => V, fits: (v: V) => boolean = () => true): V {
  let v = cache.get(key);
  if (v === undefined || !fits(v)) cache.set(key, (v = make()));
  return v;
}

function renamedAssistant(m: AssistantMessage, wires: readonly string[]): Message {
  return memo(
    renamedCalls,
    m,
    () => ({ ...m, toolCalls: m.toolCalls!.map((tc, i) => ({ ...tc, id: wires[i]! })) }),
    (c) => c.toolCalls!.every((tc, i) => tc.id === wires[i]),
  );
}

function answer(m: ToolResultMessage, wire: string): Message {
  return m.toolCallId === wire
    ? m
    : memo(
        renamedResults,
        m,
        () => ({ ...m, toolCallId: wire }),
        (c) => c.toolCallId === wire,
      );
}

function standIn(p: Pending): Message {
  return memo(
    standInFor,
    p.call,
    () => {
      const r: Message = { role: 'tool', content: MISSING_RESULT, toolCallId: p.wire, toolName: p.call.name };
      standIns.add(r);
      return r;
    },
    (c) => c.toolCallId === p.wire,
  );
}

function asText(m: Message): Message {
  return memo(orphanText, m, () => ({ role: 'user', content: resultAsText(m) }));
}

/** The slow path of pairToolCalls (exported for tests): always rebuilds the list. */
export function repairPairing(messages: readonly Message[], policy: PairingPolicy): Message[] {
  const out: Message[] = [];
  const used = new Set<string>();
  let callNo = 0;
  let pending: Pending[] = [];
  let results: Message[] = [];
  let orphans: Message[] = [];
  let inBlock = false;

  // Derived from the call's position only, so an unchanged prefix keeps its ids.
  const wireId = (id: string): string => {
    callNo++;
    const base = policy.wireId(id) || policy.fallbackId;
    let w = base;
    for (let n = callNo; used.has(w); n++) {
      const suffix = `_${n}`;
      w =
        policy.maxLength && base.length + suffix.length > policy.maxLength
          ? base.slice(0, policy.maxLength - suffix.length) + suffix
          : base + suffix;
    }
    used.add(w);
    return w;
  };
  const close = () => {
    out.push(...results);
    for (const p of pending) if (!p.answered) out.push(standIn(p));
    out.push(...orphans);
    pending = [];
    results = [];
    orphans = [];
    inBlock = false;
  };

  for (const m of messages) {
    if (m.role === 'tool') {
      const p = pending.find((c) => !c.answered && c.call.id === (m.toolCallId ?? ''));
      if (p) {
        p.answered = true;
        results.push(answer(m, p.wire));
      } else if (inBlock) {
        orphans.push(asText(m));
      } else {
        out.push(asText(m));
      }
      continue;
    }
    close();
    if (m.role !== 'assistant' || !m.toolCalls?.length) {
      out.push(m);
      continue;
    }
    if (!policy.uniqueInRequest) used.clear();
    pending = m.toolCalls.map((call) => ({ call, wire: wireId(call.id), answered: false }));
    const wires = pending.map((p) => p.wire);
    out.push(m.toolCalls.every((c, i) => c.id === wires[i]) ? m : renamedAssistant(m, wires));
    inBlock = true;
  }
  close();
  return out;
}
