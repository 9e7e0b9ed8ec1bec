// The interactive UI's slash commands. Each acts through the CommandContext (the screen) and the
// runtime behind it, and says what it did in the transcript with the original's messages.

import type { CommandContext } from './command-context.js';
import { liveModels } from './live-models.js';
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

export interface CommandInfo {
  /** Without the slash. */
  name: string;
  aliases: readonly string[];
  /** The arguments, as shown by /help (`[spec]`, `<name>`). */
  args?: string;
  help: string;
}

export const COMMANDS: readonly CommandInfo[] = [
  { name: 'help', aliases: ['h', '?'], help: 'the commands and the keys' },
  { name: 'clear', aliases: ['cls'], help: 'forget the conversation, start a new session' },
  { name: 'agent', aliases: ['a'], args: '<name>', help: 'switch profile; the conversation goes on' },
  { name: 'model', aliases: [], args: '[spec]', help: 'list models, or switch (provider/id, bare id)' },
  { name: 'provider', aliases: [], args: '[name]', help: 'list providers, or switch keeping the model' },
  { name: 'reasoning', aliases: ['think'], args: '[on|off]', help: 'show or hide reasoning (^R)' },
  { name: 'output', aliases: [], args: '[full|short]', help: 'tool output in full or collapsed (^O)' },
  { name: 'compact', aliases: [], help: 'fold the conversation into a summary' },
  { name: 'quit', aliases: ['exit', 'q'], help: 'leave clm (also bare quit or exit)' },
];

// Short enough for 80 columns.
const KEYS: readonly (readonly [string, string])[] = [
  ['Enter', 'send (while a turn runs: queued for after it)'],
  ['Shift+Enter, Alt+Enter', 'new line'],
  ['Esc', 'cancel the running turn, else clear the input'],
  ['Ctrl-C', 'cancel the turn; quit when idle with an empty input'],
  ['^O', 'tool output in full / collapsed'],
  ['^R', 'show / hide reasoning'],
  ['^L', 'redraw the screen'],
  ['PgUp, PgDn, End', 'scroll (End on an empty input: to the end)'],
  ['Up, Down', 'prompt history'],
  ['TAB', 'complete commands, names, models, paths, :emoji:'],
];

/** Every name a command answers to (`quit`, `exit`, `q` → quit). */
const BY_NAME = new Map<string, CommandInfo>(COMMANDS.flatMap((c) => [c.name, ...c.aliases].map((n) => [n, c] as const)));

/** The command `word` (with its slash) names, following aliases; undefined for none. */
export function commandNamed(word: string): CommandInfo | undefined {
  return word.startsWith('/') ? BY_NAME.get(word.slice(1)) : undefined;
}

function helpText(): string {
  const table = (rows: readonly (readonly [string, string])[]) => {
    const w = Math.max(...rows.map(([l]) => l.length)) + 2;
    return rows.map(([l, h]) => `  ${l}${' '.repeat(w - l.length)}${h}`);
  };
  const cmds = COMMANDS.map((c) => {
    const alias = c.aliases.length ? ` (${c.aliases.map((a) => `/${a}`).join(', ')})` : '';
    return [`/${c.name}${c.args ? ` ${c.args}` : ''}${alias}`, c.help] as const;
  });
  return ['commands:', ...table(cmds), 'keys:', ...table(KEYS)].join('\n');
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
  const rt = ctx.runtime;
  switch (cmd?.name) {
    case 'help':
      ctx.print(helpText(), 'info');
      break;
    case 'clear': {
      if (ctx.busy() || rt.agent.busy) {
        ctx.print(BUSY, 'error');
        break;
      }
      rt.agent.clearHistory();
      ctx.clearTranscript();
      const s = rt.rotateSession();
      ctx.print(s ? `[new session ${s.id}]` : '[conversation cleared]', 'notice');
      break;
    }
    case 'agent':
      if (ctx.busy()) {
        ctx.print(BUSY, 'error');
        break;
      }
      await agentCommand(ctx, arg);
      break;
    case 'model':
      if (!arg) {
        listModels(ctx);
        break;
      }
      if (ctx.busy()) {
        ctx.print(BUSY, 'error');
        break;
      }
      report(ctx, () => switchModel(rt, arg));
      break;
    case 'provider':
      if (!arg) {
        listProviders(ctx);
        break;
      }
      if (ctx.busy()) {
        ctx.print(BUSY, 'error');
        break;
      }
      report(ctx, () => switchProvider(rt, arg));
      break;
    case 'reasoning': {
      const v = toggle(arg, 'on', 'off', ctx.settings.showReasoning);
      if (v === null) {
        ctx.print(`usage: /${cmd.name} [on|off]`, 'error');
        break;
      }
      ctx.settings.showReasoning = v;
      ctx.settingsChanged();
      ctx.print(v ? '[reasoning shown]' : '[reasoning hidden]', 'notice');
      break;
    }
    case 'output': {
      const v = toggle(arg, 'full', 'short', ctx.settings.expandOutput);
      if (v === null) {
        ctx.print('usage: /output [full|short]', 'error');
        break;
      }
      ctx.settings.expandOutput = v;
      ctx.settingsChanged();
      ctx.print(v ? '[output: full]' : '[output: short]', 'notice');
      break;
    }
    case 'compact':
      if (ctx.busy() || rt.agent.busy) {
        ctx.print(BUSY, 'error');
        break;
      }
      // Before the compaction's own events, which may come at once.
      ctx.print('[compacting the conversation...]', 'notice');
      try {
        rt.agent.compact();
      } catch {
        ctx.print('compaction failed to start', 'error');
      }
      break;
    case 'quit':
      ctx.quit();
      break;
    default:
      ctx.print('unknown command (try /help)', 'error');
  }
  return true;
}
