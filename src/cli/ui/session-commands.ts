// `/fork` and `/usage`: the session as a whole — go on in a copy of it under a new id, and what
// its turns cost in tokens (and dollars, where the configuration names a price).

import type { CommandContext, CommandFamily } from './command-context.js';
import { BUSY } from './switching.js';
import type { TurnUsage } from '../usage-ledger.js';

/** The turns `/usage` lists one by one; the earlier ones are counted in the total only. */
const SHOWN_TURNS = 20;

const dollars = (n: number) => `$${n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2)}`;

function usageText(ctx: CommandContext): string {
  const ledger = ctx.runtime.usage;
  const reported = ledger.turns.filter((t) => t.requests > 0);
  if (!reported.length) return 'usage: no turn yet has reported its tokens (the server sends usage with each reply)';
  const t = ledger.totals();
  const priced = t.priced > 0;
  const row = (label: string, model: string, input: number, cached: number, output: number, cost: number | null) => [
    label,
    model,
    String(input),
    String(cached),
    String(output),
    ...(priced ? [cost === null ? '-' : dollars(cost)] : []),
  ];
  const what = (u: TurnUsage) => (u.origin === 'compact' || u.origin === 'autocompact' ? `${u.n} (compaction)` : String(u.n));
  const shown = reported.slice(-SHOWN_TURNS);
  const rows = [
    ['turn', 'model', 'in', 'cached', 'out', ...(priced ? ['cost'] : [])],
    ...shown.map((u) => row(what(u), u.model, u.input, u.cached, u.output, u.cost)),
    row('session', '', t.input, t.cached, t.output, priced ? t.cost : null),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  // Names left, figures right.
  const line = (r: string[]) => `  ${r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`.trimEnd();
  const notes = [
    ...(reported.length > shown.length ? [`  (${reported.length - shown.length} earlier turns are in the total only)`] : []),
    ...(priced && t.priced < t.reported ? [`  (cost: ${t.reported - t.priced} of ${t.reported} turns have no price in config.lua)`] : []),
    ...(!priced ? ['  (no price configured: set price = { input = N, output = N } per million tokens)'] : []),
  ];
  return ['usage of this run, as the server reported it (tokens; cached: of in, from the prompt cache):', ...rows.map(line), ...notes].join(
    '\n',
  );
}

export const sessionCommands: CommandFamily = {
  commands: [
    { name: 'fork', aliases: [], help: 'go on in a copy of the session' },
    { name: 'usage', aliases: ['cost'], help: 'tokens (and cost) per turn and in all' },
  ],
  run(cmd, arg, ctx) {
    if (arg) {
      ctx.print(`usage: /${cmd.name}`, 'error');
      return;
    }
    if (cmd.name === 'usage') {
      ctx.print(usageText(ctx), 'info');
      return;
    }
    if (ctx.busy()) {
      ctx.print(BUSY, 'error');
      return;
    }
    try {
      const { from, to } = ctx.runtime.forkSession();
      ctx.print(`[forked session ${from} as ${to}; ${from} stays as it was, resume it with clm -r ${from}]`, 'notice');
    } catch (e) {
      ctx.print(`cannot fork: ${(e as Error).message}`, 'error');
    }
  },
};
