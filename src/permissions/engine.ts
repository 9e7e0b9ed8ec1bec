// The permission engine: one decision — allow, ask or deny — for every tool call, from the rules
// in force (config.lua, the rules file, --allow-tools/--deny-tools, this session's grants), with
// the parts it judged and the rule that decided each.
//
// A call is cut into parts: a shell command (shell_exec, bg_exec) into what it runs, writes and
// reads (shell.ts); a file tool's call is its path; any other tool's call is its arguments. A
// part is denied when a deny rule matches it, else asked when an ask rule does, else allowed when
// an allow rule does, else it gets the default: asked for a tool that asks (every tool not marked
// no-prompt, and a write redirection), allowed for a no-prompt one (and a read redirection). A
// part the parser cannot read is matched only by bare rules (`shell_exec`, every call): no pattern
// allows it. The call's decision is its worst part's: deny > ask > allow.

import { fnmatch } from '../core/fnmatch.js';
import { type PathContext, pathMatches, realPath, textMatches } from './match.js';
import { type Effect, type Rule, ruleText, SEVERITY, specificity } from './rule.js';
import { readsOf } from './read-only-commands.js';
import { changesDirectory, loadShellParser, partsWith, type ShellPart } from './shell.js';

/** Tools whose `command` argument is a shell command. */
export const SHELL_TOOLS: ReadonlySet<string> = new Set(['shell_exec', 'bg_exec']);
/** Tools whose `path` argument is the file they read or write. */
export const FILE_TOOLS: ReadonlySet<string> = new Set(['read_file', 'write_file', 'list_dir', 'edit_file']);

export interface PermissionCall {
  tool: string;
  /** The arguments' JSON text. */
  args: string;
  /** The tool asks by default (it is not marked no-prompt). */
  gated: boolean;
}

/** One thing a call does, judged on its own. */
export type Subject =
  | { kind: 'call'; tool: string; text: string }
  | { kind: 'path'; tool: string; path: string }
  /** `reads`: the files it reads when it is a command known to only read (read-only-commands.ts). */
  | { kind: 'command'; tool: string; text: string; bare?: string; moreArgs?: boolean; reads?: string[] }
  | { kind: 'write'; tool: 'write_file'; path: string }
  | { kind: 'read'; tool: 'read_file'; path: string }
  | { kind: 'unreadable'; tool: string; text: string; why: string };

export interface PartRuling {
  subject: Subject;
  decision: Effect;
  /** The rule that decided (the most specific of the winning effect); null: the default. */
  rule: Rule | null;
  /** A command known to only read, no rule of its own: decided as the files it reads (`rule`: a read_file rule, or null). */
  readOnly?: true;
}

export interface Ruling {
  call: PermissionCall;
  decision: Effect;
  parts: PartRuling[];
  /** The rule that decided the call (its worst part's); null when the default did. */
  rule: Rule | null;
}

/** How the calls of one tool are decided, whatever their arguments (`/tools`). */
export interface ToolRuling {
  tool: string;
  /** What a call gets that no pattern names: the rules over every call of the tool, else the default. */
  decision: Effect;
  /** The rule that decides that; null when the default does. */
  rule: Rule | null;
  /** A shell tool: each command is cut into parts and judged by the rules of its parts. */
  shell: boolean;
  /** A shell tool whose commands known to only read are decided as the files they read (EngineOptions.readOnlyCommands). */
  readOnly?: true;
  /** Rules with a pattern that decide some of its calls otherwise, the strongest effect first. */
  some: Rule[];
}

export interface EngineOptions extends PathContext {
  rules: Rule[];
  /** --allow-tools: a tool none of these name is denied. */
  only?: string[];
  /**
   * Whether a shell command known to only read (`ls`, `cat`, `grep`, `git status`), with no rule
   * of its own, is decided as the files it reads, by read_file's rules (allowed by default),
   * rather than asked: asked at each call, since the sandbox it runs in may change.
   */
  readOnlyCommands?: () => boolean;
}

/** One field's value, or `key: value` pairs two spaces apart, or the text itself: what a pattern over another tool's arguments matches. */
export function argsText(args: string): string {
  let v: unknown;
  try {
    v = JSON.parse(args);
  } catch {
    return args.trim();
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return args.trim();
  const entries = Object.entries(v as Record<string, unknown>);
  const text = (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x));
  if (entries.length === 1) return text(entries[0]![1]);
  return entries.map(([k, x]) => `${k}: ${text(x)}`).join('  ');
}

/** The string field `key` of a call's JSON arguments, if it is one. */
export function stringArg(args: string, key: string): string | undefined {
  try {
    const v = JSON.parse(args) as Record<string, unknown> | null;
    const x = v && typeof v === 'object' ? v[key] : undefined;
    return typeof x === 'string' ? x : undefined;
  } catch {
    return undefined;
  }
}

/** What the engine needs of the shell parser (loaded only when a shell command is judged). */
type Parse = (command: string) => ShellPart[];

export class PermissionEngine {
  private readonly base: Rule[];
  private readonly added: Rule[] = [];
  private readonly only: string[] | undefined;
  private readonly paths: PathContext;
  private readonly readOnlyCommands: () => boolean;

  constructor(o: EngineOptions) {
    this.base = [...o.rules];
    this.only = o.only;
    this.readOnlyCommands = o.readOnlyCommands ?? (() => false);
    this.paths = { cwd: realPath(o.cwd, '/'), home: o.home };
  }

  /** Replace the configured rules (another profile's); this session's stay. */
  setRules(rules: Rule[]): void {
    this.base.splice(0, this.base.length, ...rules);
  }

  /** Every rule in force, in the order they came: configured, then added this session. */
  rules(): Rule[] {
    return [...this.base, ...this.added];
  }

  /** This session's grants (answers "for this session"). */
  grants(): Rule[] {
    return this.added.filter((r) => r.source.kind === 'session');
  }

  /** A rule from now on (a grant, or one just saved to the rules file). */
  add(rule: Rule): void {
    this.added.push(rule);
  }

  /** Take back a grant; whether there was one. */
  revoke(rule: Rule): boolean {
    const i = this.added.indexOf(rule);
    if (i < 0) return false;
    this.added.splice(i, 1);
    return true;
  }

  /** How `call` is decided (loads the shell parser when it is a shell command). */
  async judge(call: PermissionCall): Promise<Ruling> {
    if (SHELL_TOOLS.has(call.tool) && this.shellCommand(call) !== undefined) {
      const p = await loadShellParser();
      return this.judgeWith((c) => partsWith(p, c), call);
    }
    return this.judgeWith(null, call);
  }

  private shellCommand(call: PermissionCall): string | undefined {
    return stringArg(call.args, 'command');
  }

  /** The parts of a call. */
  subjects(parse: Parse | null, call: PermissionCall): Subject[] {
    const tool = call.tool;
    if (SHELL_TOOLS.has(tool)) {
      const command = this.shellCommand(call);
      if (command === undefined || !parse) return [{ kind: 'unreadable', tool, text: call.args, why: 'no command in the arguments' }];
      const parts = parse(command);
      const cdTo = cdTarget(parts);
      return parts.map((p): Subject => {
        switch (p.kind) {
          case 'command': {
            const { argv, afterCd, ...command } = p;
            const reads = argv && readOnlyReads(argv, afterCd === true, cdTo);
            return reads ? { ...command, tool, reads } : { ...command, tool };
          }
          case 'write':
            return { kind: 'write', tool: 'write_file', path: p.path };
          case 'read':
            return { kind: 'read', tool: 'read_file', path: p.path };
          case 'unreadable':
            return { kind: 'unreadable', tool, text: p.text, why: p.why };
        }
      });
    }
    if (FILE_TOOLS.has(tool)) {
      const path = stringArg(call.args, 'path');
      if (path !== undefined) return [{ kind: 'path', tool, path }];
    }
    return [{ kind: 'call', tool, text: argsText(call.args) }];
  }

  judgeWith(parse: Parse | null, call: PermissionCall): Ruling {
    if (this.only && !this.only.some((p) => fnmatch(p, call.tool))) {
      const rule: Rule = { effect: 'deny', tool: call.tool, pattern: null, source: { kind: 'flag', label: 'not in --allow-tools' } };
      return { call, decision: 'deny', parts: [], rule };
    }
    return this.judgeSubjects(call, this.subjects(parse, call));
  }

  /** How a call cut into `subjects` is decided (again, after rules were added: the cutting is not repeated). */
  judgeSubjects(call: PermissionCall, subjects: Subject[]): Ruling {
    if (this.only && !this.only.some((p) => fnmatch(p, call.tool))) return this.judgeWith(null, call);
    const rules = this.rules();
    const parts = subjects.length
      ? subjects.map((s) => this.part(rules, call, s))
      : // Nothing runs (an empty command, a comment): the bare rules and the default decide.
        [this.part(rules, call, { kind: 'call', tool: call.tool, text: '' })];
    let worst = parts[0]!;
    for (const p of parts) if (SEVERITY[p.decision] > SEVERITY[worst.decision]) worst = p;
    return { call, decision: worst.decision, parts: subjects.length ? parts : [], rule: worst.rule };
  }

  /**
   * How the calls of `tool` are decided: the rules that match every call of it (a bare rule, a
   * pattern of only `*` over its arguments, `**` over a file tool's path) or the default, and the
   * rules with a narrower pattern that decide some calls otherwise — a stronger effect than a
   * rule's, any other than the default's. No pattern matches every shell command (the parts it
   * cannot read), so a shell tool's are all narrower.
   */
  toolRuling(tool: string, gated: boolean): ToolRuling {
    const shell = SHELL_TOOLS.has(tool);
    const call: PermissionCall = { tool, args: '{}', gated };
    if (this.only && !this.only.some((p) => fnmatch(p, tool))) {
      const { decision, rule } = this.judgeWith(null, call);
      return { tool, decision, rule, shell, some: [] };
    }
    const own = (r: Rule) => fnmatch(r.tool, tool);
    // What a shell command writes and reads is judged by the rules of write_file and read_file.
    const ofParts = (r: Rule) => shell && (fnmatch(r.tool, 'write_file') || fnmatch(r.tool, 'read_file'));
    const every = (r: Rule) =>
      own(r) && (r.pattern === null || (!shell && /^\*+$/.test(r.pattern) && (!FILE_TOOLS.has(tool) || r.pattern.includes('**'))));
    const rules = this.rules();
    const { decision, rule } = this.part(rules.filter(every), call, { kind: 'call', tool, text: '' });
    const some = rules
      .filter((r) => (own(r) || ofParts(r)) && !every(r) && r.effect !== decision && (!rule || SEVERITY[r.effect] > SEVERITY[decision]))
      .sort((a, b) => SEVERITY[b.effect] - SEVERITY[a.effect]);
    return { tool, decision, rule, shell, some, ...(shell && this.readOnlyCommands() ? { readOnly: true as const } : {}) };
  }

  private part(rules: Rule[], call: PermissionCall, s: Subject): PartRuling {
    const matching = rules.filter((r) => this.matches(r, call, s));
    for (const effect of ['deny', 'ask', 'allow'] as const) {
      const of = matching.filter((r) => r.effect === effect);
      if (!of.length) continue;
      let best = of[0]!;
      for (const r of of) if (specificity(r) > specificity(best)) best = r;
      return { subject: s, decision: effect, rule: best };
    }
    if (s.kind === 'command' && s.reads && this.readOnlyCommands()) return this.readOnly(rules, call, s, s.reads);
    return { subject: s, decision: defaultFor(call, s), rule: null };
  }

  /** A command known to only read, decided as its reads: the worst of them, by read_file's rules. */
  private readOnly(rules: Rule[], call: PermissionCall, s: Subject, reads: string[]): PartRuling {
    let worst: PartRuling = { subject: s, decision: 'allow', rule: null, readOnly: true };
    for (const path of reads) {
      const r = this.part(rules, call, { kind: 'read', tool: 'read_file', path });
      if (SEVERITY[r.decision] > SEVERITY[worst.decision] || (!worst.rule && r.rule && r.decision === worst.decision))
        worst = { subject: s, decision: r.decision, rule: r.rule, readOnly: true };
    }
    return worst;
  }

  private matches(r: Rule, call: PermissionCall, s: Subject): boolean {
    // A bare rule of the call's tool covers all it does; a pattern only the parts of its own tool.
    if (r.pattern === null) return fnmatch(r.tool, call.tool) || fnmatch(r.tool, s.tool);
    if (!fnmatch(r.tool, s.tool)) return false;
    switch (s.kind) {
      case 'unreadable':
        return false;
      case 'command': {
        // A name given by path is matched as written, and by deny and ask rules by its file name too.
        const texts = r.effect !== 'allow' && s.bare !== undefined ? [s.text, s.bare] : [s.text];
        return texts.some((t) => textMatches(r.pattern!, t) && (!s.moreArgs || textMatches(r.pattern!, `${t} …`)));
      }
      case 'call':
        return textMatches(r.pattern, s.text);
      case 'path':
      case 'write':
      case 'read':
        return pathMatches(r.pattern, s.path, this.paths);
    }
  }
}

const relative = (f: string) => !f.startsWith('/') && !f.startsWith('~/');

/**
 * The files a command known to only read reads, or null. After a cd a relative path names a file
 * there, or here when the cd failed: both are judged; after cds not known (`cdTo` null), it may
 * name any file, and the command is not taken for one that only reads.
 */
function readOnlyReads(argv: string[], afterCd: boolean, cdTo: string | null): string[] | null {
  const reads = readsOf(argv);
  if (!reads || !afterCd) return reads;
  if (cdTo === null) return reads.some(relative) ? null : reads;
  return reads.flatMap((f) => (relative(f) ? [f, `${cdTo.replace(/\/+$/, '')}/${f}`] : [f]));
}

/**
 * Where the one `cd DIR` of a script goes, when that is all that changes its directory (no other
 * cd, pushd or popd, DIR written out, not `-`); else null.
 */
function cdTarget(parts: ShellPart[]): string | null {
  const moves = parts.filter(changesDirectory);
  const cd = moves.length === 1 && moves[0]!.kind === 'command' ? moves[0]!.argv : undefined;
  if (cd?.length !== 2 || cd[0] !== 'cd' || cd[1]!.startsWith('-') || !cd[1]) return null;
  return cd[1]!;
}

function defaultFor(call: PermissionCall, s: Subject): Effect {
  if (s.kind === 'read') return 'allow';
  if (s.kind === 'write' || s.kind === 'unreadable') return 'ask';
  return call.gated ? 'ask' : 'allow';
}

/** The subject as one line: `npm test`, `> out.txt`, `< in.txt`, the path or the arguments. */
export function subjectText(s: Subject): string {
  switch (s.kind) {
    case 'write':
      return `> ${s.path}`;
    case 'read':
      return `< ${s.path}`;
    case 'path':
      return s.path;
    case 'command':
      return s.moreArgs ? `${s.text} …` : s.text;
    default:
      return s.text;
  }
}

const escapeGlob = (s: string) => s.replace(/[\\*?]/g, '\\$&');

/**
 * The rules an answer "for this session", "always" or "never" would add for `ruling`: one per
 * part that was not allowed (all of them for never), as narrow as still useful: a command with
 * its first word that is not an option (`npm test *`, `git status *`), the file a redirection
 * writes, a file tool's directory (`write_file(src/**)`; never: the file itself), any other tool
 * whole. A part the parser cannot read gets none (no pattern can allow it).
 */
export function proposeRules(ruling: Ruling, effect: 'allow' | 'deny'): { tool: string; pattern: string | null }[] {
  const out: { tool: string; pattern: string | null }[] = [];
  const seen = new Set<string>();
  const push = (r: { tool: string; pattern: string | null }) => {
    const k = ruleText(r);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(r);
    }
  };
  const parts = ruling.parts.filter((p) => p.decision !== 'allow');
  if (!ruling.parts.length) push({ tool: ruling.call.tool, pattern: null });
  for (const p of parts) {
    const s = p.subject;
    switch (s.kind) {
      case 'command':
        push({ tool: s.tool, pattern: `${commandPrefix(s.text)} *` });
        break;
      case 'write':
      case 'read':
        push({ tool: s.tool, pattern: escapeGlob(s.path) });
        break;
      case 'path': {
        const slash = s.path.lastIndexOf('/');
        const dir = slash > 0 ? s.path.slice(0, slash) : '';
        push({ tool: s.tool, pattern: effect === 'allow' && dir ? `${escapeGlob(dir)}/**` : escapeGlob(s.path) });
        break;
      }
      case 'call':
        push({ tool: s.tool, pattern: null });
        break;
      case 'unreadable':
        break;
    }
  }
  return out;
}

/** Subcommands that name what they run in the next word (`npm run lint`). */
const RUNNERS = new Set(['run', 'run-script', 'exec', 'x']);

/** The words of a command up to its first that is not an option or an assignment (two for `npm run lint`), glob characters escaped. */
function commandPrefix(text: string): string {
  const words = text.split(' ');
  const keep: string[] = [];
  let named = false;
  for (const w of words) {
    keep.push(w);
    if (!named) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) named = true;
      continue;
    }
    if (!w.startsWith('-') && !(RUNNERS.has(w) && keep.length === 2)) break;
  }
  return escapeGlob(keep.join(' '));
}
