// Which of the agent's events the screen draws at once and which wait for the next paced frame
// (at most one every 80 ms). Pacing is what lets a reply streamed in hundreds of deltas, or a
// batch of tools that start and end within milliseconds, cost a few frames; it must not make the
// person wait for what they wait for. So two things are drawn at once: a reply's first words (the
// first streamed delta — text, reasoning, a running tool's progress — after anything else: after
// the Enter that asked for them, after a tool's result) and the turn's end. Everything else is
// paced, so a state that lasts a few milliseconds (a file read, then its result folded away)
// costs no frame of its own.

import type { AgentEvent } from '../../core/events.js';

const STREAMED: ReadonlySet<AgentEvent['type']> = new Set(['text', 'reasoning', 'tool_progress']);

export class FramePacing {
  #streaming = false;

  /** Whether the event of this type, which comes now, is drawn at once (else at the next paced frame). */
  atOnce(type: AgentEvent['type']): boolean {
    const streamed = STREAMED.has(type);
    const first = streamed && !this.#streaming;
    this.#streaming = streamed;
    return first || type === 'turn_done';
  }
}
