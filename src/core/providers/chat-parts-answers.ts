// What an OpenAI chat server answers about the chat parts (reasoning text, extra content) that go
// back with a request, and what the agent then does before giving up on the request:
// - a refusal of one of their fields (Groq's "property 'reasoning_content' is unsupported",
//   OpenAI's "Additional properties are not allowed ('reasoning_content' was unexpected)"):
//   every part of that server is dropped from the history, none is kept from its replies for as
//   long as the connection lasts (requestTarget), and the request goes again without them. All of
//   them: a server that refuses one field it sent is not one that needs the others back.
// - a demand for them with tool calls that have none, because another model made those calls
//   (DeepSeek's thinking mode, Gemini 3): those rounds go as text from now on (foreign-rounds.ts).
// Each once per connection, and only when the request changes, or the same request would go again.

import type { Message, ReasoningTarget } from '../types.js';
import { dropReasoning, foreignness } from '../reasoning.js';
import type { PartsState } from './adapter.js';

/**
 * Whether an error names a field of the chat parts (reasoning_content, reasoning, extra_content)
 * as one the server does not take: Groq's "property 'reasoning_content' is unsupported" and
 * "reasoning is not supported with this model", OpenAI's "Additional properties are not allowed
 * ('reasoning_content' was unexpected)", Google's "Unknown name "extra_content"".
 * DeepSeek's "reasoning_content ... must be passed back" asks for the opposite and is not one,
 * nor is Gemini's "Function call is missing a thought_signature".
 */
export function refusesReasoningField(message: string): boolean {
  return (
    /\b(reasoning(_content)?|extra_content)\b/.test(message) &&
    /\b(unsupported|not supported|unexpected|not allowed|not permitted|unrecognized|unknown)\b/i.test(message)
  );
}

/**
 * Whether an error asks for chat parts back with a tool call: DeepSeek's "The `reasoning_content`
 * in the thinking mode must be passed back to the API." and "Missing `reasoning_content` field in
 * the assistant message at message index 2", Gemini's "Function call is missing a
 * thought_signature in functionCall parts".
 */
export function wantsPartsBack(message: string): boolean {
  return /reasoning_content\W[^.]*must be passed back|missing\W+reasoning_content|missing a thought_signature/i.test(message);
}

/** The adapter's `resend` for the chat dialect; `text` is the server's error message (or the body). */
export function resendChatParts(
  status: number,
  text: string,
  message: string,
  history: Message[],
  target: ReasoningTarget,
  state: PartsState,
): string | null {
  if (status !== 400) return null;
  if (!state.reasoningRefused && refusesReasoningField(text)) {
    const n = dropReasoning(history, (p) => p.dialect === 'openai' && p.origin === target.origin);
    if (!n) return null;
    state.reasoningRefused = true;
    return `the server refused the reasoning sent back (${message}); sending the request again without it (${n} dropped)`;
  }
  if (!state.foreignRoundsAsText && wantsPartsBack(text)) {
    const foreign = history.some(
      (m) => m.role === 'assistant' && m.toolCalls?.length && !m.reasoning?.some((p) => !foreignness(target, p)),
    );
    if (!foreign) return null;
    state.foreignRoundsAsText = true;
    return `the server wants reasoning back with tool calls another model made (${message}); sending those rounds as text`;
  }
  return null;
}
