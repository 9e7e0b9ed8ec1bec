// The clm_agent(3) callbacks, derived from the events in this one place. turn_start has no
// callback (the seed has none); onPermission is not an event (it needs an answer) and is called
// by the tool batch directly.

import type { AgentEvent } from './events.js';
import type { AgentCallbacks } from './types.js';

export function deliverToCallbacks(cb: AgentCallbacks, e: AgentEvent): void {
  switch (e.type) {
    case 'text':
      cb.onAssistantText?.(e.text);
      return;
    case 'reasoning':
      cb.onReasoning?.(e.text);
      return;
    case 'tool_begin':
      cb.onToolBegin?.(e.name, e.args, e.id);
      return;
    case 'tool_result':
      cb.onToolResult?.(e.name, e.content, e.outcome, e.id);
      return;
    case 'tool_progress':
      cb.onToolProgress?.(e.name, e.text, e.id);
      return;
    case 'tool_batch':
      cb.onToolBatch?.(e.completed, e.total);
      return;
    case 'usage':
      cb.onUsage?.(e.usage);
      return;
    case 'finish':
      cb.onFinishReason?.(e.reason);
      return;
    case 'state':
      cb.onState?.(e.state);
      return;
    case 'notice':
      cb.onNotice?.(e.text);
      return;
    case 'message':
      cb.onMessage?.(e.message);
      return;
    case 'compaction':
      if (e.phase === 'succeeded') cb.onCompaction?.(e.record);
      return;
    case 'connection':
      cb.onConnection?.(e.status, e.detail);
      return;
    case 'turn_done':
      cb.onTurnDone?.(e.status);
      return;
    case 'turn_start':
      return;
  }
}
