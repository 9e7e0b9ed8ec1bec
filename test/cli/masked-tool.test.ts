// maskedTool: what a tool reports (text, bytes, a failure, a later notification) reaches the
// engine with the run's secrets masked; bytes stay bytes, so a NUL still reads as binary data.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ToolDef, ToolInvocation } from '../../src/core/types.js';
import { maskedTool } from '../../src/cli/masked-tool.js';
import { Secrets } from '../../src/host/redact.js';

const maskBytes = (b: Uint8Array, list: string[]) => new Secrets(list).maskBytes(b);

const KEY = 'sk-live-0123456789abcdef';

function invocation() {
  const got: { complete?: string | Uint8Array; fail?: string; notify: string[] } = { notify: [] };
  const ac = new AbortController();
  const inv: ToolInvocation = {
    name: 't',
    args: '{}',
    outputCap: 100,
    timeoutMs: 5,
    signal: ac.signal,
    get done() {
      return got.complete !== undefined || got.fail !== undefined;
    },
    complete: (o) => {
      got.complete = o;
    },
    fail: (m) => {
      got.fail = m;
    },
    notify: (t) => {
      got.notify.push(t);
    },
  };
  return { inv, got, ac };
}

const tool = (invoke: ToolDef['invoke']): ToolDef => ({ name: 't', invoke, noPrompt: true });

test('text, a failure and a notification have the secrets masked; the invocation reads through', async () => {
  const secrets = new Secrets([KEY]);
  const seen: unknown[] = [];
  const def = maskedTool(
    tool((inv) => {
      seen.push(inv.name, inv.args, inv.outputCap, inv.timeoutMs, inv.signal.aborted, inv.done);
      inv.notify(`later: ${KEY} and sk-added-99999999`);
      inv.complete(`key=${KEY} twice ${KEY}`);
      seen.push(inv.done);
    }),
    secrets,
  );
  assert.equal(def.name, 't');
  assert.equal(def.noPrompt, true);
  const a = invocation();
  secrets.add('sk-added-99999999'); // the run's list at each report, so a profile switch's secrets count
  await def.invoke(a.inv);
  assert.deepEqual(seen, ['t', '{}', 100, 5, false, false, true]);
  assert.equal(a.got.complete, 'key=[REDACTED] twice [REDACTED]');
  assert.deepEqual(a.got.notify, ['later: [REDACTED] and [REDACTED]']);
  const b = invocation();
  await maskedTool(
    tool((inv) => inv.fail(`401 for ${KEY}`)),
    secrets,
  ).invoke(b.inv);
  assert.equal(b.got.fail, '401 for [REDACTED]');
});

test('bytes are masked as bytes: binary data around a secret stays, and unmasked bytes pass as they are', () => {
  const raw = new Uint8Array([0, 1, 2, ...Buffer.from(`x${KEY}y${KEY}`), 0xff]);
  const out = maskBytes(raw, [KEY]);
  assert.deepEqual([...out], [0, 1, 2, ...Buffer.from('x[REDACTED]y[REDACTED]'), 0xff]);
  const plain = new Uint8Array([0, 0xc3, 0x28, 65]);
  assert.deepEqual([...maskBytes(plain, [KEY])], [...plain]);
  // A secret of non-ASCII text is looked for as its UTF-8 bytes.
  assert.deepEqual(Buffer.from(maskBytes(Buffer.from('a:pässwörd-long:b'), ['pässwörd-long'])).toString(), 'a:[REDACTED]:b');
  // Too short to mask (as in the logs): left alone.
  assert.deepEqual(Buffer.from(maskBytes(Buffer.from('abc'), ['abc'])).toString(), 'abc');
});

test('with no secret to mask (none configured, or all too short) the call and its bytes go through as they are', async () => {
  let got: ToolInvocation | null = null;
  const def = maskedTool(
    tool((inv) => {
      got = inv;
    }),
    new Secrets(['abc']),
  );
  const a = invocation();
  await def.invoke(a.inv);
  assert.equal(got, a.inv);
  const bytes = new Uint8Array([1, 2, 3]);
  assert.equal(maskBytes(bytes, [KEY]), bytes);
});
