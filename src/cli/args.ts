// Command-line flags of clm(1). Hand-written rather than util.parseArgs because `-r/--resume`
// takes an optional value (`-r`, `-rID`, `-r ID`, `--resume=ID`).

export type OutputFormat = 'text' | 'json' | 'stream-json';

export interface CliArgs {
  command: 'run' | 'setup' | 'help' | 'version';
  agent?: string;
  model?: string;
  provider?: string;
  url?: string;
  plugins?: string;
  oneshot?: string;
  headless: boolean;
  noStream: boolean;
  /** undefined = no -r; '' = -r without id (picker). */
  resume?: string;
  outputFormat: OutputFormat;
  allowTools?: string[];
  denyTools?: string[];
}

export class UsageError extends Error {}

export const USAGE = `usage: clm [options]
       clm setup

  -o, --oneshot PROMPT     answer one prompt and exit (headless)
  -H, --headless           plain line-based REPL even on a terminal
  -a, --agent NAME         agent profile from config.lua or agents/NAME.lua
  -m, --model SPEC         provider/model-id from config.lua, or a bare model id
      --provider NAME      take the connection from providers[NAME]
  -u, --url BASE           endpoint base URL (default http://127.0.0.1:8081/v1)
  -p, --plugins DIR        Lua plugin directory (default ~/.config/clm/plugins)
  -S, --no-stream          non-streaming requests
  -r, --resume [ID]        resume a saved session (no ID: pick from a list)
      --output-format FMT  one-shot output: text (default), json, stream-json
      --allow-tools LIST   headless: only run tools matching these patterns (comma-separated, fnmatch)
      --deny-tools LIST    headless: never run tools matching these patterns
  -V, --version            print the version
  -h, --help               this help

environment: CLM_API_KEY (API key, overrides config), CLM_DEBUG_LOG (debug log file),
             XDG_CONFIG_HOME, XDG_STATE_HOME, HOME, SHELL
exit status: 0 success, 1 the turn failed, 2 usage or configuration error, 130 interrupted
`;

const WITH_VALUE: Record<string, keyof CliArgs> = {
  '-a': 'agent', '--agent': 'agent',
  '-m': 'model', '--model': 'model',
  '--provider': 'provider',
  '-u': 'url', '--url': 'url',
  '-p': 'plugins', '--plugins': 'plugins',
  '-o': 'oneshot', '--oneshot': 'oneshot',
  '--output-format': 'outputFormat',
  '--allow-tools': 'allowTools',
  '--deny-tools': 'denyTools',
};

function patterns(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

export function parseArgs(argv: readonly string[]): CliArgs {
  const a: CliArgs = { command: 'run', headless: false, noStream: false, outputFormat: 'text' };
  let i = 0;
  if (argv[0] === 'setup') { a.command = 'setup'; i = 1; }
  const set = (key: keyof CliArgs, v: string, flag: string) => {
    if (key === 'outputFormat') {
      if (v !== 'text' && v !== 'json' && v !== 'stream-json') throw new UsageError(`${flag}: unknown format '${v}' (text, json, stream-json)`);
      a.outputFormat = v;
    } else if (key === 'allowTools' || key === 'denyTools') a[key] = patterns(v);
    else (a as unknown as Record<string, unknown>)[key] = v;
  };
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') { a.command = 'help'; continue; }
    if (arg === '-V' || arg === '--version') { a.command = 'version'; continue; }
    if (arg === '-H' || arg === '--headless') { a.headless = true; continue; }
    if (arg === '-S' || arg === '--no-stream') { a.noStream = true; continue; }
    if (arg === '-r' || arg === '--resume') {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('-')) { a.resume = next; i++; } else a.resume = '';
      continue;
    }
    if (arg.startsWith('--resume=')) { a.resume = arg.slice(9); continue; }
    if (/^-r./.test(arg)) { a.resume = arg.slice(2); continue; }
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0 && WITH_VALUE[arg.slice(0, eq)]) { set(WITH_VALUE[arg.slice(0, eq)]!, arg.slice(eq + 1), arg.slice(0, eq)); continue; }
    const key = WITH_VALUE[arg];
    if (key) {
      const v = argv[i + 1];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      set(key, v, arg);
      i++;
      continue;
    }
    // Short option with its value attached: -oPROMPT, -mMODEL.
    if (/^-[amupo]./.test(arg)) { set(WITH_VALUE[arg.slice(0, 2)]!, arg.slice(2), arg.slice(0, 2)); continue; }
    if (arg === 'setup') throw new UsageError("'setup' must be the first argument");
    throw new UsageError(arg.startsWith('-') ? `unknown option ${arg}` : `unexpected argument '${arg}'`);
  }
  if (a.command === 'setup' && (a.oneshot !== undefined || a.resume !== undefined)) throw new UsageError('setup takes no other options');
  return a;
}
