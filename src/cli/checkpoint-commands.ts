// `clm diff ID [N]` and `clm undo ID [N] [-y]`: a session's checkpoints from the shell, one-shot
// runs included. diff prints what turn N (default: the last that changed files) changed, as a
// unified diff, coloured on a terminal. undo shows what going back to before turn N (default: the
// last turn) does to the files and the conversation, then asks; `-y` answers yes (files changed
// outside clm since are then kept, and listed). Without a terminal and without -y it shows what
// it would do and changes nothing.

import { forTerminal } from '../core/terminal-text.js';
import { openSession, SessionError, sessionDir } from '../session/index.js';
import type { CheckpointArgs } from './args.js';
import { lazyBuiltin } from '../host/lazy-builtin.js';

const readline = lazyBuiltin<typeof import('node:readline')>('node:readline');

/** A refusal the command reports as `clm: <message>` with exit status 1 (as it does git's and the file system's failures). */
class Refused extends Error {}

export interface CheckpointIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

const SGR = { file: '1', hunk: '36', added: '32', removed: '31' };

export async function runCheckpointCommand(a: CheckpointArgs, io: CheckpointIo): Promise<number> {
  try {
    return await run(a, io);
  } catch (e) {
    io.stderr.write(`clm: ${forTerminal((e as Error).message)}\n`);
    return 1;
  }
}

async function run(a: CheckpointArgs, io: CheckpointIo): Promise<number> {
  const m = await import('../checkpoints/index.js');
  const stateDir = sessionDir({ env: io.env });
  const cp = m.Checkpoints.open(stateDir, a.sessionId, {}, (t) => io.stderr.write(`clm: ${forTerminal(t)}\n`));
  if (!cp) throw new Refused(`session ${a.sessionId} has no checkpoints`);
  const say = (s: string) => io.stdout.write(`${forTerminal(s)}\n`);
  if (a.command === 'diff') {
    const d = await cp.diff(a.turn);
    if (!d.changes.length) {
      say(`turn ${d.turn.turn} changed no files`);
      return 0;
    }
    const colour = !!io.stdout.isTTY && !io.env.NO_COLOR;
    const paint = (code: string) => (s: string) => (colour ? `\x1b[${code}m${s}\x1b[0m` : s);
    const text = forTerminal(d.text);
    io.stdout.write(
      colour
        ? m.colourDiff(text, { file: paint(SGR.file), hunk: paint(SGR.hunk), added: paint(SGR.added), removed: paint(SGR.removed) })
        : text,
    );
    return 0;
  }
  const turns = cp.turns;
  if (!turns.length) throw new Refused(`session ${a.sessionId} has no turn to undo`);
  const n = a.turn ?? turns.at(-1)!.turn;
  const r = await cp.plan(n);
  for (const line of m.describeRewind(r)) say(line);
  const interactive = !!io.stdin.isTTY && !a.yes;
  if (!interactive && !a.yes) {
    say('nothing changed (run with -y to undo, or on a terminal to be asked)');
    return 0;
  }
  let overwrite = false;
  if (interactive) {
    const answer = await ask(
      io,
      r.plan.conflicts.length ? 'undo? (y) yes, keeping the files changed outside clm  (o) yes, overwriting them  (n) no ' : 'undo? [y/N] ',
    );
    if (answer !== 'y' && answer !== 'o') {
      say('nothing changed');
      return 1;
    }
    overwrite = answer === 'o';
  }
  // The session file first: a session open in a running clm is left alone, files included.
  let session: ReturnType<typeof openSession> | null = null;
  try {
    session = openSession(a.sessionId, { env: io.env });
  } catch (e) {
    if (!(e instanceof SessionError && e.code === 'ENOENT')) throw new Refused((e as Error).message);
  }
  try {
    const res = await cp.apply(r, { overwrite });
    session?.appendRewind(r.from.messages);
    say(
      `undone: ${res.done.length} path${res.done.length === 1 ? '' : 's'} put back${session ? '; the conversation is back to before turn ' + n : ''}`,
    );
    for (const k of res.kept) say(`kept as it is: ${k.path} (${k.why})`);
    return 0;
  } finally {
    session?.close();
  }
}

async function ask(io: CheckpointIo, question: string): Promise<string> {
  const rl = readline().createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  try {
    return await new Promise<string>((resolve) => {
      rl.on('close', () => resolve(''));
      rl.on('SIGINT', () => resolve(''));
      rl.question(question, (a) => resolve(a.trim().toLowerCase()));
    });
  } finally {
    rl.close();
  }
}
