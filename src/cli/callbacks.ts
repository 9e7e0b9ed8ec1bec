// Agent callbacks → RunEvents (plus the run's tally), shared by the headless modes.

import type { AgentCallbacks } from '../core/types.js';
import type { RunEvents } from './events.js';
import type { Tally } from './render.js';
import { turnError } from './turn-error.js';

export function eventCallbacks(ev: RunEvents, tally: Tally, onTurnDone: (status: number) => void, lastError: () => string): AgentCallbacks {
  return {
    onAssistantText: (t) => { tally.text += t; ev.text(t); },
    onReasoning: (t) => { if (t) ev.reasoning(t); },
    onToolBegin: (n, a, id) => { tally.begin(n, a, id); ev.toolBegin(n, a, id); },
    onToolResult: (n, c, o, id) => { tally.result(id, c, o); ev.toolResult(n, c, o, id); },
    onToolBatch: (d, t) => ev.toolBatch(d, t),
    onUsage: (u) => { tally.addUsage(u); ev.usage(u); },
    onFinishReason: (r) => ev.finish(r),
    onState: (s) => ev.state(s),
    onNotice: (t) => ev.notice(t),
    onTurnDone: (s) => { ev.turnDone(s, turnError(s, lastError())); onTurnDone(s); },
  };
}
