// `clm sandbox check`: diagnose the sandbox on this machine for the configuration in use (the
// profile of -a, --sandbox over config.lua's `sandbox`). Exit 0 when it works, 1 when it does not
// (the default mode cannot run), 2 for a configuration problem.

import { machineReport } from '../sandbox/check.js';
import { Sandbox } from '../sandbox/sandbox.js';
import type { CliArgs } from './args.js';
import { pluginDirs } from './plugin-tools.js';
import { resolveRun } from './resolve-run.js';

export async function runSandboxCheck(args: CliArgs, out: { write(s: string): unknown }, env = process.env): Promise<number> {
  const run = await resolveRun(args, env);
  const notes: string[] = [];
  const dirs = pluginDirs({ explicit: args.plugins, agentName: run.agentName, env, notice: (t) => notes.push(t) });
  const sb = new Sandbox({ settings: run.sandbox, env, pluginDirs: dirs });
  const { lines, ok } = machineReport(sb, env);
  out.write(`${[...run.warnings, ...notes].map((w) => `notice: ${w}\n`).join('')}${lines.join('\n')}\n`);
  return ok ? 0 : 1;
}
