// The headless text renderer: the reply on stdout, progress lines on stderr, a reply line ended
// before a progress line, colours only when asked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { textRenderer } from '../../src/cli/render.js';
import type { AgentEvent } from '../../src/core/events.js';

function render(events: AgentEvent[], color = false) {
  let out = '';
  let err = '';
  const r = textRenderer({ write: (s: string) => (out += s) }, { write: (s: string) => (err += s) }, color);
  for (const e of events) r.event(e);
  r.endText();
  return { out, err };
}

test('text renderer: results, usage and a reply cut short, each on a line of its own on stderr', { timeout: 10_000 }, () => {
  const { out, err } = render([
    { type: 'text', text: 'partial reply' },
    { type: 'tool_result', id: '1', name: 'read_file', content: 'héllo', outcome: 'ok' },
    { type: 'tool_result', id: '2', name: 'shell_exec', content: '[tool failed: timed out]\nmore', outcome: 'timedout' },
    { type: 'tool_result', id: '3', name: 'read_file', content: '[tool failed: no such file]', outcome: 'failed' },
    { type: 'usage', usage: { promptTokens: 12, completionTokens: 3, tokensPerSec: 41.26 } },
    { type: 'finish', reason: 'length' },
    { type: 'finish', reason: 'content_filter' },
    { type: 'finish', reason: 'stop' },
  ] as AgentEvent[]);
  assert.equal(out, 'partial reply\n', 'the reply line is ended before the first progress line');
  assert.equal(
    err,
    [
      '[result: read_file, 6 bytes]',
      '[timeout shell_exec] [tool failed: timed out] more',
      '[x read_file] [tool failed: no such file]',
      '[12+3 tok, 41.3 tok/s]',
      '[truncated: hit token limit]',
      '[stopped: content filter]',
      '',
    ].join('\n'),
  );
});

test('text renderer: colours only when asked for; a finish reason it does not know shows nothing', { timeout: 10_000 }, () => {
  const events = [
    { type: 'tool_result', id: '2', name: 'shell_exec', content: 'boom', outcome: 'timedout' },
    { type: 'finish', reason: 'content_filter' },
    { type: 'finish', reason: 'constructor' },
  ] as AgentEvent[];
  assert.equal(render(events, true).err, '\x1b[33m[timeout shell_exec] boom\x1b[0m\n\x1b[31m[stopped: content filter]\x1b[0m\n');
  assert.equal(render(events).err, '[timeout shell_exec] boom\n[stopped: content filter]\n');
});
