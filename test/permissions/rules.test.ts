// Rules: their syntax, the rules file (read, appended, a bad line named by file and line), what
// a pattern matches (text with ` *`, paths resolved), precedence, the rule reported as deciding,
// and the rules an answer proposes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRule, ruleText } from '../../src/permissions/rule.js';
import { appendRule, parseRulesText, readRulesFile, RulesFileError } from '../../src/permissions/rules-file.js';
import { pathMatches, textMatches } from '../../src/permissions/match.js';
import { PermissionEngine, proposeRules } from '../../src/permissions/engine.js';
import { loadShellParser, partsWith } from '../../src/permissions/shell.js';
import { configRules, ConfigRuleError } from '../../src/permissions/config-rules.js';

const tmp = () => realpathSync(mkdtempSync(join(tmpdir(), 'clm-rules-')));

test('rule syntax: tool, tool(pattern); what is wrong is said', () => {
  assert.deepEqual(parseRule('shell_exec'), { tool: 'shell_exec', pattern: null });
  assert.deepEqual(parseRule('shell_exec(echo (a) b)'), { tool: 'shell_exec', pattern: 'echo (a) b' });
  assert.deepEqual(parseRule('  mcp__github__*  '), { tool: 'mcp__github__*', pattern: null });
  assert.match(parseRule('shell_exec()') as string, /empty pattern/);
  assert.match(parseRule('shell_exec(ls') as string, /no closing '\)'/);
  assert.match(parseRule('(ls)') as string, /does not start with a tool name/);
  assert.match(parseRule('shell exec') as string, /not a tool name/);
  assert.equal(ruleText({ tool: 'write_file', pattern: 'src/**' }), 'write_file(src/**)');
});

test('the rules file: rules with their lines; a malformed line is an error naming file and line', () => {
  const rules = parseRulesText(
    '# head\n\nallow shell_exec(npm test *)\n  deny   write_file(.git/**)  \nask mcp__x__*\n',
    '/c/permissions.rules',
  );
  assert.deepEqual(
    rules.map((r) => [r.effect, ruleText(r), r.source.label]),
    [
      ['allow', 'shell_exec(npm test *)', 'permissions.rules:3'],
      ['deny', 'write_file(.git/**)', 'permissions.rules:4'],
      ['ask', 'mcp__x__*', 'permissions.rules:5'],
    ],
  );
  for (const [text, line, why] of [
    ['allow ls\npermit shell_exec(ls)\n', 2, /expected 'allow', 'ask' or 'deny'/],
    ['\n\n\ndeny shell_exec(ls\n', 4, /no closing/],
    ['allow\n', 1, /expected/],
  ] as const) {
    assert.throws(
      () => parseRulesText(text, '/c/permissions.rules'),
      (e: unknown) =>
        e instanceof RulesFileError && e.line === line && why.test(e.message) && e.message.startsWith(`/c/permissions.rules:${line}: `),
    );
  }
});

test('appendRule makes the file with its header, appends, and says the line; readRulesFile reads it back', () => {
  const dir = tmp();
  try {
    const file = join(dir, 'sub', 'permissions.rules');
    assert.deepEqual(readRulesFile(file), [], 'no file: no rules');
    const a = appendRule(file, 'allow', { tool: 'shell_exec', pattern: 'npm test *' });
    const b = appendRule(file, 'deny', { tool: 'shell_exec', pattern: 'rm *' });
    const back = readRulesFile(file);
    assert.deepEqual(
      back.map((r) => [r.effect, ruleText(r), r.source.line]),
      [
        ['allow', 'shell_exec(npm test *)', a.source.line],
        ['deny', 'shell_exec(rm *)', b.source.line],
      ],
    );
    // A hand-edited file without a final newline gets one before the next rule.
    writeFileSync(file, `${readFileSync(file, 'utf8')}allow shell_exec(ls *)`);
    const c = appendRule(file, 'allow', { tool: 'read_file', pattern: null });
    assert.equal(readRulesFile(file).at(-1)?.source.line, c.source.line);
    assert.equal(readRulesFile(file).length, 4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('text patterns: * is anything, a final " *" also matches nothing, \\ makes a wildcard literal', () => {
  assert.ok(textMatches('npm test *', 'npm test'));
  assert.ok(textMatches('npm test *', 'npm test -- -u'));
  assert.ok(!textMatches('npm test *', 'npm tests'));
  assert.ok(textMatches('npm test*', 'npm tests'));
  assert.ok(!textMatches('npm test', 'npm test --watch'));
  assert.ok(textMatches('echo ?', 'echo x'));
  assert.ok(textMatches('echo \\*', 'echo *'));
  assert.ok(!textMatches('echo \\*', 'echo x'));
  assert.ok(textMatches('echo *', 'echo "a\nb"'), '* spans lines');
});

test('path patterns: relative to the directory clm runs in, resolved; ~ and absolute ones', () => {
  const dir = tmp();
  try {
    const cwd = join(dir, 'ws');
    mkdirSync(join(cwd, 'src', 'a'), { recursive: true });
    mkdirSync(join(dir, 'home'));
    symlinkSync('/etc', join(cwd, 'src', 'etc-link'));
    const ctx = { cwd, home: join(dir, 'home') };
    assert.ok(pathMatches('src/**', 'src/a/b.ts', ctx));
    assert.ok(pathMatches('src/**', './src/new/dir/x', ctx));
    assert.ok(pathMatches('src/**', join(cwd, 'src/a/b.ts'), ctx), 'an absolute path inside');
    assert.ok(!pathMatches('src/**', 'src/../../etc/passwd', ctx));
    assert.ok(!pathMatches('src/**', 'src/etc-link/passwd', ctx), 'a link out of src is not in src');
    assert.ok(pathMatches('src/*.ts', 'src/x.ts', ctx));
    assert.ok(!pathMatches('src/*.ts', 'src/a/x.ts', ctx), '* stays in one segment');
    assert.ok(pathMatches('src/**/x.ts', 'src/x.ts', ctx), '**/ is any number of segments, none too');
    assert.ok(pathMatches('~/.ssh/**', '~/.ssh/id_rsa', ctx));
    assert.ok(pathMatches('~/.ssh/**', join(dir, 'home/.ssh/id_rsa'), ctx));
    assert.ok(pathMatches('/etc/**', 'src/etc-link/passwd', ctx), 'judged where it really is');
    assert.ok(pathMatches('notes.txt', 'notes.txt', ctx));
    assert.ok(!pathMatches('notes.txt', 'src/notes.txt', ctx));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const rules = (text: string) => parseRulesText(text, '/c/permissions.rules');
const call = (tool: string, args: object, gated = true) => ({ tool, args: JSON.stringify(args), gated });

test('deny beats ask beats allow, however specific; the most specific of the winning effect is named', async () => {
  const p = await loadShellParser();
  const parse = (c: string) => partsWith(p, c);
  const e = new PermissionEngine({
    rules: rules(
      'allow shell_exec(git push origin main)\nask shell_exec(git push *)\nallow shell_exec\ndeny shell_exec(git push --force *)\nallow shell_exec(git *)\n',
    ),
    cwd: '/',
    home: undefined,
  });
  const d = (command: string) => e.judgeWith(parse, call('shell_exec', { command }));
  assert.equal(d('git push origin main').decision, 'ask', 'the exact allow does not beat the ask');
  assert.equal(d('git push --force x').decision, 'deny');
  const r = d('git status');
  assert.equal(r.decision, 'allow');
  assert.equal(r.rule?.source.line, 5, 'git * is more specific than the bare shell_exec');
  // A bare rule covers what the parser cannot read; a pattern never does.
  assert.equal(d('echo "unterminated').decision, 'allow');
  const narrow = new PermissionEngine({ rules: rules('allow shell_exec(*)\n'), cwd: '/', home: undefined });
  assert.equal(narrow.judgeWith(parse, call('shell_exec', { command: 'echo "unterminated' })).decision, 'ask');
  assert.equal(narrow.judgeWith(parse, call('shell_exec', { command: '$CMD' })).decision, 'ask');
  assert.equal(narrow.judgeWith(parse, call('shell_exec', { command: 'echo ok' })).decision, 'allow');
});

test('other tools: defaults by no-prompt, patterns over paths and arguments, --allow-tools as "only"', () => {
  const e = new PermissionEngine({
    rules: rules('deny read_file(~/.ssh/**)\nallow mcp__gh__*\ndeny mcp__gh__delete_repo\nallow weather(Paris)\n'),
    cwd: '/work',
    home: '/home/u',
  });
  const j = (tool: string, args: object, gated = true) => e.judgeWith(null, call(tool, args, gated));
  assert.equal(j('read_file', { path: 'a.txt' }, false).decision, 'allow', 'a no-prompt tool runs by default');
  assert.equal(j('read_file', { path: '/home/u/.ssh/id_rsa' }, false).decision, 'deny', 'rules apply to no-prompt tools too');
  assert.equal(j('write_file', { path: 'a.txt', content: 'x' }).decision, 'ask');
  assert.equal(j('mcp__gh__list', {}).decision, 'allow');
  assert.equal(j('mcp__gh__delete_repo', { name: 'x' }).decision, 'deny');
  assert.equal(j('weather', { city: 'Paris' }).decision, 'allow');
  assert.equal(j('weather', { city: 'Oslo' }).decision, 'ask');
  const only = new PermissionEngine({ rules: [], only: ['read_*'], cwd: '/', home: undefined });
  const r = only.judgeWith(null, call('write_file', { path: 'x' }));
  assert.equal(r.decision, 'deny');
  assert.equal(r.rule?.source.label, 'not in --allow-tools');
});

test('session grants are added and revoked; the engine lists them apart', () => {
  const e = new PermissionEngine({ rules: rules('allow ls\n'), cwd: '/', home: undefined });
  const g = {
    effect: 'allow' as const,
    tool: 'write_file',
    pattern: 'src/**',
    source: { kind: 'session' as const, label: 'this session' },
  };
  e.add(g);
  assert.equal(e.judgeWith(null, call('write_file', { path: 'src/a' })).decision, 'allow');
  assert.deepEqual(e.grants(), [g]);
  assert.ok(e.revoke(g));
  assert.ok(!e.revoke(g));
  assert.equal(e.judgeWith(null, call('write_file', { path: 'src/a' })).decision, 'ask');
});

test('an answer proposes narrow rules: the command and its first word that is not an option, a directory, the tool', async () => {
  const p = await loadShellParser();
  const e = new PermissionEngine({ rules: rules('allow shell_exec(git status *)\n'), cwd: '/', home: undefined });
  const prop = (tool: string, args: object, effect: 'allow' | 'deny' = 'allow') =>
    proposeRules(
      e.judgeWith((c) => partsWith(p, c), call(tool, args)),
      effect,
    ).map(ruleText);
  assert.deepEqual(prop('shell_exec', { command: 'npm test' }), ['shell_exec(npm test *)']);
  assert.deepEqual(prop('shell_exec', { command: 'git status && rm -rf build' }), ['shell_exec(rm -rf build *)']);
  assert.deepEqual(prop('shell_exec', { command: 'npm run lint && echo x > out.txt' }), [
    'shell_exec(npm run lint *)',
    'shell_exec(echo x *)',
    'write_file(out.txt)',
  ]);
  assert.deepEqual(prop('shell_exec', { command: 'NODE_ENV=test npm test' }), ['shell_exec(NODE_ENV=test npm test *)']);
  assert.deepEqual(prop('shell_exec', { command: 'ls *.ts' }), ['shell_exec(ls \\*.ts *)']);
  assert.deepEqual(prop('shell_exec', { command: '$CMD' }), [], 'no pattern can allow what the parser cannot read');
  assert.deepEqual(prop('write_file', { path: 'src/a/b.ts', content: '' }), ['write_file(src/a/**)']);
  assert.deepEqual(prop('write_file', { path: 'src/a/b.ts', content: '' }, 'deny'), ['write_file(src/a/b.ts)']);
  assert.deepEqual(prop('mcp__gh__create', { title: 'x' }), ['mcp__gh__create']);
});

test('config.lua rules carry the file and line they are written on; a bad one is an error naming them', () => {
  const dir = tmp();
  try {
    const config = join(dir, 'config.lua');
    const profile = join(dir, 'agents', 'coder.lua');
    mkdirSync(join(dir, 'agents'));
    writeFileSync(
      config,
      'return {\n  permissions = {\n    allow = { "shell_exec(npm test *)" },\n    deny = { \'shell_exec(rm *)\' },\n  },\n}\n',
    );
    writeFileSync(profile, 'return {\n  permissions = { allow = { "shell_exec(make *)" } },\n}\n');
    const rs = configRules({ allow: ['shell_exec(make *)'], deny: ['shell_exec(rm *)'] }, [profile, config]);
    assert.deepEqual(
      rs.map((r) => [r.effect, ruleText(r), r.source.label]),
      [
        ['allow', 'shell_exec(make *)', 'agents/coder.lua:2'],
        ['deny', 'shell_exec(rm *)', 'config.lua:4'],
      ],
    );
    writeFileSync(config, 'return {\n  permissions = {\n\n    ask = { "shell_exec(ls" },\n  },\n}\n');
    assert.throws(
      () => configRules({ ask: ['shell_exec(ls'] }, [config]),
      (e: unknown) => e instanceof ConfigRuleError && e.line === 4 && /^config\.lua:4: permissions\.ask: .*no closing/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
