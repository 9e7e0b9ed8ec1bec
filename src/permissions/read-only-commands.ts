// Commands known to only read: what they read, so that the permission engine can judge such a
// command as the reads it makes (read_file's rules, allowed by default) instead of asking for it.
// A command is known only in a form that writes nothing, runs nothing else and reaches no
// network: `ls`, `cat`, `grep` and their kind with any of their options but the few that write
// (`sort -o`, `tree -o`) or run a program (`rg --pre`, `find -exec`), `sed -n 'Np'`, and git's
// commands that show the repository. Anything else, or any option not known here to be harmless
// where one could be harmful, is not known: it is asked as before.

/** How one command's words are read: options that take the next word, options that make it unsafe. */
interface Spec {
  /**
   * Options that must have a value (the next word, unless written `--opt=VALUE` or `-oVALUE`); one
   * whose value is optional (`--color[=WHEN]`) takes it only after `=`, and is not listed.
   */
  valued?: readonly string[];
  /** Options (long names, or single letters of short ones) after which the command is not known to only read. */
  unsafe?: readonly string[];
  /** Options whose value is a file the command reads. */
  reads?: readonly string[];
  /** What the operands are: files read (default), a pattern then files, or none read. */
  operands?: 'files' | 'pattern' | 'none';
  /** Read when no file is named (`ls`: the directory); default: standard input, no file. */
  whenNone?: string;
  /** At most this many operands (uniq's second is a file it writes). */
  maxOperands?: number;
}

const HEAD_TAIL = ['-n', '--lines', '-c', '--bytes'];
/** grep's and rg's: patterns, counts and context lines. */
const MATCHES = ['-e', '--regexp', '-m', '--max-count', '-A', '--after-context', '-B', '--before-context', '-C', '--context'];
const SUMS: Spec = { valued: [] };

const SPECS: Record<string, Spec> = {
  ls: {
    valued: [
      '-I',
      '--ignore',
      '-w',
      '--width',
      '--hide',
      '--format',
      '--sort',
      '--time',
      '--time-style',
      '--quoting-style',
      '--indicator-style',
      '--block-size',
      '-T',
      '--tabsize',
    ],
    whenNone: '.',
  },
  cat: {},
  tac: {},
  nl: { valued: ['-b', '-d', '-f', '-h', '-i', '-l', '-n', '-s', '-v', '-w'] },
  head: { valued: HEAD_TAIL },
  tail: { valued: [...HEAD_TAIL, '-s', '--sleep-interval', '--pid', '--max-unchanged-stats'] },
  wc: { reads: ['--files0-from'] },
  stat: { valued: ['-c', '--format', '--printf'] },
  file: {
    valued: ['-e', '--exclude', '-F', '--separator', '-P', '--parameter'],
    reads: ['-m', '--magic-file', '-f', '--files-from'],
    unsafe: ['C', '--compile'],
  },
  du: {
    valued: ['-d', '--max-depth', '-B', '--block-size', '-t', '--threshold', '--exclude', '--time-style'],
    reads: ['-X', '--exclude-from', '--files0-from'],
    whenNone: '.',
  },
  cut: { valued: ['-b', '--bytes', '-c', '--characters', '-f', '--fields', '-d', '--delimiter', '--output-delimiter'] },
  sort: {
    valued: ['-k', '--key', '-t', '--field-separator', '-S', '--buffer-size', '--parallel', '--batch-size'],
    reads: ['--files0-from'],
    // -o writes its file; -T and --compress-program write and run.
    unsafe: ['o', '--output', 'T', '--temporary-directory', '--compress-program'],
  },
  uniq: { valued: ['-f', '--skip-fields', '-s', '--skip-chars', '-w', '--check-chars'], maxOperands: 1 },
  diff: {
    valued: ['-C', '-U', '-W', '--width', '-I', '--ignore-matching-lines', '--label', '-x', '--exclude'],
    reads: ['-X', '--exclude-from', '--from-file', '--to-file'],
  },
  cmp: { valued: ['-i', '--ignore-initial', '-n', '--bytes'] },
  comm: { valued: ['--output-delimiter'] },
  grep: {
    valued: [
      ...MATCHES,
      '--include',
      '--exclude',
      '--exclude-dir',
      '--label',
      '-d',
      '--directories',
      '-D',
      '--devices',
      '--binary-files',
      '--group-separator',
    ],
    reads: ['-f', '--file', '--exclude-from'],
    operands: 'pattern',
  },
  rg: {
    valued: [
      '-g',
      '--glob',
      '--iglob',
      '-t',
      '--type',
      '-T',
      '--type-not',
      '--type-add',
      '--type-clear',
      ...MATCHES,
      '-M',
      '--max-columns',
      '-j',
      '--threads',
      '--max-depth',
      '-d',
      '--max-filesize',
      '--color',
      '--colors',
      '-E',
      '--encoding',
      '--sort',
      '--sortr',
      '-r',
      '--replace',
      '--path-separator',
      '--context-separator',
      '--field-match-separator',
      '--field-context-separator',
      '--engine',
      '--dfa-size-limit',
      '--regex-size-limit',
    ],
    reads: ['-f', '--file', '--ignore-file'],
    // --pre and --hostname-bin run programs; -z runs decompressors.
    unsafe: ['--pre', '--pre-glob', '--hostname-bin', 'z', '--search-zip'],
    operands: 'pattern',
    whenNone: '.',
  },
  tree: { valued: ['-L', '-P', '-I', '--charset', '--filelimit', '--timefmt'], reads: ['--fromfile'], unsafe: ['o'], whenNone: '.' },
  // It changes the directory of the commands after it (engine.ts judges their relative paths in both).
  cd: { maxOperands: 1 },
  readlink: {},
  realpath: { valued: ['--relative-to', '--relative-base'] },
  basename: { valued: ['-s', '--suffix'], operands: 'none' },
  dirname: { operands: 'none' },
  pwd: { operands: 'none' },
  which: { operands: 'none' },
  whoami: { operands: 'none', maxOperands: 0 },
  md5sum: SUMS,
  sha1sum: SUMS,
  sha256sum: SUMS,
  sha512sum: SUMS,
  b2sum: SUMS,
  cksum: SUMS,
  strings: { valued: ['-n', '--bytes', '-t', '--radix', '-e', '--encoding', '-s', '--output-separator'] },
  od: { valued: ['-A', '--address-radix', '-j', '--skip-bytes', '-N', '--read-bytes', '-t', '--format', '-w', '--width'] },
};
SPECS.egrep = SPECS.grep!;
SPECS.fgrep = SPECS.grep!;

/** Long option `--name=value` → `--name`. */
const nameOf = (o: string) => (o.startsWith('--') ? o.split('=', 1)[0]! : o);

/**
 * The files `argv` reads when it is a command known to only read ([] for none: standard input,
 * or nothing), or null when it is not known to (another command, an option that writes or runs
 * something, a form not known here).
 */
export function readsOf(argv: readonly string[]): string[] | null {
  const [name, ...args] = argv;
  if (name === undefined || name.includes('/')) return null;
  if (name === 'git') return gitReads(args);
  if (name === 'sed') return sedReads(args);
  if (name === 'find') return findReads(args);
  const spec = Object.hasOwn(SPECS, name) ? SPECS[name]! : null;
  return spec ? specReads(spec, args) : null;
}

/** What the words of a command were found to be: files options name, operands, whether a pattern came with -e or -f. */
interface Scan {
  reads: string[];
  operands: string[];
  patternGiven: boolean;
}

function specReads(spec: Spec, args: readonly string[]): string[] | null {
  const scan: Scan = { reads: [], operands: [], patternGiven: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      scan.operands.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') scan.operands.push(a);
    else {
      const took = option(spec, a, args[i + 1], scan);
      if (took === null) return null;
      i += took;
    }
  }
  return filesOf(spec, scan, args);
}

/**
 * An option word `a` (`next` the word after it): null when it makes the command unsafe or its
 * value is missing, else how many more words it took (0 or 1), its value noted in `scan`.
 */
function option(spec: Spec, a: string, next: string | undefined, scan: Scan): number | null {
  if (unsafeOption(spec, a)) return null;
  const valued = (o: string) => spec.valued?.includes(o) === true || spec.reads?.includes(o) === true;
  const { key, attached } = optionParts(a, valued);
  if (!key) return 0;
  const value = attached ?? next;
  if (value === undefined) return null;
  if (spec.reads?.includes(key)) scan.reads.push(value);
  if (key === '-e' || key === '--regexp' || key === '-f' || key === '--file') scan.patternGiven = true;
  return attached === undefined ? 1 : 0;
}

/** A long option named unsafe, or a short cluster with an unsafe letter in it. */
function unsafeOption(spec: Spec, a: string): boolean {
  const unsafe = spec.unsafe ?? [];
  return a.startsWith('--') ? unsafe.includes(nameOf(a)) : [...a.slice(1)].some((c) => unsafe.includes(c));
}

/**
 * The option of `a` that takes a value ('' for none) and the value written with it
 * (`--opt=VALUE`; a short one's after its letter, `-n5`, `-rA3`), if it was.
 */
function optionParts(a: string, valued: (o: string) => boolean): { key: string; attached?: string } {
  if (a.startsWith('--')) {
    const key = nameOf(a);
    if (!valued(key)) return { key: '' };
    return { key, attached: a.includes('=') ? a.slice(a.indexOf('=') + 1) : undefined };
  }
  const letters = [...a.slice(1)];
  const at = letters.findIndex((c) => valued(`-${c}`));
  if (at < 0) return { key: '' };
  return { key: `-${letters[at]}`, attached: at < letters.length - 1 ? a.slice(2 + at) : undefined };
}

/** The files a command reads, from its scanned words; null when it is not a form known here. */
function filesOf(spec: Spec, scan: Scan, args: readonly string[]): string[] | null {
  const { operands, patternGiven } = scan;
  if (spec.maxOperands !== undefined && operands.length > spec.maxOperands) return null;
  if (spec.operands === 'none') return scan.reads;
  const pattern = spec.operands === 'pattern' && !patternGiven;
  if (pattern && !operands.length) return null;
  const files = pattern ? operands.slice(1) : [...operands];
  if (!files.length && spec.whenNone) files.push(spec.whenNone);
  // grep -r without a file searches the directory.
  if (!files.length && spec.operands === 'pattern' && args.some((a) => /^-[a-zA-Z]*[rR]/.test(a) || a === '--recursive')) files.push('.');
  return [...scan.reads, ...files.filter((f) => f !== '-')];
}

/** `sed -n 'Np'` / `sed -n 'M,Np'` (lines printed, nothing else), with the files it reads. */
function sedReads(args: readonly string[]): string[] | null {
  const [quiet, script, ...files] = args;
  if (quiet !== '-n' && quiet !== '--quiet' && quiet !== '--silent') return null;
  if (script === undefined || !/^(?:\d+|\$)(?:,(?:\d+|\$))?p$/.test(script)) return null;
  if (files.some((f) => f.startsWith('-'))) return null;
  return files;
}

/** find's actions that write or run something. */
const FIND_UNSAFE = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fls', '-fprint', '-fprint0', '-fprintf']);

/** find's starting points (before its expression), when its expression does nothing but test and print. */
function findReads(args: readonly string[]): string[] | null {
  if (args.some((a) => FIND_UNSAFE.has(a))) return null;
  let i = 0;
  while (i < args.length && /^-[HLP]$/.test(args[i]!)) i++;
  const starts: string[] = [];
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('-') || a === '(' || a === '!' || a === ')' || a === ',') break;
    starts.push(a);
  }
  return starts.length ? starts : ['.'];
}

/** git's commands that only show the repository, with what makes one of them write. */
const GIT_SHOWS = new Set([
  'status',
  'log',
  'diff',
  'show',
  'blame',
  'ls-files',
  'ls-tree',
  'rev-parse',
  'rev-list',
  'describe',
  'shortlog',
  'grep',
  'cat-file',
  'merge-base',
  'name-rev',
  'count-objects',
]);
/** Options that write a file (`--output`), open a pager on found files, or run an external diff. */
const GIT_UNSAFE = /^(?:--output(?:=|$)|--open-files-in-pager|-O|--ext-diff$|--textconv$)/;
/** Listing forms of git's commands that can also change things: no operand but these options. */
const GIT_LISTS: Record<string, RegExp> = {
  branch: /^(?:-a|-r|-v|-vv|--list|--all|--remotes|--verbose|--show-current|--no-color|--color(?:=\w+)?|--contains|--merged|--no-merged)$/,
  tag: /^(?:-l|--list|-n\d*|--contains|--merged|--no-merged|--sort=\S+)$/,
  remote: /^(?:-v|--verbose)$/,
};
/** git's commands whose one listing form is `list` (`git stash` alone stashes). */
const GIT_LIST_ONLY = new Set(['stash', 'worktree']);

/**
 * git: only its commands that show (`status`, `log`, `diff`, …) and the listing forms of `branch`,
 * `tag`, `remote`, and `stash list`, `worktree list`; no option before the command but `--no-pager`
 * (`-c` and `--exec-path` would have it run anything). It reads the repository: the directory.
 */
function gitReads(args: readonly string[]): string[] | null {
  let i = 0;
  while (args[i] === '--no-pager' || args[i] === '--no-optional-locks') i++;
  const cmd = args[i];
  if (cmd === undefined) return null;
  const rest = args.slice(i + 1);
  if (GIT_SHOWS.has(cmd)) return rest.some((a) => GIT_UNSAFE.test(a)) ? null : ['.'];
  if (GIT_LIST_ONLY.has(cmd)) return rest.length === 1 && rest[0] === 'list' ? ['.'] : null;
  const list = Object.hasOwn(GIT_LISTS, cmd) ? GIT_LISTS[cmd]! : null;
  if (list && rest.every((a) => list.test(a))) return ['.'];
  return null;
}
