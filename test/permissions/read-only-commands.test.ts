// Commands known to only read: which forms are known and what they read (read-only-commands.ts),
// and how the engine decides them — as the files they read, by read_file's rules — only where it
// is told they run confined, never over a rule of their own, never for a form that writes or runs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PermissionEngine } from '../../src/permissions/engine.js';
import { readsOf } from '../../src/permissions/read-only-commands.js';
import { parseRulesText } from '../../src/permissions/rules-file.js';
import { loadShellParser, partsWith } from '../../src/permissions/shell.js';

test('known read-only forms and the files they read; a form that writes, runs or is not known is not', { timeout: 10_000 }, () => {
  const reads = (line: string) => readsOf(line.split(' '));
  // What each reads: its file operands, the directory when it reads one by default, a file an option names.
  assert.deepEqual(reads('ls -la'), ['.']);
  assert.deepEqual(reads('ls -l --sort time src'), ['src']);
  assert.deepEqual(reads('cat a.txt - b.txt'), ['a.txt', 'b.txt']);
  assert.deepEqual(reads('head -n 20 README.md'), ['README.md']);
  assert.deepEqual(reads('tail -n5 log'), ['log']);
  assert.deepEqual(reads('wc -l'), [], 'standard input');
  assert.deepEqual(reads('grep -rn foo'), ['.']);
  assert.deepEqual(reads('grep -n -A 3 foo src/a.ts'), ['src/a.ts']);
  assert.deepEqual(reads('grep -e foo -e bar x y'), ['x', 'y'], 'with -e every operand is a file');
  assert.deepEqual(reads('grep -f ~/.ssh/patterns x'), ['~/.ssh/patterns', 'x'], 'a pattern file is read too');
  assert.deepEqual(reads('grep --color=auto foo x'), ['x']);
  assert.deepEqual(reads('rg -n --glob *.ts foo'), ['.']);
  assert.deepEqual(reads('rg foo -- -weird'), ['-weird']);
  assert.deepEqual(reads('find src -name x -type f'), ['src']);
  assert.deepEqual(reads('find -L . ( -name a -o -name b ) -print'), ['.']);
  assert.deepEqual(reads('sed -n 10,40p src/a.ts'), ['src/a.ts']);
  assert.deepEqual(reads('sort -k 2 -t , data.csv'), ['data.csv']);
  assert.deepEqual(reads('uniq -c counts'), ['counts']);
  assert.deepEqual(reads('diff -u a b'), ['a', 'b']);
  assert.deepEqual(reads('pwd'), []);
  assert.deepEqual(reads('which node'), []);
  for (const git of [
    'git status',
    'git log --oneline -5',
    'git diff HEAD~1 -- src',
    'git show HEAD:README.md',
    'git branch -a',
    'git branch',
    'git --no-pager log',
    'git stash list',
    'git remote -v',
    'git tag',
  ])
    assert.deepEqual(reads(git), ['.'], git);

  const unknown = [
    // Writes a file, or removes one.
    'sort -o out in',
    'sort --output=out in',
    'sort -T /tmp in',
    'uniq in out',
    'tree -o out',
    'find . -delete',
    'find . -name x -fprint out',
    'find . -exec rm {} ;',
    'sed -i s/a/b/ x',
    'sed -n 1p;w out x',
    'sed -n 1,5w out x',
    'sed 1,5p x',
    'git diff --output=x',
    'git log --output x',
    'git stash',
    'git stash pop',
    'git branch new-branch',
    'git branch -D main',
    'git tag v1',
    'git remote add o url',
    'git worktree add x',
    'git commit -m x',
    'git checkout .',
    'file -C -m magic',
    // Runs another program.
    'rg --pre cat foo',
    'rg -z foo',
    'rg --search-zip foo',
    'git -c core.pager=sh log',
    'git --exec-path=/tmp log',
    'git -C /elsewhere status',
    'git diff --ext-diff',
    'git grep -O foo',
    // Not known, or a name given by a path.
    'awk {print} x',
    'npm test',
    'echo hi',
    '/bin/cat x',
    'whoami x',
    'grep',
    'sed -n',
  ];
  for (const line of unknown) assert.equal(reads(line), null, line);
  assert.equal(readsOf([]), null);
  assert.equal(readsOf(['constructor']), null, 'no name of an object property is a command');
  assert.equal(readsOf(['git', 'constructor']), null);
});

const call = (command: string) => ({ tool: 'shell_exec', args: JSON.stringify({ command }), gated: true });

test('the engine decides a read-only command as its reads, where it runs confined, under its own rules first', {
  timeout: 20_000,
}, async () => {
  const p = await loadShellParser();
  const parse = (c: string) => partsWith(p, c);
  let confined = true;
  const e = new PermissionEngine({
    rules: parseRulesText(
      'deny read_file(~/.ssh/**)\nask read_file(secret/**)\nask shell_exec(cat notes *)\ndeny shell_exec(grep -r *)\n',
      '/c/permissions.rules',
    ),
    cwd: '/w',
    home: '/home/u',
    readOnlyCommands: () => confined,
  });
  const d = (command: string) => e.judgeWith(parse, call(command));

  const ls = d('ls -la | wc -l');
  assert.equal(ls.decision, 'allow');
  assert.ok(ls.parts.every((x) => x.readOnly && x.rule === null));
  assert.equal(d('git status && git diff --stat').decision, 'allow');
  // The files it reads, judged by read_file's rules; the strongest names the rule.
  const key = d('cat README.md ~/.ssh/id_ed25519');
  assert.equal(key.decision, 'deny');
  assert.equal(key.rule?.source.line, 1);
  assert.equal(d('head -n 3 secret/a.txt').decision, 'ask');
  assert.equal(d('grep -f ~/.ssh/list x').decision, 'deny', 'a file an option names is read too');
  // Its own rules come first: a rule about the command is not overruled by its reads.
  assert.equal(d('cat notes todo.txt').decision, 'ask');
  assert.equal(d('grep -r foo .').decision, 'deny');
  // What is not known to only read is asked as before: a form that writes, a glob, expansions, an
  // assignment in front, a wrapper that runs it as another user, xargs' unseen arguments.
  for (const c of [
    'sort -o x y',
    'cat *.txt',
    'cat "$F"',
    'cat ~root/x',
    'LD_PRELOAD=/tmp/x.so cat a',
    'sudo cat /etc/shadow',
    'ls | xargs cat',
    'ls > listing',
  ])
    assert.equal(d(c).decision, 'ask', c);
  // After one cd to a directory written out, a relative path is judged there and here (the cd
  // may fail); after cds not known it may name any file: asked. An absolute one is known either way.
  const partOf = (command: string, text: string) => d(command).parts.find((x) => x.subject.kind === 'command' && x.subject.text === text);
  assert.equal(d('cd /tmp && cat a').decision, 'allow');
  assert.equal(d('cd src && git status').decision, 'allow');
  assert.equal(d('cd ~/.ssh && cat id_rsa').decision, 'deny', 'read where the cd went');
  assert.equal(partOf('cd secret && head a', 'head a')?.decision, 'ask');
  assert.equal(partOf('cd /tmp; head secret/a', 'head secret/a')?.decision, 'ask', 'read here, where a failed cd leaves it');
  for (const [c, text] of [
    ['cd a && cd b && cat f', 'cat f'],
    ['cd "$D" && cat f', 'cat f'],
    ['cd - && cat f', 'cat f'],
    ['pushd /tmp && cat f', 'cat f'],
  ])
    assert.equal(partOf(c!, text!)?.decision, 'ask', c);
  assert.equal(partOf('cd a && cd b; cat /w/a', 'cat /w/a')?.decision, 'allow');
  // Not confined (--sandbox full, no sandbox here): asked.
  confined = false;
  assert.equal(d('ls -la').decision, 'ask');
  assert.equal(d('ls -la').parts[0]?.readOnly, undefined);
  // No option given: asked, as before.
  const plain = new PermissionEngine({ rules: [], cwd: '/w', home: '/home/u' });
  assert.equal(plain.judgeWith(parse, call('git status')).decision, 'ask');
});
