// The slash commands beyond the core ones of commands.ts, one family per file: each family lists
// its commands and runs them through the CommandContext. /help names them on its `more:` line and
// `/help NAME` describes one; TAB completes their names (and their arguments where a family says).

import type { CommandFamily, CommandInfo } from './command-context.js';
import { contextCommands } from './context-commands.js';
import { sessionCommands } from './session-commands.js';
import { toolCommands } from './tool-commands.js';

export const FAMILIES: readonly CommandFamily[] = [contextCommands, sessionCommands, toolCommands];

/** The family that has `cmd`. */
export function familyOf(cmd: CommandInfo): CommandFamily | undefined {
  return FAMILIES.find((f) => f.commands.includes(cmd));
}
