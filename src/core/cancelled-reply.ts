// A reply cut short by a cancel stays in the history as what was shown of it, marked as
// cancelled: the conversation the model gets next stays well formed (no two user messages in a
// row; the calls of an unfinished reply were never shown, so none is left without a result),
// the model knows its answer was cut, and a saved session replays it as it went.

import type { AssistantMessage, Message } from './types.js';

/** The mark that ends a cancelled reply's text. */
export const CANCELLED_REPLY_MARK = '[reply cancelled by the user]';
const SEPARATOR = '\n\n';

/** The history entry of a reply cancelled after `shown` of its text was streamed. */
export function cancelledReply(shown: string): AssistantMessage {
  return { role: 'assistant', content: shown ? `${shown}${SEPARATOR}${CANCELLED_REPLY_MARK}` : CANCELLED_REPLY_MARK };
}

/** What was shown of a cancelled reply ('' for nothing), or null when the message is not one. */
export function cancelledReplyText(m: Message): string | null {
  if (m.role !== 'assistant' || m.toolCalls?.length || m.content === null) return null;
  if (m.content === CANCELLED_REPLY_MARK) return '';
  return m.content.endsWith(SEPARATOR + CANCELLED_REPLY_MARK)
    ? m.content.slice(0, -(SEPARATOR.length + CANCELLED_REPLY_MARK.length))
    : null;
}
