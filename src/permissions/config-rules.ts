// The rules of config.lua's `permissions` table (a profile's merged over the top level's, list by
// list), each with the file and line it is written on: the string is searched for in the
// profile's file first, then in config.lua (Lua values carry no positions; a rule built by code
// is shown with its file alone).

import { basename, dirname } from 'node:path';
import type { PermissionSettings } from '../config/types.js';
import { readRegularFileSync } from '../host/regular-file.js';
import { parseRule, type Rule } from './rule.js';

export class ConfigRuleError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly line?: number,
  ) {
    super(message);
    this.name = 'ConfigRuleError';
  }
}

interface Located {
  file: string;
  line?: number;
}

function lineOf(src: string, rule: string): number | undefined {
  for (const q of ['"', "'"]) {
    const i = src.indexOf(`${q}${rule}${q}`);
    if (i >= 0) return src.slice(0, i).split('\n').length;
  }
  const i = src.indexOf(`[[${rule}]]`);
  return i >= 0 ? src.slice(0, i).split('\n').length : undefined;
}

/** Rules from `settings`; `files` are where they may be written, the profile's first. Throws ConfigRuleError naming file and line. */
export function configRules(settings: PermissionSettings | undefined, files: string[]): Rule[] {
  if (!settings) return [];
  const texts = new Map<string, string>();
  const text = (f: string) => {
    let t = texts.get(f);
    if (t === undefined) {
      try {
        t = readRegularFileSync(f, 4 * 1024 * 1024).toString('utf8');
      } catch {
        t = '';
      }
      texts.set(f, t);
    }
    return t;
  };
  const locate = (rule: string): Located => {
    for (const f of files) {
      const line = lineOf(text(f), rule);
      if (line) return { file: f, line };
    }
    return { file: files[files.length - 1] ?? 'config.lua' };
  };
  const out: Rule[] = [];
  for (const effect of ['allow', 'ask', 'deny'] as const) {
    for (const s of settings[effect] ?? []) {
      const at = locate(s);
      const name = basename(dirname(at.file)) === 'agents' ? `agents/${basename(at.file)}` : basename(at.file);
      const label = at.line ? `${name}:${at.line}` : name;
      const r = parseRule(s);
      if (typeof r === 'string') throw new ConfigRuleError(`${label}: permissions.${effect}: ${r}`, at.file, at.line);
      out.push({ effect, ...r, source: { kind: 'config', file: at.file, line: at.line, label } });
    }
  }
  return out;
}
