// Command-line flags of clm(1). Hand-written rather than util.parseArgs because `-r/--resume`
// takes an optional value (`-r`, `-rID`, `-r ID`, `--resume=ID`) and short flags combine as
// getopt's do (`-HS`, `-So PROMPT`, `-Smqwen`).

export type OutputFormat = 'text' | 'json' | 'stream-json';

export interface CliArgs {
  command: 'run' | 'setup' | 'help' | 'version';
  agent?: string;
  model?: string;
  provider?: string;
  url?: string;
  plugins?: string;
  oneshot?: string;
  /** -f/--forever: the interactive UI submits this prompt, and again after every turn that ends ok or cancelled. */
  forever?: string;
  headless: boolean;
  /** --no-alt-screen: the interactive UI draws inline, on the normal screen. */
  noAltScreen: boolean;
  noStream: boolean;
  /** undefined = no -r; '' = -r without id (picker). */
  resume?: string;
  outputFormat: OutputFormat;
  allowTools?: string[];
  denyTools?: string[];
  /** --max-turns: tool rounds per turn (0 = unlimited). */
  maxTurns?: number;
  /** --reasoning-effort: low, medium, high, or off (no reasoning parameter). */
  reasoningEffort?: 'low' | 'medium' | 'high' | 'off';
}

export class UsageError extends Error {}

export const USAGE = `usage: clm [options]
       clm setup

  -o, --oneshot PROMPT     answer one prompt and exit (headless)
  -H, --headless           plain line-based REPL even on a terminal
  -f, --forever PROMPT     interactive UI: send PROMPT, and again after every turn that ends
      --no-alt-screen      interactive UI inline on the normal screen (keeps the terminal's
                           scrollback), not on the alternate screen
  -a, --agent NAME         agent profile from config.lua or agents/NAME.lua
  -m, --model SPEC         provider/model-id from config.lua, or a bare model id
      --provider NAME      take the connection from providers[NAME]
  -u, --url BASE           endpoint base URL (default http://127.0.0.1:8081/v1)
  -p, --plugins DIR        Lua plugin directory (default $XDG_CONFIG_HOME/clm/plugins,
                           else ~/.config/clm/plugins)
  -S, --no-stream          non-streaming requests
  -r, --resume [ID]        resume a saved session (no ID: pick from a list)
      --output-format FMT  one-shot output: text (default), json, stream-json
      --allow-tools LIST   run tools matching these patterns without asking, and no others
                           (comma-separated, fnmatch)
      --deny-tools LIST    never offer or run tools matching these patterns
      --max-turns N        at most N tool rounds per turn (default 1000, 0 = unlimited)
      --reasoning-effort LEVEL
                           how hard a reasoning model thinks: low, medium, high, or off
                           (default: reasoning_effort in config.lua, else the server's own)
  -V, --version            print the version
  -h, --help               this help

environment: CLM_API_KEY (API key, overrides config), CLM_DEBUG_LOG (debug log file),
             XDG_CONFIG_HOME, XDG_STATE_HOME, HOME, SHELL
exit status: 0 success, 1 the turn failed, 2 usage or configuration error, 130 interrupted,
             143/129 ended by SIGTERM/SIGHUP
`;

const WITH_VALUE: Record<string, keyof CliArgs> = {
  '-a': 'agent',
  '--agent': 'agent',
  '-m': 'model',
  '--model': 'model',
  '--provider': 'provider',
  '-u': 'url',
  '--url': 'url',
  '-p': 'plugins',
  '--plugins': 'plugins',
  '-o': 'oneshot',
  '--oneshot': 'oneshot',
  '-f': 'forever',
  '--forever': 'forever',
  '--output-format': 'outputFormat',
  '--allow-tools': 'allowTools',
  '--deny-tools': 'denyTools',
  '--max-turns': 'maxTurns',
  '--reasoning-effort': 'reasoningEffort',
};

const EFFORTS = ['low', 'medium', 'high', 'off'] as const;

function patterns(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Short flags without a value, as getopt lets them be combined (`-HS`, `-So PROMPT`). */
const SHORT_BOOL: Record<string, 'headless' | 'noStream' | 'help' | 'version'> = { H: 'headless', S: 'noStream', h: 'help', V: 'version' };

export function parseArgs(argv: readonly string[]): CliArgs {
  const a: CliArgs = { command: 'run', headless: false, noStream: false, noAltScreen: false, outputFormat: 'text' };
  let i = 0;
  if (argv[0] === 'setup') {
    a.command = 'setup';
    i = 1;
  }
  const set = (key: keyof CliArgs, v: string, flag: string) => {
    if (key === 'outputFormat') {
      if (v !== 'text' && v !== 'json' && v !== 'stream-json')
        throw new UsageError(`${flag}: unknown format '${v}' (text, json, stream-json)`);
      a.outputFormat = v;
    } else if (key === 'allowTools' || key === 'denyTools') a[key] = patterns(v);
    else if (key === 'maxTurns') {
      if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
        throw new UsageError(`${flag}: '${v}' is not a whole number ≥ 0 (0 = unlimited)`);
      a.maxTurns = Number(v);
    } else if (key === 'reasoningEffort') {
      const e = EFFORTS.find((x) => x === v);
      if (!e) throw new UsageError(`${flag}: unknown level '${v}' (${EFFORTS.join(', ')})`);
      a.reasoningEffort = e;
    } else (a as unknown as Record<string, unknown>)[key] = v;
  };
  const flag = (name: 'headless' | 'noStream' | 'help' | 'version') => {
    if (name === 'help') a.command = 'help';
    else if (name === 'version') a.command = 'version';
    else a[name] = true;
  };
  /** -r's optional id: attached (`-rID`), else the next argument unless it is a flag. */
  const resume = (attached: string) => {
    if (attached) {
      a.resume = attached;
      return;
    }
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('-')) {
      a.resume = next;
      i++;
    } else a.resume = '';
  };
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help') {
      flag('help');
      continue;
    }
    if (arg === '--version') {
      flag('version');
      continue;
    }
    if (arg === '--headless') {
      flag('headless');
      continue;
    }
    if (arg === '--no-stream') {
      flag('noStream');
      continue;
    }
    if (arg === '--no-alt-screen') {
      a.noAltScreen = true;
      continue;
    }
    if (arg === '--resume') {
      resume('');
      continue;
    }
    if (arg.startsWith('--resume=')) {
      a.resume = arg.slice(9);
      continue;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      const key = WITH_VALUE[name];
      if (!key) throw new UsageError(`unknown option ${name}`);
      if (eq > 0) {
        set(key, arg.slice(eq + 1), name);
        continue;
      }
      const v = argv[i + 1];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      set(key, v, arg);
      i++;
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // A cluster of short flags, getopt-style: flags without a value, then at most one that
      // takes the rest of the argument (or the next one) as its value.
      for (let j = 1; j < arg.length; j++) {
        const c = arg[j]!;
        const rest = arg.slice(j + 1);
        if (SHORT_BOOL[c]) {
          flag(SHORT_BOOL[c]!);
          continue;
        }
        if (c === 'r') {
          resume(rest);
          break;
        }
        const key = WITH_VALUE[`-${c}`];
        if (!key) throw new UsageError(arg.length > 2 ? `unknown option -${c} (in ${arg})` : `unknown option ${arg}`);
        if (rest) {
          set(key, rest, `-${c}`);
          break;
        }
        const v = argv[i + 1];
        if (v === undefined) throw new UsageError(`-${c} needs a value`);
        set(key, v, `-${c}`);
        i++;
        break;
      }
      continue;
    }
    if (arg === 'setup') throw new UsageError("'setup' must be the first argument");
    throw new UsageError(`unexpected argument '${arg}'`);
  }
  if (a.command === 'setup' && (a.oneshot !== undefined || a.resume !== undefined || a.forever !== undefined))
    throw new UsageError('setup takes no other options');
  if (a.forever !== undefined && (a.oneshot !== undefined || a.headless))
    throw new UsageError('-f/--forever needs the interactive UI (not -o or -H)');
  return a;
}
