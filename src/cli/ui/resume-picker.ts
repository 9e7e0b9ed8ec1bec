// `clm -r` without an id: the saved sessions, newest first, and a question which one to resume,
// on the normal screen before the interactive screen starts (as the original asks it).

import { createInterface } from 'node:readline';
import { formatSessionList, listSessions } from '../../session/index.js';
import { CliError } from '../runtime.js';

export async function pickSession(
  io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream },
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const rows = listSessions({ env });
  if (!rows.length) throw new CliError('no saved sessions', 1);
  io.stdout.write(formatSessionList(rows));
  const rl = createInterface({ input: io.stdin, output: io.stdout, terminal: true });
  const answer = await new Promise<string | null>((resolve) => {
    rl.on('SIGINT', () => {
      rl.close();
      resolve(null);
    });
    rl.on('close', () => resolve(null));
    rl.question(`resume which session? [1-${rows.length}] `, (a) => resolve(a));
  });
  rl.close();
  if (answer === null) throw new CliError('no session chosen', 130);
  const n = Number(answer.trim());
  if (!Number.isInteger(n) || n < 1 || n > rows.length) throw new CliError('no such session', 1);
  return rows[n - 1]!.id;
}
