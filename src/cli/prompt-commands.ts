// Prompt commands: each `NAME.md` in the config directory's `commands/` and in the workspace's
// `.clm/commands/` is the command `/NAME args`, sent as the file's text with `$ARGUMENTS` (every
// argument) and `$1`…`$9` (one each) filled in. The directories are listed when asked (a new file
// works at once); the user's own command wins over the workspace's of the same name, and the
// interactive UI's builtin commands win over both.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { errnoText } from '../host/errno-text.js';
import { readRegularFileSync } from '../host/regular-file.js';

/** The largest command file read. */
export const MAX_COMMAND_BYTES = 64 * 1024;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export interface PromptCommand {
  name: string;
  path: string;
  scope: 'user' | 'workspace';
}

export interface PromptCommandDirs {
  /** clm's config directory, or null. */
  configDir: string | null;
  /** The workspace (its `.clm/commands/`). */
  cwd: string;
}

function listDir(dir: string, scope: PromptCommand['scope']): PromptCommand[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.md') && NAME.test(n.slice(0, -3)))
    .sort()
    .map((n) => ({ name: n.slice(0, -3), path: join(dir, n), scope }));
}

/** Every prompt command, sorted by name; the user's own before a workspace one of the same name, which it hides. */
export function promptCommands(d: PromptCommandDirs): PromptCommand[] {
  const user = d.configDir ? listDir(join(d.configDir, 'commands'), 'user') : [];
  const mine = new Set(user.map((c) => c.name));
  const workspace = listDir(join(d.cwd, '.clm', 'commands'), 'workspace').filter((c) => !mine.has(c.name));
  return [...user, ...workspace].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The file's text without its front matter, and the description it gives (else its first line). */
export function readPromptCommand(c: PromptCommand): { body: string; description: string } {
  let text: string;
  try {
    text = readRegularFileSync(c.path, MAX_COMMAND_BYTES).toString('utf8');
  } catch (e) {
    throw new Error(`/${c.name}: cannot read ${c.path} (${errnoText(e)})`);
  }
  let description = '';
  const fm = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (fm) {
    text = text.slice(fm[0].length);
    description =
      /^description:\s*(.*)$/m
        .exec(fm[1]!)?.[1]
        ?.replace(/^(["'])(.*)\1$/, '$2')
        .trim() ?? '';
  }
  if (!description)
    description =
      text
        .split('\n')
        .find((l) => l.trim())
        ?.trim() ?? '';
  return { body: text, description: description.replace(/^#+\s*/, '') };
}

/** Arguments as a shell would split them: blanks between, "…" and '…' keep blanks in one. */
export function splitArgs(args: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(args); m; m = re.exec(args)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

/** The command's text with the arguments filled in; with no placeholder in it, the arguments follow it. */
export function fillTemplate(body: string, args: string): string {
  const all = args.trim();
  const each = splitArgs(all);
  let used = false;
  const text = body.replace(/\$(ARGUMENTS|[1-9])/g, (_m, k: string) => {
    used = true;
    return k === 'ARGUMENTS' ? all : (each[Number(k) - 1] ?? '');
  });
  return !used && all ? `${text.replace(/\s+$/, '')}\n\n${all}` : text;
}

/**
 * `line` as what it asks for: `/NAME args` of a prompt command becomes the command's text; any
 * other line is null. Throws when the command's file cannot be read.
 */
export function expandPromptCommand(line: string, d: PromptCommandDirs): { name: string; text: string } | null {
  const m = /^\s*\/(\S+)(?:\s+([\s\S]*))?$/.exec(line);
  if (!m) return null;
  const cmd = promptCommands(d).find((c) => c.name === m[1]);
  if (!cmd) return null;
  return { name: cmd.name, text: fillTemplate(readPromptCommand(cmd).body, m[2] ?? '') };
}
