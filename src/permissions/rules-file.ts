// The rules file: `permissions.rules` in the config directory, one rule a line, written by clm
// when a question is answered "always" or "never", and by hand:
//
//   # comments and blank lines are skipped
//   allow shell_exec(npm test *)
//   deny  shell_exec(rm -rf *)
//   ask   write_file(~/**)
//
// A line that is not `allow|ask|deny RULE` stops the run with an error naming the file and line.

import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readRegularFileSync } from '../host/regular-file.js';
import { EFFECTS, type Effect, parseRule, type Rule, ruleText } from './rule.js';

export const RULES_FILE_NAME = 'permissions.rules';
/** A rules file larger than this is refused (it is edited by hand and appended by answers). */
const MAX_RULES_FILE = 4 * 1024 * 1024;

const HEADER = `# clm permission rules, one a line: allow|ask|deny tool(pattern) (see docs/config.md, Permissions).
# clm adds a line when a question is answered (a) always or (d) never; edit or delete lines freely.
`;

export class RulesFileError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly line?: number,
  ) {
    super(message);
    this.name = 'RulesFileError';
  }
}

export function rulesFilePath(configDir: string): string {
  return join(configDir, RULES_FILE_NAME);
}

/** The rules of the file (none when it does not exist); throws RulesFileError on a line it cannot read. */
export function readRulesFile(file: string): Rule[] {
  let text: string;
  try {
    text = readRegularFileSync(file, MAX_RULES_FILE).toString('utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    throw new RulesFileError(`${file}: cannot be read: ${(e as Error).message}`, file);
  }
  return parseRulesText(text, file);
}

export function parseRulesText(text: string, file: string): Rule[] {
  const rules: Rule[] = [];
  const label = basename(file);
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '').trim();
    if (!line || line.startsWith('#')) return;
    const n = i + 1;
    const m = /^(\S+)\s+(.*)$/.exec(line);
    const effect = m?.[1] as Effect | undefined;
    if (!m || !effect || !EFFECTS.includes(effect))
      throw new RulesFileError(`${file}:${n}: expected 'allow', 'ask' or 'deny' and a rule, got '${line}'`, file, n);
    const r = parseRule(m[2]!);
    if (typeof r === 'string') throw new RulesFileError(`${file}:${n}: ${r}`, file, n);
    rules.push({ effect, ...r, source: { kind: 'rules-file', file, line: n, label: `${label}:${n}` } });
  });
  return rules;
}

/** Append a rule (the file and its directory made when missing); the rule with its line. */
export function appendRule(file: string, effect: 'allow' | 'deny', r: { tool: string; pattern: string | null }): Rule {
  const line = `${effect} ${ruleText(r)}`;
  if (/[\r\n]/.test(line)) throw new RulesFileError(`${file}: a rule cannot hold a line break`, file);
  mkdirSync(dirname(file), { recursive: true });
  const fresh = !existsSync(file);
  let before = 0;
  if (!fresh) {
    const text = readRegularFileSync(file, MAX_RULES_FILE).toString('utf8');
    before = text.split('\n').length - (text.endsWith('\n') || !text ? 1 : 0);
    if (text && !text.endsWith('\n')) appendFileSync(file, '\n');
  }
  const head = fresh ? HEADER : '';
  appendFileSync(file, `${head}${line}\n`, { mode: 0o644 });
  const n = (fresh ? HEADER.split('\n').length - 1 : before) + 1;
  return { effect, ...r, source: { kind: 'rules-file', file, line: n, label: `${basename(file)}:${n}` } };
}
