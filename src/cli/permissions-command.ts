// `clm permissions list` and `clm permissions explain TOOL [COMMAND|PATH|JSON]`: the rules in
// force (config.lua with the profile of -a, the rules file, --allow-tools/--deny-tools) with
// where each came from, and how one call would be decided — each part it is cut into, the rule
// that decided it (file and line), the decision, and how it would run.

import { builtinTools } from '../builtin-tools/index.js';
import { FILE_TOOLS, SHELL_TOOLS } from '../permissions/engine.js';
import { ruleText } from '../permissions/rule.js';
import { forTerminal } from '../core/terminal-text.js';
import type { CliArgs } from './args.js';
import { UsageError } from './args.js';
import { fileRulesOf, newEngine, readOnlyCommandsRun, rulesFileOf } from './permission-setup.js';
import { sandboxedMcpServers, toolRun } from './run-sandbox.js';
import { Sandbox } from '../sandbox/sandbox.js';
import { explainText } from './permission-text.js';
import { pluginDirs } from './plugin-tools.js';
import { MCP_TOOL_PREFIX } from '../mcp/tool-names.js';
import type { Out } from './render.js';
import { resolveRun } from './resolve-run.js';

/**
 * Whether `tool` runs unasked where no rule decides (registered with no_prompt): a builtin's flag,
 * else what the run's plugins register, loaded here as a run loads them. MCP tools always ask.
 */
async function isNoPromptTool(
  tool: string,
  args: CliArgs,
  agentName: string | undefined,
  toolsConfig: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv,
): Promise<boolean> {
  const builtins = builtinTools();
  const builtin = builtins.find((t) => t.name === tool);
  if (builtin) return !!builtin.noPrompt;
  if (tool.startsWith(MCP_TOOL_PREFIX)) return false;
  const dirs = pluginDirs({ explicit: args.plugins, agentName, env, notice: () => {} });
  if (!dirs.length) return false;
  const { loadPlugins } = await import('../lua/index.js');
  const host = await loadPlugins({ dirs, reservedNames: builtins.map((t) => t.name), toolsConfig });
  try {
    return !!host.tools.find((t) => t.name === tool)?.noPrompt;
  } finally {
    await host.close();
  }
}

/** The call's arguments from the words after TOOL: a shell tool's command, a file tool's path, else JSON. */
function callArgs(tool: string, word: string | undefined): string {
  if (word === undefined) return '{}';
  if (SHELL_TOOLS.has(tool)) return JSON.stringify({ command: word });
  if (/^\s*\{/.test(word)) {
    try {
      JSON.parse(word);
      return word;
    } catch (e) {
      throw new UsageError(`permissions explain: the arguments are not JSON: ${(e as Error).message}`);
    }
  }
  if (FILE_TOOLS.has(tool)) return JSON.stringify({ path: word });
  throw new UsageError(`permissions explain: give ${tool}'s arguments as a JSON object`);
}

export async function runPermissionsCommand(args: CliArgs, env: NodeJS.ProcessEnv, stdout: Out): Promise<number> {
  const { action, words } = args.permissions!;
  const run = await resolveRun(args, env);
  const rulesFile = rulesFileOf(env);
  // How it would run: the sandbox this run would have (the profile's keys, --sandbox), checked here.
  const sandbox = new Sandbox({ settings: run.sandbox, env });
  const engine = newEngine(run, args, fileRulesOf(rulesFile), env, () => readOnlyCommandsRun(run, sandbox));
  if (action === 'list') {
    const rules = engine.rules();
    const out = rules.map((r) => `${r.effect.padEnd(5)}  ${ruleText(r)}  ${r.source.label}`);
    if (!rules.length) out.push('no rules: every tool that asks is asked, the others run');
    out.push(`rules file: ${rulesFile ?? '(none: no config directory)'}`);
    stdout.write(forTerminal(`${out.join('\n')}\n`));
    return 0;
  }
  const [tool, word] = words as [string, string | undefined];
  const callArgsText = callArgs(tool, word);
  const gated = !(await isNoPromptTool(tool, args, run.agentName, run.toolsConfig, env));
  await sandbox.check();
  const ruling = await engine.judge({ tool, args: callArgsText, gated });
  stdout.write(explainText(ruling, toolRun(sandbox, tool, sandboxedMcpServers(run.mcpServers)).text));
  return 0;
}
