// The documentation says what the program does: the example warning in docs/config.md is the
// one clm prints, docs/cli.md names the plugin directory as --help does, and docs/differences.md
// lists the program's departures from the original.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as oa from '../fixtures/openai-replies.js';
import { show, REPO } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';
import { join } from 'node:path';

const { dirs, run } = await cliSuite({ dirs: 'each', script: () => oa.text('ok') });
const doc = (name: string) => readFileSync(join(REPO, 'docs', name), 'utf8');

test('docs/config.md: the unknown-key warning it shows is the one clm prints', async () => {
  dirs.write('config.lua', 'return { providers = { groq = { url = "https://api.groq.com/openai/v1", ["api-key"] = "x" } } }\n');
  const r = await run(['-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const printed = /^notice: (config\.lua: unknown key .*)$/m.exec(r.stderr)?.[1];
  assert.ok(printed, r.stderr);
  assert.ok(doc('config.md').includes(`\`${printed}\``), `docs/config.md does not show ${printed}`);
});

test('docs/cli.md: the default plugin directory follows $XDG_CONFIG_HOME, as --help says', () => {
  const row = doc('cli.md')
    .split('\n')
    .find((l) => l.startsWith('| `-p, --plugins DIR`'))!;
  assert.match(row, /\$XDG_CONFIG_HOME\/clm\/plugins/, row);
});

test("docs/differences.md lists the program's departures", () => {
  const d = doc('differences.md');
  for (const [what, re] of [
    ['the full-screen and inline modes', /full-screen mode.*inline mode/],
    ['-f (forever)', /`-f`/],
    ['Ctrl-C cancels before it quits', /Ctrl-C cancels a running turn/],
    ['queued prompts are turns of their own', /Each queued prompt is a turn of its own/],
    ["the toolkit's markdown", /Ordered lists are numbered.*URL follows in parentheses.*strikethrough is drawn as strikethrough/],
    ['one-shot stdout/stderr split', /one-shot.*stdout.*stderr|stdout.*stderr.*one-shot/i],
    ['result lines without contents', /\[result: name, N bytes\]/],
    ['exit status 2 for usage errors', /exit status 2/],
    ['config errors fatal', /config\.lua.*error.*(fatal|exit)/i],
    ['unknown provider fatal', /unknown provider/],
    ['the -u scheme rule', /`-u`.*scheme|scheme.*`-u`/],
    ['[tools i/n] only for batches', /\[tools i\/n\]/],
    ['the unknown-tool wording', /unknown tool 'NAME'/],
    ['the permission prompt of the line REPL', /allow tool/],
    ['the iteration limit', /max_iterations|--max-turns/],
    ['the probe not in front of the first request', /probe/],
    ['denied tools not advertised', /--deny-tools/],
  ] as const)
    assert.match(d, re, `missing: ${what}`);
});
