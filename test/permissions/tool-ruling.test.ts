// How the calls of one tool are decided (what `/tools` shows): the rules over every call of it or
// the default, and the narrower rules that decide some calls otherwise. A property holds it to
// the real decision: whatever the rules and the call, the call gets the tool's decision or the
// effect of one of those narrower rules, and a call decided otherwise is decided by one of them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PermissionEngine } from '../../src/permissions/engine.js';
import { type Rule, ruleText } from '../../src/permissions/rule.js';
import { parseRulesText } from '../../src/permissions/rules-file.js';
import { loadShellParser, partsWith } from '../../src/permissions/shell.js';
import { check, fc } from '../fixtures/fuzz.js';

const rules = (text: string) => parseRulesText(text, '/c/permissions.rules');
const engine = (text: string, only?: string[]) => new PermissionEngine({ rules: rules(text), only, cwd: '/work', home: '/home/u' });
const summary = (e: PermissionEngine, tool: string, gated = true) => {
  const t = e.toolRuling(tool, gated);
  return [t.decision, t.rule ? ruleText(t.rule) : null, t.some.map((r) => `${r.effect} ${ruleText(r)}`)];
};

test('a tool without rules gets the default; a bare rule or an all-matching pattern decides every call', () => {
  const e = engine('allow weather(*)\ndeny mcp__gh__*\nask read_file\nallow write_file(**)\nallow list_dir(*)\n');
  assert.deepEqual(summary(e, 'notes'), ['ask', null, []]);
  assert.deepEqual(summary(e, 'clock', false), ['allow', null, []], 'a no-prompt tool runs by default');
  assert.deepEqual(summary(e, 'weather'), ['allow', 'weather(*)', []], '* matches any arguments');
  assert.deepEqual(summary(e, 'mcp__gh__delete'), ['deny', 'mcp__gh__*', []]);
  assert.deepEqual(summary(e, 'read_file', false), ['ask', 'read_file', []]);
  assert.deepEqual(summary(e, 'write_file'), ['allow', 'write_file(**)', []], '** matches any path');
  // `*` stays in one path segment: it decides only some calls of a file tool.
  assert.deepEqual(summary(e, 'list_dir', false), ['allow', null, []], 'an allow cannot change what is allowed anyway');
  assert.deepEqual(summary(engine('allow write_file(*)\n'), 'write_file'), ['ask', null, ['allow write_file(*)']]);
});

test('narrower rules are named when they can decide a call otherwise, the strongest first', () => {
  const e = engine('allow mcp__gh__*\ndeny mcp__gh__*(*--force*)\nask mcp__gh__*(delete *)\nallow mcp__gh__list(x)\n');
  assert.deepEqual(summary(e, 'mcp__gh__list'), ['allow', 'mcp__gh__*', ['deny mcp__gh__*(*--force*)', 'ask mcp__gh__*(delete *)']]);
  // Under a bare deny nothing else counts.
  assert.deepEqual(summary(engine('deny shell_exec\nallow shell_exec(ls)\n'), 'shell_exec'), ['deny', 'shell_exec', []]);
  // Under the default, a pattern of another effect does; one of the same does not.
  assert.deepEqual(summary(engine('ask notes(a*)\nallow notes(b*)\n'), 'notes'), ['ask', null, ['allow notes(b*)']]);
});

test('a shell tool: no pattern covers every command; what commands write and read is judged by the file tools’ rules', () => {
  const e = engine('allow shell_exec(*)\ndeny write_file(.git/**)\nask read_file(~/.ssh/**)\nallow list_dir\n');
  const t = e.toolRuling('shell_exec', true);
  assert.equal(t.shell, true);
  assert.deepEqual(summary(e, 'shell_exec'), ['ask', null, ['deny write_file(.git/**)', 'allow shell_exec(*)']]);
  const allowed = engine('allow shell_exec\ndeny shell_exec(rm *)\nask read_file(~/.ssh/**)\n');
  assert.deepEqual(summary(allowed, 'shell_exec'), ['allow', 'shell_exec', ['deny shell_exec(rm *)', 'ask read_file(~/.ssh/**)']]);
  assert.equal(allowed.toolRuling('bg_exec', true).rule, null, 'the rules of shell_exec are not those of bg_exec');
});

test('--allow-tools: a tool it does not name is denied whatever the rules say', () => {
  const e = engine('allow write_file\n', ['read_*']);
  assert.deepEqual(summary(e, 'write_file'), ['deny', 'write_file', []]);
  assert.equal(e.toolRuling('write_file', true).rule?.source.label, 'not in --allow-tools');
  assert.deepEqual(summary(e, 'read_file', false), ['allow', null, []]);
});

test('property: every call gets its tool’s decision or one of the narrower rules’ effects, by one of those rules', async () => {
  const p = await loadShellParser();
  const parse = (c: string) => partsWith(p, c);
  const TOOLS = ['shell_exec', 'write_file', 'notes'];
  const PATTERNS: Record<string, string[]> = {
    shell_exec: ['*', 'git *', 'git status *', 'rm *', 'ls'],
    write_file: ['*', '**', 'src/**', '.git/**', 'a.txt', '/etc/**'],
    notes: ['*', '**', 'a*', 'b', '* *'],
  };
  const ARGS: Record<string, object[]> = {
    shell_exec: ['git status', 'git push', 'rm -rf x', 'ls > a.txt', 'echo x > .git/y', '$CMD', 'ls && git status', 'cat < /etc/x'].map(
      (command) => ({ command }),
    ),
    write_file: ['a.txt', 'src/x.ts', '.git/config', '/etc/passwd', 'deep/a/b'].map((path) => ({ path, content: '' })),
    notes: [{ text: 'a' }, { text: 'b' }, { text: 'a b' }, {}, { x: 1, y: 'b' }],
  };
  const rule = fc.tuple(
    fc.constantFrom('allow', 'ask', 'deny'),
    fc.constantFrom(...TOOLS, 'read_file', '*'),
    fc.option(fc.nat(5), { nil: undefined }),
  );
  const arb = fc.tuple(fc.array(rule, { maxLength: 6 }), fc.constantFrom(...TOOLS), fc.nat(7), fc.boolean());
  check(300, arb, ([rs, tool, argIndex, gated]) => {
    const text = rs
      .map(([effect, t, i]) => {
        const pats = PATTERNS[t] ?? ['**', '/etc/**', '*'];
        return i === undefined ? `${effect} ${t}` : `${effect} ${t}(${pats[i % pats.length]})`;
      })
      .join('\n');
    const e = engine(text);
    const args = ARGS[tool]![argIndex % ARGS[tool]!.length]!;
    const shellGated = tool === 'shell_exec' ? true : gated;
    const t = e.toolRuling(tool, shellGated);
    const r = e.judgeWith(parse, { tool, args: JSON.stringify(args), gated: shellGated });
    if (r.decision === t.decision) return true;
    const by = r.rule as Rule | null;
    assert.ok(
      by && t.some.includes(by),
      `${tool} ${JSON.stringify(args)} under\n${text}\nis ${r.decision} by ${by ? ruleText(by) : 'default'}; the tool says ${t.decision}, some ${t.some.map(ruleText)}`,
    );
    return true;
  });
});
