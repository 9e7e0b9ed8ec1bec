// bg_exec: start a shell command and return at once; its result arrives later as a new user
// turn through inv.notify (the call that started it is long answered by then). Jobs run in their
// own process group and are stopped by stopBackgroundJobs() when the program exits.

import type { ToolDef, ToolInvocation } from '../core/types.js';
import { SANDBOX_SETUP_TRIES } from '../sandbox/backend.js';
import { NOT_SET_UP, RefusalScanner } from '../sandbox/refusal.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { argString, parseToolArgs } from './args.js';
import { CappedOutput } from './output-cap.js';
import { DEFAULT_GRACE_MS, type GroupExit, spawnShellGroup, stopGroups } from './process-group.js';
import { describeSignal } from './signal-names.js';
import { errnoText } from '../host/errno-text.js';

/** Output kept per job for the eventual message. */
export const BG_OUTPUT_CAP = 16 * 1024;

let nextJobId = 1; // process-wide: a job id names one job however many agents run
/** Jobs being stopped at exit: their end is not news for anybody. */
const silenced = new Set<number>();

export const bgExecTool: ToolDef = {
  name: 'bg_exec',
  description:
    'start a shell command running in the background and return immediately with a job id, instead of ' +
    "waiting for it to finish (use shell_exec for that). The command's real output arrives later as a " +
    "separate message tagged with the same job id, not as this call's result -- do not wait for it, " +
    'continue with other work.',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'the shell command to run in the background' },
      label: {
        type: 'string',
        description: 'optional short label to identify this job in its later result message; defaults to the command itself',
      },
    },
    required: ['command'],
  },
  invoke: (inv) => invokeBgExec(inv, null),
};

/**
 * bg_exec with its jobs run in `sandbox`. A refusal is told in the job's result; the question
 * whether to run outside the sandbox is not asked (the call was answered long before).
 */
export function sandboxedBgExec(sandbox: Sandbox): ToolDef {
  return { ...bgExecTool, invoke: (inv) => invokeBgExec(inv, sandbox) };
}

async function invokeBgExec(inv: ToolInvocation, sandbox: Sandbox | null): Promise<void> {
  const args = parseToolArgs(inv.args);
  if (!args) return inv.fail('invalid arguments');
  const command = argString(args, 'command');
  if (command === undefined) return inv.fail("missing required string argument 'command'");
  const label = argString(args, 'label') ?? command;
  const blocked = sandbox?.blocked();
  if (blocked) return inv.fail(blocked);

  const { out, scan, proc } = await startJob(command, sandbox);
  sandbox?.onRun?.(inv.id, inv.name, sandbox.inForce);
  try {
    await proc.started;
  } catch (e) {
    return inv.fail(`cannot run '${process.env.SHELL || '/bin/sh'}': ${errnoText(e)}`);
  }
  const id = nextJobId++;
  const pid = proc.pid!;
  inv.complete(`started background job ${id}: ${label} (result will arrive later as a new message, not as this call's result)`);

  const res = await proc.exited;
  if (silenced.delete(pid)) return;
  const how = res.signal ? `killed by signal ${describeSignal(res.signal)}` : `exit status ${res.code}`;
  const head = `[background job ${id} ("${label}") finished, ${how}]\n`;
  const note = sandbox && scan ? sandboxNote(sandbox, scan, res, await proc.began) : '';
  const body = out.total === 0 ? `(no output)${note}` : out.renderText(BG_OUTPUT_CAP, note);
  inv.notify(head + body);
}

/** The job's process, its output kept, and the refusals looked for in it; started again while its sandbox cannot be set up (backend.ts SANDBOX_SETUP_TRIES). */
async function startJob(command: string, sandbox: Sandbox | null) {
  for (let n = 1; ; n++) {
    const out = new CappedOutput(BG_OUTPUT_CAP);
    const scan = sandbox ? new RefusalScanner() : null;
    const proc = spawnShellGroup(command, {
      kind: 'bg',
      onOutput: (c) => {
        out.push(c);
        scan?.push(c);
      },
      confine: sandbox ? (r) => sandbox.confine(r) : undefined,
    });
    if (!sandbox || n === SANDBOX_SETUP_TRIES || (await proc.began) || (await proc.exited).spawnError) return { out, scan, proc };
  }
}

/** What the sandbox adds to a finished job's result: that it could not be set up, or the refusals. */
function sandboxNote(sandbox: Sandbox, scan: RefusalScanner, res: GroupExit, began: boolean): string {
  if (!began) return `\n${NOT_SET_UP}`;
  const refusals = res.code !== 0 || res.signal ? sandbox.refusals(scan.end()) : [];
  return refusals.length ? `\n${refusals.join('\n')}` : '';
}

/**
 * Stop every background job (and any shell_exec command still running): SIGTERM to each process
 * group now, SIGKILL after graceMs. Stopped jobs send no notification. The signals go out
 * synchronously, so calling this from an exit handler works; await it to know they are gone.
 */
export function stopBackgroundJobs(graceMs = DEFAULT_GRACE_MS): Promise<void> {
  return stopGroups(['bg', 'shell'], graceMs, (g) => {
    if (g.kind === 'bg' && g.pid !== undefined) silenced.add(g.pid);
  });
}
