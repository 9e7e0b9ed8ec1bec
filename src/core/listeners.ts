// Listener fan-out: each event goes to the caller's callbacks first, then to every subscriber.

import { deliverToCallbacks } from './callbacks.js';
import type { AgentEvent } from './events.js';
import type { AgentCallbacks } from './types.js';

export type Subscriber = (e: AgentEvent) => void;

export class Listeners {
  readonly #subscribers = new Set<Subscriber>();

  /** The caller's callbacks (emptied by close, so nothing fires after it). */
  constructor(public callbacks: AgentCallbacks) {}

  emit(e: AgentEvent): void {
    // Subscribers added by this very event's callbacks (a run() from onTurnDone) wait for the next one.
    const subs = this.#subscribers.size ? [...this.#subscribers] : null;
    deliverToCallbacks(this.callbacks, e);
    if (subs) for (const s of subs) s(e);
  }

  subscribe(fn: Subscriber): () => void {
    this.#subscribers.add(fn);
    return () => {
      this.#subscribers.delete(fn);
    };
  }

  clear(): void {
    this.callbacks = {};
    this.#subscribers.clear();
  }
}
