// What a shell command does, as the permission rules judge it: the simple commands it runs and
// the files it writes or reads through redirections, found by tree-sitter-bash (through
// web-tree-sitter and the grammar's wasm, vendor/tree-sitter-bash, loaded on first use: about
// 100 ms, so only the paths that judge a shell command pay for it).
//
// Everything that runs becomes a part: each side of `&&`, `||`, `;`, `|`, a newline, `&`; the
// commands inside `$(…)`, backticks, `<(…)`, subshells, `{ …; }`, if/while/for/case bodies and
// function bodies; the script of `bash -c '…'` / `sh -c` / `eval` (parsed again); the command a
// wrapper runs (`command`, `builtin`, `exec`, `env`, `nice`, `nohup`, `time`, `timeout`,
// `stdbuf`, `xargs`, `sudo`, `doas`); the command of `find … -exec … ;`. A write redirection
// (`>`, `>>`, `&>`, `>|`, `<>`) is a write to its path, an input redirection a read. Whatever the
// parser cannot read, or whose meaning depends on a value known only when it runs (a command
// name from a variable, a redirection to `$FILE`, `bash -c "$SCRIPT"`), is an unreadable part:
// it is asked, never allowed by a pattern.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Node, Parser as TsParser } from 'web-tree-sitter';
import { compileWasm } from '../host/wasm-compile.js';

export type ShellPart =
  /**
   * A simple command: `text` is its name unquoted and its arguments as written, one space apart;
   * `bare` the same with a name given by path (`/bin/rm`) cut to its file name (`rm`), which deny
   * and ask rules match too; `moreArgs` when it gets arguments not seen (xargs). `argv`: its
   * words as the command gets them, when each is known as written (no expansion, no glob, no
   * assignment in front); `afterCd`: the script changes directory, so a relative path may name
   * another file than the rules would judge.
   */
  | { kind: 'command'; text: string; bare?: string; moreArgs?: boolean; argv?: string[]; afterCd?: boolean }
  /** A redirection writes (or reads) this path, as written. */
  | { kind: 'write'; path: string }
  | { kind: 'read'; path: string }
  | { kind: 'unreadable'; text: string; why: string };

/** Commands longer than this are not parsed (asked whole). */
export const MAX_COMMAND_CHARS = 256 * 1024;
/** `bash -c` inside `bash -c` … at most this deep. */
const MAX_DEPTH = 8;

let parser: Promise<TsParser> | null = null;

/**
 * The bash grammar, vendored at the package root: two directories up from this file in the
 * sources and in tsc's dist/permissions, one up from the CLI bundle (dist/cli.cjs).
 */
function grammarPath(): string {
  const here = import.meta.url;
  const up = /\/permissions\/shell\.[jt]s$/.test(here) ? '../../' : '../';
  const path = fileURLToPath(new URL(`${up}vendor/tree-sitter-bash/tree-sitter-bash.wasm`, here));
  if (!existsSync(path)) throw new Error(`the bash grammar is missing: ${path} (clm is not installed whole)`);
  return path;
}

/** The parser, loaded once (web-tree-sitter's runtime and the bash grammar). */
export function loadShellParser(): Promise<TsParser> {
  // Without tier-up: V8 would spend ~0.6 s of CPU optimizing the grammar after its first parse.
  parser ??= compileWasm(
    async () => {
      const { Parser, Language } = await import('web-tree-sitter');
      await Parser.init();
      const lang = await Language.load(grammarPath());
      const p = new Parser();
      p.setLanguage(lang);
      return p;
    },
    { tierUp: false },
  );
  parser.catch(() => {
    parser = null;
  });
  return parser;
}

/** The parts of `command`; loads the parser first if needed. */
export async function shellParts(command: string): Promise<ShellPart[]> {
  return partsWith(await loadShellParser(), command);
}

/** The parts of `command` with a loaded parser. */
export function partsWith(p: TsParser, command: string): ShellPart[] {
  const out: ShellPart[] = [];
  new Walker(p, out).script(command, 0);
  // After a cd, a relative path names a file elsewhere than the rules would judge.
  if (!out.some(changesDirectory)) return out;
  return out.map((x) =>
    (x.kind === 'write' || x.kind === 'read') && !x.path.startsWith('/')
      ? { kind: 'unreadable', text: `${x.kind === 'write' ? '>' : '<'} ${x.path}`, why: 'a relative path after cd changed the directory' }
      : x.kind === 'command' && x.argv
        ? { ...x, afterCd: true }
        : x,
  );
}

/** A part that changes the directory of the commands after it: `cd`, `pushd`, `popd`. */
export const changesDirectory = (x: ShellPart): boolean =>
  x.kind === 'command' && /^(?:[A-Za-z_][A-Za-z0-9_]*=\S* )*(cd|pushd|popd)(?: |$)/.test(x.text);

/** A word of a simple command: as written, and its value when it is known before the command runs. */
interface Word {
  src: string;
  value: string | null;
  /** The value is what the command gets: nothing in it expands (a glob, `~user`). */
  literal?: boolean;
}

/** A word as the command gets it: its value, unless an unquoted glob or a `~user` expands it. */
function wordOf(n: Node): Word {
  const value = wordValue(n);
  const unquoted = n.type === 'word' ? [n] : n.type === 'concatenation' ? n.children.filter((c) => c?.type === 'word') : [];
  const glob = unquoted.some((w) => /[*?[]/.test(w!.text));
  const tilde = value?.startsWith('~') === true && !(n.type === 'word' && /^~(?:\/|$)/.test(value));
  return { src: n.text, value, literal: value !== null && !glob && !tilde };
}

const WRITE_OPS = new Set(['>', '>>', '&>', '&>>', '>|', '<>']);
const READ_OPS = new Set(['<']);
/** Paths a write to is no write to a file. */
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);
/** Nodes that hold nothing that runs. */
const INERT = new Set([
  'word',
  'number',
  'raw_string',
  'string_content',
  'ansi_c_string',
  'variable_name',
  'special_variable_name',
  'file_descriptor',
  'heredoc_start',
  'heredoc_end',
  'heredoc_content',
  'comment',
  'regex',
  'extglob_pattern',
  'test_operator',
]);
/** Nodes whose children are walked for what runs inside them. */
const CONTAINERS = new Set([
  'program',
  'list',
  'pipeline',
  'subshell',
  'compound_statement',
  'do_group',
  'if_statement',
  'elif_clause',
  'else_clause',
  'while_statement',
  'for_statement',
  'case_statement',
  'case_item',
  'negated_command',
  'function_definition',
  'test_command',
  'command_substitution',
  'process_substitution',
  'string',
  'concatenation',
  'expansion',
  'simple_expansion',
  'arithmetic_expansion',
  'binary_expression',
  'unary_expression',
  'ternary_expression',
  'postfix_expression',
  'parenthesized_expression',
  'subscript',
  'array',
  'heredoc_body',
  'herestring_redirect',
  'translated_string',
  'brace_expression',
]);

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox sh']);

/** A word's value, or null when it depends on the run (expansions, globs in a name, $'…'). */
function wordValue(n: Node): string | null {
  switch (n.type) {
    case 'word':
      return unquoteWord(n.text);
    case 'number':
      return n.namedChildCount ? null : n.text;
    case 'raw_string':
      return n.text.slice(1, -1);
    case 'string':
      return stringValue(n);
    case 'concatenation':
      return concatValue(n);
    default:
      return null;
  }
}

/** A double-quoted string's value, or null when anything in it expands. */
function stringValue(n: Node): string | null {
  let v = '';
  for (const c of n.namedChildren) {
    if (c?.type !== 'string_content') return null;
    v += c.text.replace(/\\([$`"\\\n])/g, (_m, ch: string) => (ch === '\n' ? '' : ch));
  }
  return v;
}

/** Words written together (`a"b"'c'`): their values joined, or null when one depends on the run. */
function concatValue(n: Node): string | null {
  let v = '';
  for (const c of n.children) {
    const x = c ? wordValue(c) : null;
    if (x === null) return null;
    v += x;
  }
  return v;
}

/** An unquoted word's value: backslashes escape the next character, a backslash-newline is nothing. */
function unquoteWord(s: string): string {
  return s.replace(/\\(\n|[\s\S])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

/** The operator of a redirection (its first unnamed child that is not a descriptor). */
function operatorOf(n: Node): string {
  for (const c of n.children) if (c && !c.isNamed) return c.type;
  return '';
}

class Walker {
  constructor(
    private readonly p: TsParser,
    private readonly out: ShellPart[],
  ) {}

  private unreadable(text: string, why: string): void {
    this.out.push({ kind: 'unreadable', text, why });
  }

  script(src: string, depth: number): void {
    if (depth > MAX_DEPTH) return this.unreadable(src, `shells nested more than ${MAX_DEPTH} deep`);
    if (src.length > MAX_COMMAND_CHARS) return this.unreadable(src.slice(0, 80), `longer than ${MAX_COMMAND_CHARS} characters`);
    const tree = this.p.parse(src);
    if (!tree) return this.unreadable(src, 'the parser gave up');
    try {
      // A text the parser cannot read whole is asked; what it did read is judged all the same,
      // so a denied command in it still denies.
      if (tree.rootNode.hasError) this.unreadable(src, 'not a command the parser can read');
      this.node(tree.rootNode, depth);
    } catch (e) {
      // A tree too deep for the walk (thousands of nested subshells) is not read.
      this.unreadable(src.slice(0, 80), e instanceof RangeError ? 'nested too deep' : String(e));
    } finally {
      tree.delete();
    }
  }

  private children(n: Node, depth: number): void {
    for (const c of n.namedChildren) if (c) this.node(c, depth);
  }

  private node(n: Node, depth: number): void {
    const t = n.type;
    if (INERT.has(t)) return;
    if (CONTAINERS.has(t)) return this.children(n, depth);
    switch (t) {
      case 'ERROR':
        return this.children(n, depth);
      case 'c_style_for_statement':
        return this.cFor(n, depth);
      case 'command':
        return this.command(n, depth);
      case 'redirected_statement':
        return this.redirected(n, depth);
      case 'file_redirect':
      case 'heredoc_redirect':
        return this.redirect(n, depth);
      case 'variable_assignment':
      case 'variable_assignments':
      case 'declaration_command':
      case 'unset_command':
        // Setting a variable changes what later commands do (PATH, LD_PRELOAD, GIT_SSH_COMMAND):
        // it is a part of its own, matched as written.
        this.out.push({ kind: 'command', text: n.text.replace(/\s+/g, ' ') });
        return this.children(n, depth);
      default:
        return this.unreadable(n.text, `${t.replace(/_/g, ' ')} is not understood`);
    }
  }

  /** A C-style for: its assignments are arithmetic (`i=0`), numbers, not paths or commands. */
  private cFor(n: Node, depth: number): void {
    for (const c of n.namedChildren) if (c) c.type === 'variable_assignment' ? this.children(c, depth) : this.node(c, depth);
  }

  private redirected(n: Node, depth: number): void {
    const body = n.childForFieldName('body');
    if (body) this.node(body, depth);
    for (const r of n.childrenForFieldName('redirect')) if (r) this.redirect(r, depth);
    for (const c of n.namedChildren) if (c && c.type === 'herestring_redirect') this.node(c, depth);
  }

  private redirect(r: Node, depth: number): void {
    if (r.type === 'heredoc_redirect') return this.children(r, depth);
    if (r.type === 'herestring_redirect') return this.children(r, depth);
    const op = operatorOf(r);
    const dest = r.childForFieldName('destination');
    if (!dest) return;
    this.node(dest, depth);
    const path = wordValue(dest);
    if (op === '>&' || op === '<&' || op === '>&-' || op === '<&-') {
      // A descriptor duplicated (2>&1) or closed is no file; `>& file` writes one.
      if (path !== null && /^(\d+-?|-)$/.test(path)) return;
      if (op.startsWith('<')) return this.read(path, dest.text);
      return this.write(path, dest.text);
    }
    if (WRITE_OPS.has(op)) return this.write(path, dest.text);
    if (READ_OPS.has(op)) return this.read(path, dest.text);
  }

  private write(path: string | null, src: string): void {
    if (path === null || /[*?[]/.test(path)) return this.unreadable(`> ${src}`, 'a redirection to a path known only when it runs');
    if (HARMLESS_TARGETS.has(path)) return;
    this.out.push({ kind: 'write', path });
  }

  private read(path: string | null, src: string): void {
    if (path === null || /[*?[]/.test(path)) return this.unreadable(`< ${src}`, 'a redirection from a path known only when it runs');
    this.out.push({ kind: 'read', path });
  }

  private command(n: Node, depth: number): void {
    const assigns: string[] = [];
    const words: Word[] = [];
    for (let i = 0; i < n.childCount; i++) {
      const c = n.child(i);
      if (!c) continue;
      const field = n.fieldNameForChild(i);
      if (c.type === 'variable_assignment') {
        assigns.push(c.text);
        this.children(c, depth);
      } else if (field === 'name') {
        const w = c.namedChildren[0] ?? c;
        this.node(w, depth);
        words.push(wordOf(w));
      } else if (field === 'argument') {
        this.node(c, depth);
        words.push(wordOf(c));
      } else if (field === 'redirect') {
        this.redirect(c, depth);
      } else if (c.isNamed) {
        this.node(c, depth);
      }
    }
    this.simple(assigns, words, depth, false);
  }

  /** One simple command (after its words were searched for what runs inside them). */
  private simple(assigns: string[], words: Word[], depth: number, moreArgs: boolean): void {
    const all = [...assigns, ...words.map((w) => w.src)].join(' ');
    if (!words.length) {
      if (assigns.length) this.out.push({ kind: 'command', text: all });
      return;
    }
    const name = words[0]!.value;
    if (name === null || /[*?[]/.test(name) || name === '') {
      return this.unreadable(all, 'a command name known only when it runs');
    }
    const args = words.slice(1);
    const text = [...assigns, name, ...args.map((w) => w.src)].join(' ');
    const inner = unwrap(name, args);
    if (inner === undefined) {
      const part: ShellPart = { kind: 'command', text };
      if (name.includes('/')) part.bare = [...assigns, name.slice(name.lastIndexOf('/') + 1), ...args.map((w) => w.src)].join(' ');
      if (moreArgs) part.moreArgs = true;
      else if (!assigns.length && words.every((w) => w.literal)) part.argv = words.map((w) => w.value!);
      this.out.push(part);
      return;
    }
    this.wrapped(inner, text, name, assigns, depth, moreArgs);
  }

  /** A command that runs another: a shell's script, a wrapper's command, find's -exec commands. */
  private wrapped(inner: Unwrapped, text: string, name: string, assigns: string[], depth: number, moreArgs: boolean): void {
    if (inner.kind === 'unreadable') return this.unreadable(text, inner.why);
    if (inner.kind === 'script') {
      if (inner.script === null) return this.unreadable(text, `${name} runs a script known only when it runs`);
      return this.script(inner.script, depth + 1);
    }
    // A wrapper: what it runs is judged (with the assignments in front); sudo and doas run it
    // as another user, so their own text is judged too.
    if (inner.kind === 'privileged') this.out.push({ kind: 'command', text });
    if (inner.kind === 'find') {
      this.out.push({ kind: 'command', text });
      for (const cmd of inner.commands) this.simple([], cmd, depth, false);
      return;
    }
    // A wrapper with nothing to run does something of its own (`env` prints the environment).
    if (!inner.words.length) {
      if (inner.kind === 'runs') this.out.push({ kind: 'command', text });
      return;
    }
    this.simple([...assigns, ...inner.assigns], inner.words, depth, moreArgs || inner.moreArgs);
  }
}

type Unwrapped =
  | { kind: 'runs' | 'privileged'; assigns: string[]; words: Word[]; moreArgs: boolean }
  | { kind: 'script'; script: string | null }
  | { kind: 'find'; commands: Word[][] }
  | { kind: 'unreadable'; why: string };

/** Options of a wrapper that take a value (the next word, unless written `-xVALUE` / `--opt=VALUE`). */
const WRAPPERS: Record<string, { valued: string[]; kind: 'runs' | 'privileged'; moreArgs?: boolean; positional?: number }> = {
  command: { valued: [], kind: 'runs' },
  builtin: { valued: [], kind: 'runs' },
  exec: { valued: ['-a'], kind: 'runs' },
  nohup: { valued: [], kind: 'runs' },
  time: { valued: ['-f', '--format', '-o', '--output'], kind: 'runs' },
  nice: { valued: ['-n', '--adjustment'], kind: 'runs' },
  timeout: { valued: ['-s', '--signal', '-k', '--kill-after'], kind: 'runs', positional: 1 },
  stdbuf: { valued: ['-i', '-o', '-e', '--input', '--output', '--error'], kind: 'runs' },
  env: { valued: ['-u', '--unset'], kind: 'runs' },
  xargs: {
    valued: [
      '-a',
      '--arg-file',
      '-d',
      '--delimiter',
      '-E',
      '-e',
      '-I',
      '-i',
      '-L',
      '-l',
      '-n',
      '--max-args',
      '-P',
      '--max-procs',
      '-s',
      '--max-chars',
      '--process-slot-var',
    ],
    kind: 'runs',
    moreArgs: true,
  },
  sudo: {
    valued: [
      '-u',
      '--user',
      '-g',
      '--group',
      '-C',
      '--close-from',
      '-D',
      '--chdir',
      '-h',
      '--host',
      '-p',
      '--prompt',
      '-r',
      '--role',
      '-t',
      '--type',
      '-T',
      '--command-timeout',
      '-U',
      '--other-user',
    ],
    kind: 'privileged',
  },
  doas: { valued: ['-u', '-C'], kind: 'privileged' },
};

/** What a command runs when it is a wrapper, a shell with -c, eval or find -exec; undefined when it is a plain command. */
function unwrap(name: string, args: Word[]): Unwrapped | undefined {
  const base = name.includes('/') ? name.slice(name.lastIndexOf('/') + 1) : name;
  if (SHELLS.has(base)) return shellScript(args);
  if (base === 'eval') {
    const vals = args.map((a) => a.value);
    return { kind: 'script', script: vals.some((v) => v === null) ? null : vals.join(' ') };
  }
  if (base === 'find') return findExec(args);
  const w = WRAPPERS[base];
  return w ? wrapperCommand(base, w, args) : undefined;
}

/** What wrapper `base` runs: the words after its options (and env's assignments). */
function wrapperCommand(base: string, w: (typeof WRAPPERS)[string], args: Word[]): Unwrapped | undefined {
  const assigns: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const v = args[i]!.value;
    if (v === null) return { kind: 'unreadable', why: `${base} with an argument known only when it runs` };
    const a = wrapperWord(base, w, v);
    if (a === 'assign') assigns.push(args[i]!.src);
    else if (a === 'command') break;
    else if (a === '--') {
      i++;
      break;
    } else if (typeof a === 'number') i += a;
    else return a;
  }
  i = Math.min(args.length, i + (w.positional ?? 0));
  return { kind: w.kind, assigns, words: args.slice(i), moreArgs: !!w.moreArgs };
}

/** What a word before the command of wrapper `base` is: `--`, an assignment (env), where the command starts, or an option (wrapperOption). */
function wrapperWord(base: string, w: { valued: string[] }, v: string): 'assign' | 'command' | '--' | number | Unwrapped | undefined {
  if (v === '--') return '--';
  if (base === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(v)) return 'assign';
  if (!v.startsWith('-') || v === '-') return 'command';
  return wrapperOption(base, w, v);
}

/**
 * An option of wrapper `base`: how many words it takes after itself (0 or 1), or, when it makes
 * the wrapper do something else than run the command, what that is (`command -v`: a plain
 * command; `env -S`: a string split into a command, unreadable).
 */
function wrapperOption(base: string, w: { valued: string[] }, v: string): number | Unwrapped | undefined {
  if (base === 'command' && /^-[a-zA-Z]*[vV]/.test(v)) return undefined;
  if (base === 'env' && (v === '-S' || v.startsWith('--split-string') || /^-[a-zA-Z]*S/.test(v)))
    return { kind: 'unreadable', why: 'env -S splits a string into a command' };
  if (base === 'env' && v === '-C') return 1;
  if (base === 'env' && v.startsWith('--chdir')) return 0;
  return w.valued.includes(v) ? 1 : 0;
}

/** `sh -c SCRIPT` (options before it, `-c` possibly in a cluster such as `-ec`); else a plain command. */
function shellScript(args: Word[]): Unwrapped | undefined {
  for (let i = 0; i < args.length; i++) {
    const v = args[i]!.value;
    if (v === null) return { kind: 'unreadable', why: 'a shell option known only when it runs' };
    if (v === '--' || !v.startsWith('-') || v === '-') return undefined;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(v)) {
      const script = args[i + 1];
      if (!script) return { kind: 'unreadable', why: '-c without a script' };
      return { kind: 'script', script: script.value };
    }
    // `-o option` takes a value.
    if (v === '-o' || v === '+o') i++;
  }
  return undefined;
}

/** find's own words are the part; each `-exec`/`-execdir`/`-ok`/`-okdir` … `;` or `+` is a command it runs. */
function findExec(args: Word[]): Unwrapped | undefined {
  const commands: Word[][] = [];
  for (let i = 0; i < args.length; i++) {
    const v = args[i]!.value;
    if (v !== '-exec' && v !== '-execdir' && v !== '-ok' && v !== '-okdir') continue;
    const end = args.findIndex((a, k) => k > i && (a.value === ';' || a.value === '+'));
    const stop = end < 0 ? args.length : end;
    if (stop > i + 1) commands.push(args.slice(i + 1, stop));
    i = stop;
  }
  return commands.length ? { kind: 'find', commands } : undefined;
}
