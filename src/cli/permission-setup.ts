// The rules a run starts with, in one place: --deny-tools and --allow-tools (as rules, and
// --allow-tools also as "no other tool"), config.lua's `permissions` (the profile's merged over
// the top level's), and the rules file. A rule that cannot be read stops the run with an error
// naming its file and line.

import { configDir } from '../config/paths.js';
import { ConfigRuleError, configRules } from '../permissions/config-rules.js';
import { PermissionEngine } from '../permissions/engine.js';
import type { Rule } from '../permissions/rule.js';
import { readRulesFile, RulesFileError, rulesFilePath } from '../permissions/rules-file.js';
import type { CliArgs } from './args.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { ConfigProblem, type ResolvedRun } from './resolve-run.js';

export function rulesFileOf(env: NodeJS.ProcessEnv): string | null {
  const dir = configDir(env);
  return dir ? rulesFilePath(dir) : null;
}

function flagRules(args: CliArgs): Rule[] {
  const out: Rule[] = [];
  for (const tool of args.denyTools ?? [])
    out.push({ effect: 'deny', tool, pattern: null, source: { kind: 'flag', label: '--deny-tools' } });
  for (const tool of args.allowTools ?? [])
    out.push({ effect: 'allow', tool, pattern: null, source: { kind: 'flag', label: '--allow-tools' } });
  return out;
}

/** The rules of `run` and the flags (the rules file's are read once per run: `fileRules`). */
export function runRules(run: ResolvedRun, args: CliArgs, fileRules: Rule[]): Rule[] {
  const cfg = run.config;
  const files = cfg ? [...(cfg.profilePath && cfg.profilePath !== cfg.configPath ? [cfg.profilePath] : []), cfg.configPath] : [];
  try {
    return [...flagRules(args), ...configRules(cfg?.permissions, files), ...fileRules];
  } catch (e) {
    if (e instanceof ConfigRuleError) throw new ConfigProblem(e.message);
    throw e;
  }
}

/** The rules file's rules; a line it cannot read is a ConfigProblem naming file and line. */
export function fileRulesOf(file: string | null): Rule[] {
  if (!file) return [];
  try {
    return readRulesFile(file);
  } catch (e) {
    if (e instanceof RulesFileError) throw new ConfigProblem(e.message);
    throw e;
  }
}

export function newEngine(
  run: ResolvedRun,
  args: CliArgs,
  fileRules: Rule[],
  env: NodeJS.ProcessEnv,
  readOnlyCommands: () => boolean,
): PermissionEngine {
  return new PermissionEngine({
    rules: runRules(run, args, fileRules),
    only: args.allowTools,
    cwd: process.cwd(),
    home: env.HOME || undefined,
    readOnlyCommands,
  });
}

/**
 * Whether a shell command known to only read runs unasked: where the sandbox confines it (so that
 * what such a command is made to run by the repository, a git hook or filter, cannot reach
 * further), unless config.lua says `read_only_commands = false`.
 */
export function readOnlyCommandsRun(run: ResolvedRun, sandbox: Sandbox): boolean {
  const mode = sandbox.inForce;
  return run.config?.permissions?.readOnlyCommands !== false && (mode === 'read-only' || mode === 'workspace-write');
}
