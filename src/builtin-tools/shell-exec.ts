// shell_exec: run `$SHELL -c command` in its own process group and return its merged output.
// Output over the cap is never cut silently: a marker says how much was dropped and the exit
// status stays visible. While it runs, the end of its output is reported as the call's progress;
// a cancel makes what it printed so far the result at once.

import type { CallAborted } from '../core/tool-batch.js';
import type { ToolDef, ToolInvocation } from '../core/types.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { argString, parseToolArgs } from './args.js';
import type { CappedOutput } from './output-cap.js';
import { OutputTail } from './output-tail.js';
import { spawnShellGroup } from './process-group.js';
import { runSandboxed } from './sandboxed-run.js';
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
  invoke: (inv) => invokeShellExec(inv, null),
};

/** shell_exec with its commands run in `sandbox`. */
export function sandboxedShellExec(sandbox: Sandbox): ToolDef {
  return { ...shellExecTool, invoke: (inv) => invokeShellExec(inv, sandbox) };
}

async function invokeShellExec(inv: ToolInvocation, sandbox: Sandbox | null): Promise<void> {
  const args = parseToolArgs(inv.args);
  if (!args) return inv.fail('invalid arguments');
  const command = argString(args, 'command');
  if (command === undefined) return inv.fail("missing required string argument 'command'");
  if (inv.signal.aborted) return inv.fail('cancelled');
  const blocked = sandbox?.blocked();
  if (blocked) return inv.fail(blocked);

  const cap = inv.outputCap;
  const stdin = argString(args, 'stdin');
  const tail = new OutputTail((text) => inv.progress?.(text));
  const { res, out, note } = await runSandboxed(
    inv,
    sandbox,
    cap,
    (confine, onOutput) =>
      spawnShellGroup(command, {
        kind: 'shell',
        stdin,
        onOutput(c) {
          onOutput(c);
          tail.push(c);
        },
        confine,
      }),
    // A cancel ends the turn now, so the output so far is the result now; a timeout waits for the exit.
    (sofar) => {
      tail.stop();
      // A CallAborted (the tools take only types from the core, so it is read by its shape).
      const why = inv.signal.reason as Partial<CallAborted> | undefined;
      if (why?.why === 'cancel') inv.fail(failureText(sofar, cap, `(${why.message}; terminated)`));
    },
  );
  tail.stop();

  if (res.spawnError) return inv.fail(`cannot run '${process.env.SHELL || '/bin/sh'}': ${errnoText(res.spawnError)}`);
  // Stopped by us (timeout, cancel): say why, keeping what the command printed so far.
  if (res.signal && inv.signal.aborted)
    return inv.fail(failureText(out, cap, `(${abortReason(inv)}; killed by signal ${describeSignal(res.signal)})`));
  if (res.signal) return inv.fail(failureText(out, cap, `(killed by signal ${describeSignal(res.signal)})${note}`));
  if (res.code !== 0) return inv.fail(failureText(out, cap, `(exit status ${res.code})${note}`));
  // The shell ended normally but we had been stopped (e.g. a backgrounded job got the signal).
  if (inv.signal.aborted) return inv.fail(failureText(out, cap, `(${abortReason(inv)})`));
  if (out.total === 0) return inv.complete(`(command produced no output)${note}`);
  // Bytes, not text: the core's binary detection then sees exactly what the command wrote.
  inv.complete(out.renderBytes(cap, note));
}

function abortReason(inv: ToolInvocation): string {
  const r = inv.signal.reason;
  return r instanceof Error && r.message ? r.message : 'cancelled';
}

/** "<output>\n(status)", or just "(status)" without output, within the cap. */
function failureText(out: CappedOutput, cap: number, status: string): string {
  return out.total === 0 ? status : out.renderText(cap - FAIL_WRAP_BYTES, '\n' + status);
}
