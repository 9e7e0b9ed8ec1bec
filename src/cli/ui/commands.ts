// The interactive UI's slash commands. Each acts through the CommandContext (the screen) and the
// runtime behind it, and says what it did in the transcript with the original's messages.

import type { CommandContext, CommandInfo } from './command-context.js';
import { FAMILIES, familyOf } from './command-families.js';
import { diffCommand, rewindCommand, undoCommand } from './checkpoint-commands.js';
import { liveModels } from './live-models.js';
import { modelsText } from '../models-text.js';
import {
  agentNames,
  BUSY,
  currentSpec,
  modelSpecs,
  providerNames,
  switchAgent,
  switchModel,
  switchProvider,
  SwitchRefused,
} from './switching.js';
import { maskSecrets } from '../../host/redact.js';
import { readPromptCommand } from '../prompt-commands.js';

// /help keeps to 16 lines of at most 60 columns, so that with the status bar and the input box
// it fits a 20-row screen of 70 columns; the keys are on `/help keys`.
export const COMMANDS: readonly CommandInfo[] = [
  { name: 'help', aliases: ['h', '?'], args: '[keys|NAME]', help: 'this list; the keys; one command' },
  { name: 'clear', aliases: ['cls'], help: 'forget the conversation, new session' },
  { name: 'agent', aliases: ['a'], args: '<name>', help: 'switch profile; conversation goes on' },
  { name: 'model', aliases: [], args: '[spec]', help: 'list models, or switch' },
  { name: 'provider', aliases: [], args: '[name]', help: 'list providers, or switch' },
  { name: 'reasoning', aliases: ['think'], args: '[on|off]', help: 'show or hide reasoning (^R)' },
  { name: 'output', aliases: [], args: '[full|short]', help: 'tool output whole or short (^O)' },
  { name: 'compact', aliases: [], help: 'fold the conversation into a summary' },
  { name: 'undo', aliases: [], help: 'take turns back, or see their diff' },
  { name: 'rewind', aliases: [], args: '[N]', help: '' },
  { name: 'diff', aliases: [], args: '[N]', help: '' },
  { name: 'quit', aliases: ['exit', 'q'], help: 'leave clm (also bare quit or exit)' },
];

// `/help keys`: short enough for 80 columns.
const KEYS: readonly (readonly [string, string])[] = [
  ['Enter', 'send (while a turn runs: queued for after it)'],
  ['Shift/Alt+Enter', 'new line'],
  ['Esc', 'cancel the running turn, else clear the input'],
  ['Ctrl-C', 'cancel the turn; quit when idle with an empty input'],
  ['^O', 'tool output in full / collapsed'],
  ['^R', 'show / hide reasoning'],
  ['^L', 'redraw the screen'],
  ['PgUp, PgDn, End', 'scroll (End on an empty input: to the end)'],
  ['^S, Home', 'search the transcript (n, N move); Home: to the top'],
  ['Up, Down', 'prompt history'],
  ['Alt+Up', 'take the last queued prompt back to edit'],
  ['TAB', 'complete commands, names, models, paths, :emoji:'],
  ['y, s, a, n, d', 'answer a permission question'],
];

/** The core commands, then every family's (command-families.ts). */
export const ALL_COMMANDS: readonly CommandInfo[] = [...COMMANDS, ...FAMILIES.flatMap((f) => f.commands)];

/** Every name a command answers to (`quit`, `exit`, `q` → quit). */
const BY_NAME = new Map<string, CommandInfo>(ALL_COMMANDS.flatMap((c) => [c.name, ...c.aliases].map((n) => [n, c] as const)));

/** The command `word` (with its slash) names, following aliases; undefined for none. */
export function commandNamed(word: string): CommandInfo | undefined {
  return word.startsWith('/') ? BY_NAME.get(word.slice(1)) : undefined;
}

function table(rows: readonly (readonly [string, string])[]): string[] {
  const w = Math.max(...rows.map(([l]) => l.length)) + 2;
  return rows.map(([l, h]) => `  ${l}${' '.repeat(w - l.length)}${h}`);
}

const usageOf = (c: CommandInfo) => `/${c.name}${c.args ? ` ${c.args}` : ''}`;

/** The prompt commands (`commands/*.md`) the builtin ones leave free, and those they hide. */
export function promptCommandNames(ctx: CommandContext): { usable: string[]; hidden: string[] } {
  const names = ctx.runtime.promptCommands().map((c) => c.name);
  return { usable: names.filter((n) => !BY_NAME.has(n)), hidden: names.filter((n) => BY_NAME.has(n)) };
}

function helpText(ctx: CommandContext): string {
  const aliases = ALL_COMMANDS.flatMap((c) => c.aliases.map((a) => `/${a} = /${c.name}`));
  const more = FAMILIES.flatMap((f) => f.commands.map((c) => `/${c.name}`));
  const yours = promptCommandNames(ctx);
  // A command without help of its own shares the row above (/undo /rewind /diff).
  const rows: [string, string][] = [];
  for (const c of COMMANDS) {
    if (!c.help && rows.length) rows[rows.length - 1]![0] += ` /${c.name}`;
    else rows.push([usageOf(c), c.help]);
  }
  return [
    'commands (the keys: /help keys; one command: /help NAME):',
    ...table(rows),
    ...wrapWords(`aliases: ${aliases.join(', ')}`, 60, '  '),
    ...(more.length ? wrapWords(`more: ${more.join(', ')}`, 60, '  ') : []),
    ...(yours.usable.length ? wrapWords(`yours: ${yours.usable.map((n) => `/${n}`).join(', ')}`, 60, '  ') : []),
    ...(yours.hidden.length ? wrapWords(`hidden by builtins: ${yours.hidden.map((n) => `/${n}`).join(', ')}`, 60, '  ') : []),
  ].join('\n');
}

/** `/help NAME`: one command's usage and what it does; null when there is no such command. */
function commandHelp(name: string, ctx: CommandContext): string | null {
  const bare = name.replace(/^\//, '');
  const c = BY_NAME.get(bare);
  if (!c) {
    const p = ctx.runtime.promptCommands().find((x) => x.name === bare);
    if (!p) return null;
    let what: string;
    try {
      what = readPromptCommand(p).description || '(empty)';
    } catch (e) {
      what = (e as Error).message;
    }
    return `/${p.name} [args] (${p.path}): ${what}`;
  }
  const aka = c.aliases.length ? ` (also ${c.aliases.map((a) => `/${a}`).join(', ')})` : '';
  return `${usageOf(c)}${aka}: ${c.help}`;
}

function keysText(): string {
  return ['keys:', ...table(KEYS)].join('\n');
}

/** `text` in lines of at most `width` columns, broken at ', ', the later lines indented. */
function wrapWords(text: string, width: number, indent: string): string[] {
  const out: string[] = [];
  let line = '';
  for (const part of text.split(/(?<=, )/)) {
    if (line && (line + part).trimEnd().length > width) {
      out.push(line.trimEnd());
      line = indent;
    }
    line += part;
  }
  if (line.trim()) out.push(line.trimEnd());
  return out;
}

const errorText = (ctx: CommandContext, e: unknown) => maskSecrets(e instanceof Error ? e.message : String(e), ctx.runtime.run.secrets);

/** A switch's outcome in the transcript; a successful one re-probes the connection. */
function report(ctx: CommandContext, f: () => string): void {
  try {
    ctx.print(f(), 'notice');
  } catch (e) {
    ctx.print(errorText(ctx, e), 'error');
    return;
  }
  ctx.probeConnection();
}

function toggle(arg: string, on: string, off: string, current: boolean): boolean | null {
  if (arg === '') return !current;
  if (arg === on) return true;
  if (arg === off) return false;
  return null;
}

function listModels(ctx: CommandContext): void {
  const rt = ctx.runtime;
  const cur = currentSpec(rt);
  const specs = modelSpecs(rt);
  ctx.print(
    specs.length
      ? ['available models:', ...specs.map((s) => `  ${s}${s === cur ? ' (current)' : ''}`), 'usage: /model <name>'].join('\n')
      : 'no models configured',
    'info',
  );
  const agent = rt.agent;
  // A run on a local server it found lists every local server's models.
  const local = rt.localServers();
  if (local) {
    void local.then((servers) => {
      if (rt.agent === agent)
        ctx.print(servers.length ? `local servers:\n${modelsText(servers)}` : '(no local server answers now)', 'info');
    });
    return;
  }
  liveModels(rt, undefined, { fresh: true }).then(
    (ids) => {
      if (rt.agent === agent) ctx.print(['from server:', ...ids.map((id) => `  ${id}`)].join('\n'), 'info');
    },
    (e: unknown) => {
      if (rt.agent === agent) ctx.print(`(couldn't query live models from the current provider: ${errorText(ctx, e)})`, 'info');
    },
  );
}

function listProviders(ctx: CommandContext): void {
  const names = providerNames(ctx.runtime);
  const cur = ctx.runtime.run.providerName;
  ctx.print(
    names.length
      ? ['available providers:', ...names.map((n) => `  ${n}${n === cur ? ' (current)' : ''}`), 'usage: /provider <name>'].join('\n')
      : 'no providers configured',
    'info',
  );
}

async function agentCommand(ctx: CommandContext, name: string): Promise<void> {
  if (!name) {
    const names = agentNames(ctx.runtime);
    ctx.print(['usage: /agent <name>', ...(names.length ? ['available agents:', ...names.map((n) => `  ${n}`)] : [])].join('\n'), 'error');
    return;
  }
  let notice: string;
  try {
    notice = await switchAgent(ctx.runtime, name);
  } catch (e) {
    ctx.print(e instanceof SwitchRefused ? e.message : `failed to create agent: ${errorText(ctx, e)}`, 'error');
    return;
  }
  ctx.print(notice, 'notice');
  ctx.probeConnection();
}

/** What a core command does with its argument. */
type CoreRun = (ctx: CommandContext, arg: string) => void | Promise<void>;

/** `run()` unless a turn is running (`agentToo`: or the agent is busy, a compaction say). */
function whenIdle(ctx: CommandContext, run: () => void | Promise<void>, agentToo = false): void | Promise<void> {
  if (ctx.busy() || (agentToo && ctx.runtime.agent.busy)) ctx.print(BUSY, 'error');
  else return run();
}

/** `/reasoning` and `/output`: the setting set, or toggled without an argument. */
function setting(which: 'showReasoning' | 'expandOutput', on: string, off: string, shown: [string, string]): CoreRun {
  return (ctx, arg) => {
    const v = toggle(arg, on, off, ctx.settings[which]);
    if (v === null) {
      ctx.print(`usage: /${which === 'showReasoning' ? 'reasoning' : 'output'} [${on}|${off}]`, 'error');
      return;
    }
    ctx.settings[which] = v;
    ctx.settingsChanged();
    ctx.print(v ? shown[0] : shown[1], 'notice');
  };
}

const CORE_RUNS: Record<string, CoreRun> = {
  help: (ctx, arg) => {
    const one = arg && arg !== 'keys' ? commandHelp(arg, ctx) : null;
    if (arg === 'keys') ctx.print(keysText(), 'info');
    else if (one) ctx.print(one, 'info');
    else if (arg) ctx.print('usage: /help [keys|NAME]', 'error');
    else ctx.print(helpText(ctx), 'info');
  },
  clear: (ctx) =>
    whenIdle(
      ctx,
      () => {
        ctx.runtime.agent.clearHistory();
        ctx.clearTranscript();
        const s = ctx.runtime.rotateSession();
        ctx.print(s ? `[new session ${s.id}]` : '[conversation cleared]', 'notice');
      },
      true,
    ),
  agent: (ctx, arg) => whenIdle(ctx, () => agentCommand(ctx, arg)),
  model: (ctx, arg) => (arg ? whenIdle(ctx, () => report(ctx, () => switchModel(ctx.runtime, arg))) : listModels(ctx)),
  provider: (ctx, arg) => (arg ? whenIdle(ctx, () => report(ctx, () => switchProvider(ctx.runtime, arg))) : listProviders(ctx)),
  reasoning: setting('showReasoning', 'on', 'off', ['[reasoning shown]', '[reasoning hidden]']),
  output: setting('expandOutput', 'full', 'short', ['[output: full]', '[output: short]']),
  compact: (ctx) =>
    whenIdle(
      ctx,
      () => {
        // Before the compaction's own events, which may come at once.
        ctx.print('[compacting the conversation...]', 'notice');
        try {
          ctx.runtime.agent.compact();
        } catch {
          ctx.print('compaction failed to start', 'error');
        }
      },
      true,
    ),
  undo: (ctx) => undoCommand(ctx),
  rewind: (ctx, arg) => rewindCommand(ctx, arg),
  diff: (ctx, arg) => diffCommand(ctx, arg),
  quit: (ctx) => ctx.quit(),
};

/**
 * Run `line` if it is a command: it starts with `/` (after blanks), or is bare `quit`/`exit`.
 * Returns false for a prompt. An unknown command says so and counts as handled.
 */
export async function runCommand(line: string, ctx: CommandContext): Promise<boolean> {
  const text = line.trim();
  if (text === 'quit' || text === 'exit') {
    ctx.quit();
    return true;
  }
  if (!text.startsWith('/')) return false;
  const [word = '', ...rest] = text.split(/\s+/);
  const arg = rest.join(' ');
  const cmd = commandNamed(word);
  const core = cmd && Object.hasOwn(CORE_RUNS, cmd.name) ? CORE_RUNS[cmd.name] : undefined;
  if (core) await core(ctx, arg);
  else {
    const family = cmd && familyOf(cmd);
    if (family) await family.run(cmd, arg, ctx);
    // A prompt command is a prompt: the runtime turns it into its text.
    else if (promptCommandNames(ctx).usable.includes(word.slice(1))) return false;
    else ctx.print('unknown command (try /help)', 'error');
  }
  return true;
}

/** `/permissions`: the rules in force with where each came from, this session's grants numbered; `revoke N` takes grant N back. */
