// Terminal control sequences from a model, a tool or a server are shown, not obeyed, in what
// clm prints for a person (text output, the REPL); json and stream-json keep the bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oa from '../fixtures/openai-replies.js';
import { jsonLines } from '../fixtures/cli-suite.js';
import { show } from '../fixtures/run-cli.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { tally } from '../fixtures/tally.js';

const { mock, run } = await faultSuite();

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
