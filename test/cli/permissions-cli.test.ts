// `clm permissions explain` and `list`, and the rules in a real run: config.lua's permissions with
// their lines, a rules file edited by hand and read by the next run, a malformed one stopping
// the run naming file and line, permissions.unattended, and how each call was decided in the
// json and stream-json results.

import { bwrapBackend } from '../../src/sandbox/bwrap.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { cliSuite, jsonLines } from '../fixtures/cli-suite.js';

// No leading flags: `permissions` must come first; the runs that talk to the model give -u and -p.
const { mock, dirs, run } = await cliSuite({ dirs: 'each', args: () => [] });
const model = () => ['-u', mock.base, '-p', dirs.empty];

const CONFIG = `return {
  permissions = {
    allow = { "shell_exec(git commit *)", "shell_exec(git status *)" },
    deny = { "shell_exec(rm -rf *)" },
  },
}
`;

test('explain: each part, the rule that decided it with file and line, the decision, how it would run', async () => {
  dirs.write('config.lua', CONFIG);
  const r = await run(['permissions', 'explain', 'shell_exec', 'git commit -m x && rm -rf build']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      'shell_exec: git commit -m x && rm -rf build',
      '  allow  git commit -m x  shell_exec(git commit *)  config.lua:3',
      '  deny   rm -rf build     shell_exec(rm -rf *)  config.lua:4',
      'decision: deny (rule shell_exec(rm -rf *) (config.lua:4))',
      // How it would run: the sandbox this machine gives (CI installs bubblewrap).
      bwrapBackend().available().ok ? 'sandbox: workspace-write, no network' : 'NOT sandboxed',
      '',
    ].join('\n'),
  );
  // What the parser cannot read is asked, never allowed: here a command the shell builds.
  const u = await run(['permissions', 'explain', 'shell_exec', 'git status; $CMD x']);
  assert.equal(u.code, 0, u.stderr);
  assert.match(u.stdout, /decision: ask/);
  // A file tool: its path; a bare tool of another kind: its JSON arguments.
  const f = await run(['permissions', 'explain', 'read_file', 'notes.txt']);
  assert.match(
    f.stdout,
    /^read_file: notes\.txt\n {2}allow {2}notes\.txt {2}no rule \(default\)\ndecision: allow \(default\)\nsandbox: workspace-write\n$/,
  );
  const bad = await run(['permissions', 'explain', 'mcp__x__y', '{not json']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /the arguments are not JSON/);
});

test('a rules file edited by hand is read by the next run; list shows every rule with where it came from', async () => {
  dirs.write('config.lua', CONFIG);
  dirs.write('permissions.rules', '# mine\nallow shell_exec(make *)\n');
  let r = await run(['permissions', 'list']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      'allow  shell_exec(git commit *)  config.lua:3',
      'allow  shell_exec(git status *)  config.lua:3',
      'deny   shell_exec(rm -rf *)  config.lua:4',
      'allow  shell_exec(make *)  permissions.rules:2',
      `rules file: ${join(dirs.config, 'clm', 'permissions.rules')}`,
      '',
    ].join('\n'),
  );
  dirs.write('permissions.rules', '# mine\nallow shell_exec(make *)\ndeny shell_exec(make clean *)\n');
  r = await run(['permissions', 'explain', 'shell_exec', 'make clean']);
  assert.match(r.stdout, /deny {3}make clean {2}shell_exec\(make clean \*\) {2}permissions\.rules:3/);
});

test('a malformed rules file stops the run with an error naming file and line', async () => {
  dirs.write('permissions.rules', 'allow shell_exec(ls *)\n\npermit shell_exec(rm *)\n');
  const file = join(dirs.config, 'clm', 'permissions.rules');
  mock.push(oa.text('never'));
  for (const args of [
    ['-o', 'hi'],
    ['permissions', 'list'],
  ]) {
    const r = await run(args);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, `clm: ${file}:3: expected 'allow', 'ask' or 'deny' and a rule, got 'permit shell_exec(rm *)'\n`);
  }
  assert.equal(mock.posts.length, 0, 'nothing was asked of the model');
});

test('with nobody to ask: deny rules deny, an ask runs unless permissions.unattended = "deny"; json says how each call was decided', async () => {
  const kept = join(dirs.root, 'kept.txt');
  const made = join(dirs.root, 'made.txt');
  dirs.write('config.lua', CONFIG);
  mock.push(
    oa.toolCalls([
      { name: 'shell_exec', args: { command: `touch ${made}` }, id: 'c1' },
      { name: 'shell_exec', args: { command: `git status && rm -rf ${kept}` }, id: 'c2' },
      { name: 'read_file', args: { path: made }, id: 'c3' },
    ]),
    oa.text('done'),
  );
  writeFileSync(kept, 'x');
  let r = await run([...model(), '-o', 'go', '--output-format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(
    out.tool_calls.map((c: { id: string; permission: unknown }) => [c.id, c.permission]),
    [
      ['c1', { decision: 'allow', by: 'default' }],
      ['c2', { decision: 'deny', by: 'rule', rule: 'shell_exec(rm -rf *)', source: 'config.lua:4' }],
      ['c3', { decision: 'allow', by: 'default' }],
    ],
  );
  assert.ok(existsSync(made));
  assert.ok(existsSync(kept), 'the denied part did not run, nor the allowed part before it');
  const tool = mock.posts[1]!.json.messages.find((m: { tool_call_id?: string }) => m.tool_call_id === 'c2');
  assert.equal(tool.content, '[tool failed: denied by rule shell_exec(rm -rf *) (config.lua:4)]');

  dirs.write('config.lua', CONFIG.replace('permissions = {', 'permissions = {\n    unattended = "deny",'));
  mock.reset();
  mock.push(oa.toolCall('shell_exec', { command: 'echo hi' }, 'c4'), oa.text('refused'));
  r = await run([...model(), '-o', 'go', '--output-format', 'stream-json']);
  assert.equal(r.code, 0, r.stderr);
  const perm = jsonLines(r.stdout).find((l) => l.type === 'permission');
  assert.deepEqual(perm, { version: 1, type: 'permission', id: 'c4', name: 'shell_exec', decision: 'deny', by: 'default' });
  const t4 = mock.posts[1]!.json.messages.find((m: { tool_call_id?: string }) => m.tool_call_id === 'c4');
  assert.equal(t4.content, '[tool failed: denied: nobody to ask (permissions.unattended = "deny")]');
});

test('explain knows a plugin tool registered with no_prompt runs unasked, and one without asks', async () => {
  const plugins = join(dirs.root, 'explain-plugins');
  mkdirSync(plugins);
  writeFileSync(
    join(plugins, 'two.lua'),
    `clm.tool_register("quiet_tool", { no_prompt = true, invoke = function(args, ctx) ctx:complete("q") end })
clm.tool_register("loud_tool", { invoke = function(args, ctx) ctx:complete("l") end })
`,
  );
  const quiet = await run(['permissions', 'explain', 'quiet_tool', '{}', '-p', plugins]);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.match(quiet.stdout, /^decision: allow \(default\)$/m);
  const loud = await run(['permissions', 'explain', 'loud_tool', '{}', '-p', plugins]);
  assert.equal(loud.code, 0, loud.stderr);
  assert.match(loud.stdout, /^decision: ask \(default\)$/m);
  // A rule still decides over the flag.
  dirs.write('config.lua', 'return { permissions = { deny = { "quiet_tool" } } }\n');
  const denied = await run(['permissions', 'explain', 'quiet_tool', '{}', '-p', plugins]);
  assert.match(denied.stdout, /^decision: deny \(rule quiet_tool \(config\.lua:1\)\)$/m);
});
