// The UI's commands over the session's checkpoints: /undo (the last turn back, files and
// conversation, after showing what changes and asking), /rewind (the turns with their prompts
// and how many files each changed; /rewind N goes back to before turn N: files, conversation or
// both), /diff [N] (what the last turn, or turn N, changed, as a coloured diff).

import type { Rewind } from '../../checkpoints/index.js';
import type { Answer, CommandContext } from './command-context.js';
import type { RewindOutcome } from '../run-checkpoints.js';

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function diffCommand(ctx: CommandContext, arg: string): Promise<void> {
  const n = turnArg(ctx, arg, '/diff [N]');
  if (n === null) return;
  const { changeSummary } = await import('../../checkpoints/index.js');
  try {
    const d = await ctx.runtime.checkpoints.diff(n);
    ctx.print(`turn ${d.turn.turn} ("${oneLine(d.turn.prompt)}"): ${changeSummary(d.changes)}`, 'info');
    if (d.text) ctx.print(d.text, 'diff');
  } catch (e) {
    ctx.print(message(e), 'error');
  }
}

export async function undoCommand(ctx: CommandContext): Promise<void> {
  if (ctx.busy()) {
    ctx.print('busy; try again when idle', 'error');
    return;
  }
  const turns = await ctx.runtime.checkpoints.turns();
  const last = turns.at(-1);
  if (!last) {
    ctx.print('nothing to undo: no turn yet in this session', 'error');
    return;
  }
  await rewindTo(ctx, last.turn, 'undo');
}

export async function rewindCommand(ctx: CommandContext, arg: string): Promise<void> {
  if (!arg) {
    const turns = await ctx.runtime.checkpoints.turns();
    if (!turns.length) {
      ctx.print('no turn yet in this session', 'error');
      return;
    }
    const w = String(turns.at(-1)!.turn).length;
    const rows = turns.map((t) => {
      const files = t.before ? `${t.files ?? 0} file${t.files === 1 ? '' : 's'}` : 'no files';
      return `  ${String(t.turn).padStart(w)}. ${oneLine(t.prompt)}  (${files})`;
    });
    ctx.print(['turns of this session:', ...rows, 'usage: /rewind N  (back to before turn N)'].join('\n'), 'info');
    return;
  }
  const n = turnArg(ctx, arg, '/rewind [N]');
  if (n === null || n === undefined) return;
  if (ctx.busy()) {
    ctx.print('busy; try again when idle', 'error');
    return;
  }
  await rewindTo(ctx, n, 'rewind');
}

const YES_NO: Answer[] = [
  { key: 'y', label: 'yes' },
  { key: 'n', label: 'no' },
];
/** Files changed outside clm since the turn: kept, or overwritten too. */
const YES_KEEP_OR_OVERWRITE: Answer[] = [
  { key: 'y', label: 'yes, keep the files changed outside clm' },
  { key: 'o', label: 'yes, overwrite them' },
  { key: 'n', label: 'no' },
];

/** What a rewind did: the paths put back, the conversation, the files left as they were. */
function reportRewound(ctx: CommandContext, how: 'undo' | 'rewind', n: number, out: RewindOutcome): void {
  const done = out.files ? `${out.files.done.length} path${out.files.done.length === 1 ? '' : 's'} put back` : 'files as they are';
  ctx.print(
    `[${how === 'undo' ? 'undone' : 'rewound'} to before turn ${n}: ${done}${out.conversation ? '; conversation back' : ''}]`,
    'notice',
  );
  for (const k of out.files?.kept ?? []) ctx.print(`kept as it is: ${k.path} (${k.why})`, 'info');
}

/** /rewind with files to put back: which of the two go back, or null (not answered). */
async function whatGoesBack(ctx: CommandContext, n: number): Promise<{ files: boolean; conversation: boolean } | null> {
  const what = await ctx.ask(`rewind to before turn ${n}: what goes back?`, [
    { key: 'b', label: 'files and conversation' },
    { key: 'f', label: 'files only' },
    { key: 'c', label: 'conversation only' },
  ]);
  return what ? { files: what !== 'c', conversation: what !== 'f' } : null;
}

async function rewindTo(ctx: CommandContext, n: number, how: 'undo' | 'rewind'): Promise<void> {
  const rt = ctx.runtime;
  const { describeRewind } = await import('../../checkpoints/index.js');
  let r: Rewind;
  try {
    r = await rt.checkpoints.plan(n);
  } catch (e) {
    ctx.print(message(e), 'error');
    return;
  }
  ctx.print(describeRewind(r).join('\n'), 'info');
  const what =
    how === 'rewind' && r.files && r.plan.items.length > 0
      ? await whatGoesBack(ctx, n)
      : { files: r.files && r.plan.items.length > 0, conversation: true };
  if (!what) return;
  const { files, conversation } = what;
  const parts = [files ? 'files' : '', conversation ? 'conversation' : ''].filter(Boolean).join(' and ');
  const turns = r.turns.map((t) => t.turn).join(', ');
  const ok = await ctx.ask(
    `${how} turn${r.turns.length > 1 ? 's' : ''} ${turns}? ${parts} go back to before turn ${n}`,
    files && r.plan.conflicts.length > 0 ? YES_KEEP_OR_OVERWRITE : YES_NO,
  );
  if (ok !== 'y' && ok !== 'o') {
    ctx.print('[nothing changed]', 'notice');
    return;
  }
  try {
    const out = await rt.checkpoints.rewind(r, rt.agent, { files, conversation, overwrite: ok === 'o' });
    if (out.conversation) ctx.replay(out.conversation);
    reportRewound(ctx, how, n, out);
  } catch (e) {
    ctx.print(message(e), 'error');
  }
}

/** The turn number of `arg` (undefined for none); null after saying it is not one. */
function turnArg(ctx: CommandContext, arg: string, usage: string): number | undefined | null {
  if (!arg) return undefined;
  if (!/^[1-9]\d*$/.test(arg)) {
    ctx.print(`usage: ${usage}`, 'error');
    return null;
  }
  return Number(arg);
}

const oneLine = (s: string) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 60)}…` : one;
};
