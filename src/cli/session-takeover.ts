// Resuming a session that another process holds the lock of: with a person at the terminal
// (stdin and stderr a TTY) they are asked whether to take it over, on the normal screen before
// anything else starts; without one the resume fails with openSession's message, which names
// the lock file, the pid and how to take the session over (delete the lock file).

import { unlinkSync } from 'node:fs';
import { lazyBuiltin } from '../host/lazy-builtin.js';
import { SessionError, sessionBusyMessage, sessionLockHolder } from '../session/index.js';

const readline = lazyBuiltin<typeof import('node:readline')>('node:readline');

export interface TakeOverIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Ask (on a terminal) whether to take session `id` over from a live holder; throws EBUSY when the answer is no. */
export async function takeOverIfAsked(id: string, io: TakeOverIo, env: NodeJS.ProcessEnv): Promise<void> {
  if (!io.stdin.isTTY || !io.stderr.isTTY) return;
  let holder: ReturnType<typeof sessionLockHolder>;
  try {
    holder = sessionLockHolder(id, { env });
  } catch {
    return; // a bad id or no state directory: the resume itself says so
  }
  if (!holder) return;
  const who = holder.verified
    ? `session ${id} is in use by another clm (pid ${holder.pid}). Take it over? That clm may still write to it.`
    : `session ${id} is locked by pid ${holder.pid}, which is running (this system cannot tell whether it is a clm). Take it over?`;
  const rl = readline().createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  const answer = await new Promise<string | null>((resolve) => {
    // Ctrl-C here is Ctrl-C anywhere else while starting: the program's signal handling ends the run.
    rl.on('SIGINT', () => {
      rl.close();
      process.emit('SIGINT' as never);
    });
    rl.on('close', () => resolve(null));
    rl.question(`${who} [y/N] `, (a) => resolve(a));
  });
  rl.close();
  if (!/^y(es)?$/i.test(answer?.trim() ?? '')) throw new SessionError('EBUSY', sessionBusyMessage(id, holder));
  try {
    unlinkSync(holder.lockFile);
  } catch {
    /* gone meanwhile: nothing to take over */
  }
}
