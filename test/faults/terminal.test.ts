// Terminal control sequences from a model, a tool or a server are shown, not obeyed, in what
// clm prints for a person (text output, the REPL); json and stream-json keep the bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { jsonLines } from '../fixtures/cli-suite.js';
import { show } from '../fixtures/run-cli.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { tally } from '../fixtures/tally.js';
import { uiSuite } from '../fixtures/ui-suite.js';

const suite = await faultSuite();
const { mock, run, dirs } = suite;
const ui = await uiSuite();

const OSC52 = '\x1b]52;c;ZWNobyBwd25lZA==\x07'; // write "echo pwned" to the clipboard
const TITLE = '\x1b]0;owned\x07';
const CSI = '\x1b[2J\x1b[H'; // clear the screen

/** Any ESC, BEL, CSI (8-bit) or bare CR left in the text. */
const RAW = /[\x1b\x07\x9b]|\r(?!\n)/;

test('text output: escapes in the reply, a tool argument and a tool error are shown as ^[ … ^G', async () => {
  // Arguments as the model sent them: a raw ESC inside (not even valid JSON).
  mock.push(
    oa.toolCall('shell_exec', `{"command":"echo ${TITLE}"}`),
    oa.streamText([`copy this ${OSC52.slice(0, 4)}`, `${OSC52.slice(4)} and ${CSI}done`]),
  );
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.doesNotMatch(r.stdout, RAW, JSON.stringify(r.stdout));
  assert.doesNotMatch(r.stderr, RAW, JSON.stringify(r.stderr));
  assert.equal(r.stdout, 'copy this ^[]52;c;ZWNobyBwd25lZA==^G and ^[[2J^[[Hdone\n');
  assert.match(r.stderr, /\[tool: shell_exec \{"command":"echo \^\[\]0;owned\^G"\}\]/);
  tally('bad_inputs', 3);
});

test('the REPL shows a tool output escape instead of obeying it', async () => {
  mock.push(oa.toolCall('shell_exec', { command: `printf 'before\\033]0;owned\\007after\\r\\n'` }), oa.text(`ok ${CSI}`));
  const r = await run(['-H'], { input: 'go\n' });
  assert.equal(r.code, 0, show(r));
  assert.doesNotMatch(r.stdout, RAW, JSON.stringify(r.stdout));
  assert.match(r.stdout, /\[result: shell_exec\]\nbefore\^\[\]0;owned\^Gafter\n/);
  assert.match(r.stdout, /assistant> ok \^\[\[2J\^\[\[H/);
  tally('bad_inputs', 2);
});

test('json and stream-json keep the bytes as they came', async () => {
  mock.push(oa.text(`copy ${OSC52}`));
  const j = await run(['-o', 'hi', '--output-format', 'json']);
  assert.equal(JSON.parse(j.stdout).result, `copy ${OSC52}`);
  mock.push(oa.streamText(['copy ', OSC52]));
  const s = await run(['-o', 'hi', '--output-format', 'stream-json']);
  assert.equal(
    jsonLines(s.stdout)
      .filter((e) => e.type === 'text')
      .map((e) => e.text)
      .join(''),
    `copy ${OSC52}`,
  );
  tally('bad_inputs', 2);
});

test('the debug log shows the control characters of what a plugin logs instead of holding them', async () => {
  const plugins = join(dirs.root, 'plugins');
  mkdirSync(plugins);
  writeFileSync(
    join(plugins, 'noisy.lua'),
    `clm.tool_register("noisy", { no_prompt = true, invoke = function(args, ctx)
  ctx:log("title \\27]0;owned\\7 clear \\27[2J back\\rover \\194\\155 end")
  ctx:complete("logged")
end })\n`,
  );
  mock.push(oa.toolCall('noisy', {}), oa.text('ok'));
  const r = await run(['-o', 'log it', '-p', plugins]);
  assert.equal(r.code, 0, show(r));
  const log = readFileSync(suite.log, 'utf8');
  const line = log.split('\n').find((l) => l.includes('lua plugin noisy: title'));
  assert.ok(line, log);
  assert.doesNotMatch(log, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/, 'no control character but newline and tab in the log');
  assert.match(line, /title \^\[\]0;owned\^G clear \^\[\[2J back\^Mover <U\+009B> end$/);
  tally('bad_inputs', 1);
});

test('the interactive UI: an unknown tool whose name carries an OSC 8 hyperlink is drawn without it', async (t) => {
  const s = await ui.open(t);
  const name = 'evil\x1b]8;;http://evil.test/\x1b\\click\x1b]8;;\x1b\\';
  ui.mock.push(oa.toolCall(name, {}), oa.text('after the tool'));
  s.type('call it\r');
  await s.waitFor('after the tool', 'the reply after the failed call');
  assert.ok(!s.raw().includes('\x1b]8;;http://evil.test/'), 'the link is not written to the terminal');
  assert.match(s.text(), /\[x evil.*click.*\] \[tool failed: unknown tool/);
  tally('bad_inputs', 1);
});

test('a 2 MB tool name: every name and summary printed is capped, saying how much was cut', async () => {
  // (2 MB rather than the 10 MB of the report: the same cut, a fifth of the time on a loaded machine.)
  const name = `t${'n'.repeat(2 * 1024 * 1024)}`;
  for (const format of ['text', 'stream-json']) {
    mock.push(oa.toolCall(name, { a: 'x'.repeat(1000) }), oa.text('done'));
    const r = await run(['-o', 'go', '--output-format', format], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, `${r.stderr.slice(0, 2000)}`);
    const printed = r.stdout.length + r.stderr.length;
    assert.ok(printed < 64 * 1024, `${format}: ${printed} characters printed`);
    assert.ok((r.stdout + r.stderr).includes(`n… (+${name.length - 100} chars)`), `${format}: says how much was cut`);
  }
  mock.push(oa.toolCall(name, {}), oa.text('done'));
  const repl = await run(['-H'], { input: 'go\n', timeoutMs: 60_000 });
  assert.equal(repl.code, 0, repl.stderr.slice(0, 2000));
  assert.ok(repl.stdout.length + repl.stderr.length < 64 * 1024, `the REPL: ${repl.stdout.length + repl.stderr.length} characters printed`);
  tally('bad_inputs', 3);
});
