// Tool rounds written as text, for a server that wants back, with every tool call in the
// history, what only it produces: DeepSeek's thinking mode its reasoning_content ("The
// `reasoning_content` in the thinking mode must be passed back to the API."), Gemini 3 its thought
// signatures. A history can hold rounds it did not make — another model's before a provider
// switch, a session restored from another model, or from a version that kept nothing — and for
// those there is nothing to send back. Such servers take plain text turns without it, so when the
// server asks (turn.ts), the request goes again with each of those rounds written as text: the
// calls inside the assistant's turn, their results as a user turn (resultAsText). The history is
// not changed; only the request is. Forms are memoised per source message, so an unchanged prefix
// keeps its bytes (the per-message wire caches key on message objects).

import type { AssistantMessage, Message, UserMessage } from '../types.js';
import { memo, resultAsText } from './pairing.js';

const asText = new WeakMap<Message, AssistantMessage>();
const resultsAsText = new WeakMap<Message, { last: Message; msg: UserMessage }>();

function callsAsText(m: AssistantMessage): AssistantMessage {
  return memo(asText, m, () => {
    const calls = (m.toolCalls ?? []).map((c) => `[tool call ${c.name} ${c.args}]`).join('\n');
    return { role: 'assistant', content: m.content ? `${m.content}\n${calls}` : calls };
  });
}

/**
 * `messages` (already paired: each round's results follow its calls) with every round for which
 * `keep` is false written as text; the same array when there is none.
 */
export function foreignRoundsAsText(messages: readonly Message[], keep: (m: AssistantMessage) => boolean): readonly Message[] {
  let out: Message[] | null = null;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant' || !m.toolCalls?.length || keep(m)) {
      out?.push(m);
      continue;
    }
    out ??= messages.slice(0, i);
    out.push(callsAsText(m));
    let j = i + 1;
    while (j < messages.length && messages[j]!.role === 'tool') j++;
    if (j > i + 1) {
      const last = messages[j - 1]!;
      const r = memo(
        resultsAsText,
        m,
        () => ({
          last,
          msg: {
            role: 'user' as const,
            content: messages
              .slice(i + 1, j)
              .map(resultAsText)
              .join('\n\n'),
          },
        }),
        (c) => c.last === last,
      );
      out.push(r.msg);
    }
    i = j - 1;
  }
  return out ?? messages;
}
