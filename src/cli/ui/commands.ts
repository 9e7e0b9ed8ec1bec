// The slash commands of the screen — a minimal stand-in (quit, help, clear) with the signature
// the full set is called through; the screen calls nothing else here.

import type { CommandContext } from './command-context.js';

const HELP = [
  'commands:',
  '  /help (/h, /?)    this list of commands and keys',
  '  /clear (/cls)     forget the conversation, clear the screen, start a new session',
  '  /reasoning        show or hide the model\'s reasoning (^R)',
  '  /quit (/exit, /q) leave clm (also bare quit or exit)',
  'keys:',
  '  Enter             send the prompt (while a turn runs: queued for after it)',
  '  Shift+Enter       new line (also Alt+Enter)',
  '  Esc               cancel the running turn, else clear the input',
  '  Ctrl-C            cancel the running turn; quit when idle with an empty input',
].join('\n');

/**
 * Run `line` if it is a command: it starts with `/` (after blanks), or is bare `quit`/`exit`.
 * Returns false for a prompt. An unknown command says so and counts as handled.
 */
export async function runCommand(line: string, ctx: CommandContext): Promise<boolean> {
  const text = line.trim();
  if (text === 'quit' || text === 'exit') { ctx.quit(); return true; }
  if (!text.startsWith('/')) return false;
  const word = text.split(/\s+/)[0]!;
  switch (word) {
    case '/quit': case '/exit': case '/q':
      ctx.quit();
      break;
    case '/help': case '/h': case '/?':
      ctx.print(HELP, 'info');
      break;
    case '/clear': case '/cls': {
      if (ctx.busy()) { ctx.print('busy; try again when idle', 'error'); break; }
      ctx.runtime.agent.clearHistory();
      ctx.clearTranscript();
      const s = ctx.runtime.rotateSession();
      ctx.print(s ? `[new session ${s.id}]` : '[conversation cleared]', 'notice');
      break;
    }
    default:
      ctx.print('unknown command (try /help)', 'error');
  }
  return true;
}
