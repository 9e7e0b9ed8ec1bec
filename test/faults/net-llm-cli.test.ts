// Fault battery, what arrives from an LLM server, through the real CLI (issue 21): a whole reply
// whose body trickles ends after body_timeout_ms from config.lua; a compressed error body is
// described on stderr, not printed.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { show, type CliResult } from '../fixtures/run-cli.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { tally } from '../fixtures/tally.js';

const { mock, run } = await faultSuite({ config: '  body_timeout_ms = 1000,\n' });

const open = new Set<ServerResponse>();
after(() => {
  for (const r of open) r.destroy();
});

/** A failed turn: exit 1 and one `error:` line, which is returned. */
function errorLine(r: CliResult): string {
  assert.equal(r.code, 1, show(r));
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('error: '));
  assert.equal(errors.length, 1, show(r));
  return errors[0]!;
}

test('a whole reply whose body trickles ends after body_timeout_ms (config.lua)', async () => {
  const body = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'slow' }, finish_reason: 'stop' }] });
  let sent = 0;
  mock.push({
    handle: (_req, res) => {
      open.add(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => {
        if (res.destroyed || sent >= body.length) clearInterval(t);
        else res.write(body[sent++]!);
      }, 300);
      res.on('close', () => {
        clearInterval(t);
        open.delete(res);
      });
    },
  });
  const r = await run(['-S', '-o', 'hi']);
  assert.equal(errorLine(r), 'error: the reply did not arrive whole within 1 s of its first byte (body_timeout_ms)');
  assert.ok(sent < body.length, `${sent} of ${body.length} bytes were sent`);
  tally('faults', 1);
});

test('a gzip error body of MiBs: described on stderr (type, size), not printed', async () => {
  const big = gzipSync(JSON.stringify({ error: { message: randomBytes(2 << 20).toString('base64') } }));
  mock.push({
    handle: (req, res) => {
      res.writeHead(403, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(big);
      assert.equal(req.headers['accept-encoding'], 'identity');
    },
  });
  const r = await run(['-o', 'hi']);
  assert.equal(errorLine(r), `error: HTTP 403: the body is not text (gzip, application/json, ${+(big.length / (1 << 20)).toFixed(1)} MiB)`);
  assert.ok(r.stderr.length < 2000, `${r.stderr.length} bytes on stderr`);
  assert.doesNotMatch(r.stderr, /[\0\uFFFD]/);
  tally('faults', 1);
});
