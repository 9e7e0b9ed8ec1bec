// The guard every event of a run passes before any front end sees it: secrets masked (streamed
// text across its pieces, held back no longer than needed), model-made names printable and
// capped, and each front end's view of the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../../src/core/events.js';
import { EventGuard, type GuardedEvent, viewOf } from '../../src/cli/guard.js';
import { Secrets } from '../../src/host/redact.js';
import { tally } from '../fixtures/tally.js';

const KEY = 'sk-guard-0123456789';

function run(events: AgentEvent[], secrets = new Secrets([KEY])): GuardedEvent[] {
  const g = new EventGuard(secrets);
  return events.flatMap((e) => g.pass(e));
}

test('a secret split across text deltas is masked; the held-back start goes out before the next event', () => {
  const out = run([
    { type: 'text', text: `key ${KEY.slice(0, 6)}` },
    { type: 'text', text: `${KEY.slice(6)} ok sk-` },
    { type: 'tool_begin', id: 'a', name: 'read_file', args: `{"k":"${KEY}"}` },
    { type: 'reasoning', text: 'hm' },
    { type: 'text', text: 'done' },
  ]);
  assert.deepEqual(out, [
    { type: 'text', text: 'key ' },
    { type: 'text', text: '[REDACTED] ok ' },
    { type: 'text', text: 'sk-' },
    { type: 'tool_begin', id: 'a', name: 'read_file', args: '{"k":"[REDACTED]"}' },
    { type: 'reasoning', text: 'hm' },
    { type: 'text', text: 'done' },
  ]);
});

test('every string of every event is masked, runtime events included', () => {
  const out = run([
    { type: 'notice', text: `n ${KEY}` },
    { type: 'turn_done', status: -5, error: `e ${KEY}` },
    { type: 'connection', status: 'offline', detail: `d ${KEY}` },
    { type: 'compaction', kind: 'manual', phase: 'failed', error: `c ${KEY}` },
    { type: 'message', message: { role: 'tool', content: `m ${KEY}`, toolCallId: 'a', toolName: 't' } },
  ] as AgentEvent[]);
  assert.ok(!JSON.stringify(out).includes(KEY), JSON.stringify(out));
  const g = new EventGuard(new Secrets([KEY]));
  const [plugins] = g.pass({ type: 'plugins', status: 'ready', tools: ['t'], errors: [`plugin p: ${KEY}`] });
  assert.deepEqual(plugins, { type: 'plugins', status: 'ready', tools: ['t'], errors: ['plugin p: [REDACTED]'] });
});

test('tool names: printable and capped for every view; the views differ only in how text is shown', () => {
  const name = `evil\x1b]8;;http://x.test/\x07${'n'.repeat(500)}`;
  const [e] = run([{ type: 'tool_result', id: 'a', name, content: 'out\x1b[31m\u200b', outcome: 'failed' }]);
  const shown = (e as Extract<AgentEvent, { type: 'tool_result' }>).name;
  assert.ok(!/[\x00-\x1f]/.test(shown), shown);
  assert.ok(shown.startsWith('evil^[]8;;http://x.test/^G'), shown);
  assert.ok(shown.endsWith(`n… (+${name.length - 100} chars)`), shown);
  assert.equal((viewOf(e!, 'data') as { content: string }).content, 'out\x1b[31m\u200b');
  assert.equal((viewOf(e!, 'terminal') as { content: string }).content, 'out^[[31m<U+200B>');
  assert.equal((viewOf(e!, 'screen') as { content: string }).content, 'out\x1b[31m<U+200B>');
  tally('bad_inputs', 3);
});

test("a running call's output so far: masked, without an ending that could start a secret; its name capped", () => {
  const name = `sh\x1b[2J${'x'.repeat(300)}`;
  const out = run([
    { type: 'tool_progress', id: 'a', name, text: `one ${KEY}\ntwo ${KEY.slice(0, 8)}` },
    { type: 'tool_progress', id: 'a', name: 'shell_exec', text: `one ${KEY}\ntwo ${KEY}\n` },
  ]);
  const [first, second] = out as Extract<AgentEvent, { type: 'tool_progress' }>[];
  // Each report is the whole output so far: the start of a secret waits for the next one.
  assert.equal(first!.text, 'one [REDACTED]\ntwo ');
  assert.equal(second!.text, 'one [REDACTED]\ntwo [REDACTED]\n');
  assert.ok(!/[\x00-\x1f]/.test(first!.name) && first!.name.endsWith(`x… (+${name.length - 100} chars)`), first!.name);
  tally('bad_inputs', 1);
});
