// Command-line flags of clm(1). Hand-written rather than util.parseCommandLine because `-r/--resume`
// takes an optional value (`-r`, `-rID`, `-r ID`, `--resume=ID`) and short flags combine as
// getopt's do (`-HS`, `-So PROMPT`, `-Smqwen`).

import { SANDBOX_MODES, type SandboxMode } from '../sandbox/policy.js';

export type OutputFormat = 'text' | 'json' | 'stream-json';

export interface CliArgs {
  /** `sandbox-check`: `clm sandbox check`. */
  command: 'run' | 'setup' | 'models' | 'permissions' | 'help' | 'version' | 'diff' | 'undo' | 'sandbox-check' | 'mcp';
  /** `clm mcp login|logout NAME`: an HTTP MCP server's OAuth login. */
  mcp?: { action: 'login' | 'logout'; server: string };
  /** `clm permissions ACTION [WORDS…]`: the action and its words. */
  permissions?: { action: 'explain' | 'list'; words: string[] };
  /** `clm diff|undo ID [N]`. */
  checkpoint?: CheckpointArgs;
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
  /** --fork: with -r, go on in a copy of the session under a new id. */
  fork?: boolean;
  outputFormat: OutputFormat;
  allowTools?: string[];
  denyTools?: string[];
  /** --max-turns: tool rounds per turn (0 = unlimited). */
  maxTurns?: number;
  /** --reasoning-effort: low, medium, high, or off (no reasoning parameter). */
  reasoningEffort?: 'low' | 'medium' | 'high' | 'off';
  /** --sandbox: the sandbox mode of tool processes and file accesses (wins over config.lua's `sandbox`). */
  sandbox?: SandboxMode;
}

export class UsageError extends Error {}

/** `clm diff ID [N]`, `clm undo ID [N] [-y]` (checkpoint-commands.ts). */
export interface CheckpointArgs {
  command: 'diff' | 'undo';
  sessionId: string;
  turn?: number;
  yes: boolean;
}

function parseCheckpointArgs(argv: readonly string[]): CheckpointArgs {
  const command = argv[0] as 'diff' | 'undo';
  const rest = argv.slice(1);
  let yes = false;
  const words: string[] = [];
  for (const a of rest) {
    if (command === 'undo' && (a === '-y' || a === '--yes')) yes = true;
    else if (a.startsWith('-')) throw new UsageError(`${command}: unknown option ${a}`);
    else words.push(a);
  }
  if (!words.length) throw new UsageError(`${command} needs a session id (clm ${command} ID [TURN])`);
  if (words.length > 2) throw new UsageError(`${command}: unexpected argument '${words[2]}'`);
  let turn: number | undefined;
  if (words[1] !== undefined) {
    if (!/^[1-9]\d*$/.test(words[1])) throw new UsageError(`${command}: turn '${words[1]}' is not a number ≥ 1`);
    turn = Number(words[1]);
  }
  return { command, sessionId: words[0]!, turn, yes };
}

/** What a usage error prints on stderr: the problem, and where the options are (not all of them). */
export function usageErrorText(message: string): string {
  return `clm: ${message}\nrun 'clm --help' for the options\n`;
}

export const USAGE = `usage: clm [options]
       clm setup
       clm permissions list [-a NAME] [--allow-tools LIST] [--deny-tools LIST]
       clm permissions explain TOOL [COMMAND|PATH|JSON] [-a NAME] [--allow-tools …] [--deny-tools …]
       clm diff ID [TURN]       what a turn of session ID changed (default: its last)
       clm undo ID [TURN] [-y]  take session ID back to before TURN (default: its last):
                                files and conversation; -y answers yes
       clm models
       clm sandbox check        diagnose the sandbox on this machine (exit 1: the mode cannot run)
       clm mcp login NAME       log in to the HTTP MCP server NAME (OAuth, in the browser)
       clm mcp logout NAME      forget (and revoke) that login

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
      --fork               with -r: continue a copy under a new id (the original stays)
      --output-format FMT  one-shot output: text (default), json, stream-json
      --allow-tools LIST   run tools matching these patterns without asking, and no others
                           (comma-separated, fnmatch)
      --deny-tools LIST    never offer or run tools matching these patterns
      --max-turns N        at most N tool rounds per turn (default 1000, 0 = unlimited)
      --reasoning-effort LEVEL
                           how hard a reasoning model thinks: low, medium, high, or off
                           (default: reasoning_effort in config.lua, else the server's own)
      --sandbox MODE       how tools may touch the system: read-only, workspace-write (default
                           where the sandbox works), or full (no confinement)
  -V, --version            print the version
  -h, --help               this help

without -u or a provider, clm uses the first local server that answers: llama.cpp
(127.0.0.1:8080, 8081), Ollama (11434), LM Studio (1234), vLLM (8000); clm models lists theirs

environment: CLM_API_KEY (API key, overrides config), CLM_DEBUG_LOG (debug log file),
             CLM_LOCAL_SERVERS (where to look for local servers: KIND=HOST:PORT,...; empty: nowhere),
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
  '--sandbox': 'sandbox',
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

export function parseCommandLine(argv: readonly string[]): CliArgs {
  const a: CliArgs = { command: 'run', headless: false, noStream: false, noAltScreen: false, outputFormat: 'text' };
  if (argv[0] === 'diff' || argv[0] === 'undo') return { ...a, command: argv[0], checkpoint: parseCheckpointArgs(argv) };
  let i = 0;
  if (argv[0] === 'setup' || argv[0] === 'models') {
    a.command = argv[0];
    i = 1;
  } else if (argv[0] === 'sandbox') {
    if (argv[1] !== 'check')
      throw new UsageError(argv[1] === undefined ? "'sandbox' needs a command: check" : `unknown command 'sandbox ${argv[1]}' (check)`);
    a.command = 'sandbox-check';
    i = 2;
  }
  if (argv[0] === 'mcp') {
    const action = argv[1];
    if (action !== 'login' && action !== 'logout') throw new UsageError("mcp: expected 'login NAME' or 'logout NAME'");
    const server = argv[2];
    if (!server || server.startsWith('-')) throw new UsageError(`mcp ${action} needs the name of a server in mcp_servers`);
    a.command = 'mcp';
    a.mcp = { action, server };
    i = 3;
  }
  const words: string[] = [];
  if (argv[0] === 'permissions') {
    const action = argv[1];
    if (action !== 'explain' && action !== 'list')
      throw new UsageError("permissions: expected 'list' or 'explain TOOL [COMMAND|PATH|JSON]'");
    a.command = 'permissions';
    a.permissions = { action, words };
    i = 2;
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
    } else if (key === 'sandbox') {
      const m = SANDBOX_MODES.find((x) => x === v);
      if (!m) throw new UsageError(`${flag}: unknown mode '${v}' (${SANDBOX_MODES.join(', ')})`);
      a.sandbox = m;
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
    if (arg === '--fork') {
      a.fork = true;
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
    if (a.command === 'permissions' && (!arg.startsWith('-') || arg === '-')) {
      words.push(arg);
      continue;
    }
    throw new UsageError(`unexpected argument '${arg}'`);
  }
  if (a.permissions) {
    const { action } = a.permissions;
    if (action === 'list' && words.length) throw new UsageError('permissions list takes no words');
    if (action === 'explain' && (words.length < 1 || words.length > 2))
      throw new UsageError('permissions explain: expected TOOL and, for most tools, a COMMAND, PATH or JSON arguments');
    if (a.oneshot !== undefined || a.resume !== undefined || a.forever !== undefined || a.headless)
      throw new UsageError('permissions takes only -a, -p, --allow-tools and --deny-tools');
  }
  if (a.command === 'setup' && (a.oneshot !== undefined || a.resume !== undefined || a.forever !== undefined))
    throw new UsageError('setup takes no other options');
  if (a.command === 'mcp' && (a.oneshot !== undefined || a.resume !== undefined || a.forever !== undefined || a.headless))
    throw new UsageError(`mcp ${a.mcp!.action} takes only -a`);
  if (a.command === 'sandbox-check' && (a.oneshot !== undefined || a.resume !== undefined || a.forever !== undefined))
    throw new UsageError('sandbox check takes only -a and --sandbox');
  if (a.fork && a.resume === undefined) throw new UsageError('--fork needs -r/--resume (the session to fork)');
  if (a.forever !== undefined && (a.oneshot !== undefined || a.headless))
    throw new UsageError('-f/--forever needs the interactive UI (not -o or -H)');
  return a;
}
