// Waiting for one turn through the event stream: its result (run, compactAndWait) or its events
// as an async iteration (stream). Each subscribes before starting the turn, so it sees all of it.

import type { AgentEvent } from './events.js';
import type { TurnStatus } from './types.js';

export interface TurnResult {
  status: TurnStatus;
  /** Assistant text of the turn (all rounds). */
  text: string;
  error?: string;
}

type Subscribe = (fn: (e: AgentEvent) => void) => () => void;

/** Start a turn and resolve with its status and text; a refused start rejects with its error. */
export function turnResult(subscribe: Subscribe, start: () => void): Promise<TurnResult> {
  return new Promise<TurnResult>((resolve, reject) => {
    let text = '';
    const unsubscribe = subscribe((e) => {
      if (e.type === 'text') text += e.text;
      else if (e.type === 'turn_done') {
        unsubscribe();
        resolve(e.status === 0 ? { status: e.status, text } : { status: e.status, text, error: e.error });
      }
    });
    try {
      start();
    } catch (e) {
      unsubscribe();
      reject(e);
    }
  });
}

/** Start a turn and yield its events up to its turn_done. Breaking out early stops the iteration, not the turn. */
export async function* turnEvents(subscribe: Subscribe, start: () => void): AsyncGenerator<AgentEvent, void, undefined> {
  const queue: AgentEvent[] = [];
  let wake: (() => void) | null = null;
  const unsubscribe = subscribe((e) => {
    queue.push(e);
    wake?.();
  });
  try {
    start();
    for (;;) {
      while (queue.length) {
        const e = queue.shift()!;
        yield e;
        if (e.type === 'turn_done') return;
      }
      await new Promise<void>((r) => {
        wake = r;
      });
      wake = null;
    }
  } finally {
    unsubscribe();
  }
}
