// `clm -r` without an id: the saved sessions, last used first, and a question which one to
// resume, asked again until the answer is one of them (as the original asks it, on the normal
// screen: before the interactive screen starts, or in the line REPL).

import { formatSessionList, listSessions, type SessionListRow } from '../session/index.js';
import { CliError } from './cli-error.js';
import { lazyBuiltin } from '../host/lazy-builtin.js';

const readline = lazyBuiltin<typeof import('node:readline')>('node:readline');

/**
 * The list, then the question until it is answered with a row's number; `ask` resolves null
 * when no answer can come (Ctrl-C, the end of the input): that chooses nothing.
 */
export async function chooseSession(
  rows: readonly SessionListRow[],
  write: (text: string) => void,
  ask: (question: string) => Promise<string | null>,
  nothingChosenStatus: number,
): Promise<string> {
  if (!rows.length) throw new CliError('no saved sessions', 1);
  write(formatSessionList(rows));
  for (;;) {
    const answer = await ask(`resume which session? [1-${rows.length}] `);
    if (answer === null) throw new CliError('no session chosen', nothingChosenStatus);
    const a = answer.trim();
    const n = /^\d+$/.test(a) ? Number(a) : 0;
    if (n >= 1 && n <= rows.length) return rows[n - 1]!.id;
    const hint = `answer a number from 1 to ${rows.length}`;
    write(a ? `no session ${a}: ${hint}\n` : `${hint}\n`);
  }
}

export async function pickSession(
  io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream },
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const rl = readline().createInterface({ input: io.stdin, output: io.stdout, terminal: true });
  let ended = false;
  rl.on('close', () => {
    ended = true;
  });
  rl.on('SIGINT', () => rl.close());
  const ask = (q: string) =>
    new Promise<string | null>((resolve) => {
      if (ended) return resolve(null);
      const stop = () => resolve(null);
      rl.once('close', stop);
      rl.question(q, (a) => {
        rl.off('close', stop);
        resolve(a);
      });
    });
  try {
    return await chooseSession(listSessions({ env }), (t) => io.stdout.write(t), ask, 130);
  } finally {
    rl.close();
  }
}
