// shell_exec: run `$SHELL -c command` in its own process group and return its merged output.
// Output over the cap is never cut silently: a marker says how much was dropped and the exit
// status stays visible.

import type { ToolDef, ToolInvocation } from '../core/types.js';
import { argString, parseArgs } from './args.js';
import { CappedOutput } from './output-cap.js';
import { spawnShellGroup } from './process-group.js';
import { describeSignal } from './signal-names.js';
import { errnoText } from '../host/errno-text.js';

export const SHELL_DEFAULT_TIMEOUT_MS = 30_000;
/** Room left inside the cap for the core's "[tool failed: …]" wrapping of a failure message. */
const FAIL_WRAP_BYTES = 16;

export const shellExecTool: ToolDef = {
  name: 'shell_exec',
  description:
    'execute a shell command and return its output. A job put in the background with & keeps running, but output it writes after the command returns is not collected: use bg_exec for long-running commands such as servers',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'the shell command to execute' },
      stdin: { type: 'string', description: "optional: data to write to the command's standard input" },
    },
    required: ['command'],
  },
  timeoutMs: SHELL_DEFAULT_TIMEOUT_MS,
  timeoutOverridable: true,
  outputCapOverridable: true,
  invoke: invokeShellExec,
};

async function invokeShellExec(inv: ToolInvocation): Promise<void> {
  const args = parseArgs(inv.args);
  if (!args) return inv.fail('invalid arguments');
  const command = argString(args, 'command');
  if (command === undefined) return inv.fail("missing required string argument 'command'");
  if (inv.signal.aborted) return inv.fail('cancelled');

  const cap = inv.outputCap;
  const out = new CappedOutput(cap);
  const proc = spawnShellGroup(command, { kind: 'shell', stdin: argString(args, 'stdin'), onOutput: (c) => out.push(c) });
  // Cancel and timeout both arrive as an abort: stop the whole group (SIGTERM, later SIGKILL).
  const onAbort = () => proc.stop();
  inv.signal.addEventListener('abort', onAbort, { once: true });
  const res = await proc.exited;
  inv.signal.removeEventListener('abort', onAbort);

  if (res.spawnError) return inv.fail(`cannot run '${process.env.SHELL || '/bin/sh'}': ${errnoText(res.spawnError)}`);
  // Stopped by us (timeout, cancel): say why, keeping what the command printed so far.
  if (res.signal && inv.signal.aborted)
    return inv.fail(failureText(out, cap, `(${abortReason(inv)}; killed by signal ${describeSignal(res.signal)})`));
  if (res.signal) return inv.fail(failureText(out, cap, `(killed by signal ${describeSignal(res.signal)})`));
  if (res.code !== 0) return inv.fail(failureText(out, cap, `(exit status ${res.code})`));
  // The shell ended normally but we had been stopped (e.g. a backgrounded job got the signal).
  if (inv.signal.aborted) return inv.fail(failureText(out, cap, `(${abortReason(inv)})`));
  if (out.total === 0) return inv.complete('(command produced no output)');
  // Bytes, not text: the core's binary detection then sees exactly what the command wrote.
  inv.complete(out.renderBytes(cap));
}

function abortReason(inv: ToolInvocation): string {
  const r = inv.signal.reason;
  return r instanceof Error && r.message ? r.message : 'cancelled';
}

/** "<output>\n(status)", or just "(status)" without output, within the cap. */
function failureText(out: CappedOutput, cap: number, status: string): string {
  return out.total === 0 ? status : out.renderText(cap - FAIL_WRAP_BYTES, '\n' + status);
}
