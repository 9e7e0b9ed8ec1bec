// A host that sends a body in pieces (Host.bodyPieces) gets the OpenAI dialect's request as the
// cached per-message pieces, not joined into one buffer each round; a host without the flag
// gets the same bytes joined. The pieces are the same bytes in the same order.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent } from '../../src/core/agent.js';
import type { Host, HttpRequest } from '../../src/core/host.js';
import { scriptedHost } from '../fixtures/scripted-host.js';

const REPLY = JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }] });

async function twoTurns(pieces: boolean): Promise<HttpRequest[]> {
  const base = scriptedHost([{ body: REPLY }, { body: REPLY }]);
  const seen: HttpRequest[] = [];
  const host: Host = {
    ...base,
    ...(pieces && { bodyPieces: true }),
    http(req, handlers) {
      seen.push(req);
      return base.http(req, handlers);
    },
  };
  const agent = createAgent({ baseUrl: 'http://127.0.0.1:9/v1', stream: false, systemPrompt: 'be brief' }, host);
  for (const prompt of ['first question', 'second question, é']) {
    const r = await agent.run(prompt);
    assert.equal(r.text, 'fine', r.error);
  }
  agent.close();
  return seen;
}

const joined = (req: HttpRequest): Buffer =>
  req.bodyPieces ? Buffer.concat(req.bodyPieces.map((p) => Buffer.from(p))) : Buffer.from(req.body as Uint8Array);
/** The request's text with the system prompt's time stamp (the two agents may start in different seconds) left out. */
const timeless = (req: HttpRequest): string =>
  joined(req)
    .toString()
    .replace(/\w{3}, \d{1,2} \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}/g, 'TIME');

test('a host that takes body pieces gets the request unjoined; the bytes are those a joined body has', { timeout: 10_000 }, async () => {
  const split = await twoTurns(true);
  const whole = await twoTurns(false);
  assert.equal(split.length, 2);
  for (const [i, req] of split.entries()) {
    assert.equal(req.body, undefined, 'both a body and pieces');
    assert.ok(req.bodyPieces && req.bodyPieces.length > 3, `request ${i}: ${req.bodyPieces?.length} pieces`);
    assert.ok(whole[i]!.body instanceof Uint8Array && whole[i]!.bodyPieces === undefined);
    assert.equal(timeless(req), timeless(whole[i]!));
    assert.match(timeless(req), /TIME/);
    assert.match(joined(req).toString(), /"first question"/);
  }
  // The second request reuses the first's cached message pieces (the same objects).
  const [a, b] = split.map((r) => r.bodyPieces!);
  assert.ok(
    a!.slice(1, -1).some((p) => b!.includes(p)),
    'no piece of the history was reused',
  );
});
