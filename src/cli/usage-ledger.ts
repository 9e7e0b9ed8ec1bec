// What the run's turns cost in tokens, as the servers reported them: per turn (every model request
// of it added up) and for the run, with the input served from the prompt cache apart; and in
// dollars where the configuration names the model's price (`price`, per million tokens).

import type { AgentEvent, TurnOrigin } from '../core/events.js';
import type { ClmConfig, Price } from '../config/types.js';

export interface TurnUsage {
  /** 1, 2, … in the order the turns started (a compaction is a turn too). */
  n: number;
  origin: TurnOrigin;
  model: string;
  /** Model requests that reported usage. */
  requests: number;
  input: number;
  /** Of `input`, served from the prompt cache. */
  cached: number;
  output: number;
  /** Dollars, or null without a price for the model. */
  cost: number | null;
}

/** The price configured for `model` on `provider`: the model's own, else the provider's. */
export function priceOf(config: ClmConfig | null, provider: string | undefined, model: string): Price | undefined {
  const p = provider && config && Object.hasOwn(config.providers, provider) ? config.providers[provider] : undefined;
  if (!p) return undefined;
  return (Object.hasOwn(p.models, model) ? p.models[model]!.price : undefined) ?? p.price;
}

/** Dollars for the tokens at `price` (per million tokens; cached input at its own price, else the input one). */
export function costOf(input: number, cached: number, output: number, price: Price): number {
  return ((input - cached) * price.input + cached * (price.cachedInput ?? price.input) + output * price.output) / 1e6;
}

export class UsageLedger {
  readonly turns: TurnUsage[] = [];
  private current: { turn: TurnUsage; price?: Price } | null = null;
  private count = 0;

  /** `now()`: the model and price of the connection in use (asked as each turn starts). */
  constructor(private readonly now: () => { model: string; price?: Price }) {}

  event(e: AgentEvent): void {
    if (e.type === 'turn_start') {
      const { model, price } = this.now();
      const turn: TurnUsage = {
        n: ++this.count,
        origin: e.origin,
        model,
        requests: 0,
        input: 0,
        cached: 0,
        output: 0,
        cost: price ? 0 : null,
      };
      this.current = { turn, price };
      this.turns.push(turn);
    } else if (e.type === 'usage' && this.current) {
      const { turn, price } = this.current;
      const u = e.usage;
      const cached = Math.min(u.cacheReadTokens ?? 0, u.promptTokens);
      turn.requests++;
      turn.input += u.promptTokens;
      turn.cached += cached;
      turn.output += u.completionTokens;
      if (price) turn.cost = (turn.cost ?? 0) + costOf(u.promptTokens, cached, u.completionTokens, price);
    } else if (e.type === 'turn_done') this.current = null;
  }

  /** The whole run: tokens, and the cost of the turns that have a price (`priced` of them). */
  totals(): { input: number; cached: number; output: number; cost: number; priced: number; reported: number } {
    const t = { input: 0, cached: 0, output: 0, cost: 0, priced: 0, reported: 0 };
    for (const u of this.turns) {
      if (!u.requests) continue;
      t.reported++;
      t.input += u.input;
      t.cached += u.cached;
      t.output += u.output;
      if (u.cost !== null) {
        t.cost += u.cost;
        t.priced++;
      }
    }
    return t;
  }
}
