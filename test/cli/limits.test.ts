// The real `clm` binary: the per-turn limit on tool rounds (--max-turns, max_iterations, the
// program's default), and the flag conformance of getopt-style parsing: combined short flags, a
// schemeless -u, an empty -m, the help text; and the notice for a hosted provider with no key.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oa from '../fixtures/openai-replies.js';
import { show } from '../fixtures/run-cli.js';
import { cliSuite, jsonLines } from '../fixtures/cli-suite.js';
import { parseCommandLine, USAGE, UsageError } from '../../src/cli/args.js';
import { DEFAULT_MAX_ITERATIONS, resolveRun } from '../../src/cli/resolve-run.js';

// A server that never stops asking for a tool (each call unknown to clm, so it costs nothing).
const endless = () => oa.toolCall('no_such_tool', {}, 'c');
const { mock, dirs, run } = await cliSuite({ dirs: 'each', script: endless });

test('--max-turns N: the turn stops after N tool rounds with a clear error, exit 1', async () => {
  const r = await run(['-S', '--max-turns', '3', '-o', 'loop']);
  assert.equal(r.code, 1, show(r));
  assert.equal(mock.posts.length, 3);
  assert.match(
    r.stderr,
    /^error: max iterations reached \(3 tool rounds in one turn\); raise the limit with --max-turns N or max_iterations in config\.lua \(0 = unlimited\)$/m,
    r.stderr,
  );
  const j = await run(['-S', '--max-turns=2', '--output-format', 'json', '-o', 'loop']);
  assert.equal(j.code, 1, show(j));
  const o = JSON.parse(j.stdout);
  assert.equal(o.status, 'error');
  assert.match(o.error, /^max iterations reached \(2 tool rounds/);
});

test('max_iterations in config.lua, overridden by an agent profile and by --max-turns', async () => {
  dirs.write('config.lua', 'return { max_iterations = 2, agents = { long = { max_iterations = 4 } } }\n');
  let r = await run(['-S', '-o', 'loop']);
  assert.equal(r.code, 1, show(r));
  assert.equal(mock.posts.length, 2);
  assert.doesNotMatch(r.stderr, /unknown key/);
  mock.reset();
  mock.script(endless);
  r = await run(['-S', '-a', 'long', '-o', 'loop']);
  assert.equal(r.code, 1, show(r));
  assert.equal(mock.posts.length, 4);
  mock.reset();
  mock.script(endless);
  r = await run(['-S', '-a', 'long', '--max-turns', '1', '-o', 'loop']);
  assert.equal(mock.posts.length, 1, show(r));
});

test('--max-turns 0 is unlimited; a task that ends by itself is never stopped', async () => {
  mock.script((req) => (req.json.messages.filter((m: any) => m.role === 'tool').length < 5 ? endless() : oa.text('finished')));
  const r = await run(['-S', '--max-turns', '0', '-o', 'loop']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'finished\n');
  assert.equal(mock.posts.length, 6);
});

test('bad limits: a usage error for the flag, a config error for the key', async () => {
  for (const v of ['-1', 'x', '1.5', '']) {
    const r = await run(['--max-turns', v, '-o', 'q']);
    assert.equal(r.code, 2, show(r));
    assert.match(r.stderr, /^clm: --max-turns: '.*' is not a whole number ≥ 0/m);
  }
  dirs.write('config.lua', 'return { max_iterations = "lots" }\n');
  const r = await run(['-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /^clm: config\.lua:1: max_iterations must be a number \(got "lots"\) \(in .*config\.lua\)$/m);
  assert.equal(mock.posts.length, 0);
});

test('the program has a default limit that real tasks do not reach; the library keeps 0 = unlimited', async () => {
  assert.ok(DEFAULT_MAX_ITERATIONS >= 500, String(DEFAULT_MAX_ITERATIONS));
  const env = { XDG_CONFIG_HOME: dirs.config, HOME: dirs.home };
  assert.equal((await resolveRun(parseCommandLine([]), env)).maxIterations, DEFAULT_MAX_ITERATIONS);
  assert.equal((await resolveRun(parseCommandLine(['--max-turns', '0']), env)).maxIterations, 0);
  assert.match(USAGE, /--max-turns N/);
});

test('combined short flags are accepted as getopt does: -So, -HS, -Sm MODEL, -So PROMPT', async () => {
  mock.script(() => oa.text('ok'));
  const r = await run(['-So', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'ok\n');
  assert.equal(mock.posts[0]!.json.stream, false);
  const p = parseCommandLine(['-HS']);
  assert.equal(p.headless, true);
  assert.equal(p.noStream, true);
  assert.deepEqual(pick(parseCommandLine(['-Smqwen', '-oq'])), { noStream: true, model: 'qwen', oneshot: 'q' });
  assert.deepEqual(pick(parseCommandLine(['-HSr', 'ID'])), { headless: true, noStream: true, resume: 'ID' });
  assert.deepEqual(pick(parseCommandLine(['-HrID'])), { headless: true, resume: 'ID' });
  assert.throws(
    () => parseCommandLine(['-Sx']),
    (e: unknown) => e instanceof UsageError && e.message === 'unknown option -x (in -Sx)',
  );
  assert.throws(
    () => parseCommandLine(['-So']),
    (e: unknown) => e instanceof UsageError && e.message === '-o needs a value',
  );
});

function pick(a: ReturnType<typeof parseCommandLine>) {
  const out: Record<string, unknown> = {};
  for (const k of ['headless', 'noStream', 'model', 'oneshot', 'resume'] as const) if (a[k] !== undefined && a[k] !== false) out[k] = a[k];
  return out;
}

test('a schemeless loopback -u is taken as http://; a remote one is refused with the fix', async () => {
  mock.script(() => oa.text('ok'));
  const schemeless = mock.base.replace(/^http:\/\//, '');
  const r = await run(['-S', '-u', schemeless, '-o', 'hi', '--output-format', 'stream-json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(jsonLines(r.stdout)[0]!.base_url, `${mock.base}/chat/completions`);
  assert.equal(mock.posts.length, 1);
  const l = await run(['-u', `localhost:${new URL(mock.url).port}/v1`, '-S', '-o', 'hi']);
  assert.equal(l.code, 0, show(l));
  const remote = await run(['-u', 'api.example.com/v1', '-o', 'hi']);
  assert.equal(remote.code, 2, show(remote));
  assert.match(
    remote.stderr,
    /^clm: -u: 'api\.example\.com\/v1' has no scheme; use https:\/\/api\.example\.com\/v1 \(or http:\/\/ if the server has no TLS\)$/m,
  );
  const ftp = await run(['-u', 'ftp://h/v1', '-o', 'hi']);
  assert.equal(ftp.code, 2);
  assert.match(ftp.stderr, /is not an http:\/\/ or https:\/\/ URL/);
});

test('-m "" and -u "" are refused, not ignored', async () => {
  const m = await run(['-m', '', '-o', 'hi']);
  assert.equal(m.code, 2, show(m));
  assert.match(m.stderr, /^clm: model '' is empty$/m);
  const u = await run(['-u', '', '-o', 'hi']);
  assert.equal(u.code, 2, show(u));
  assert.match(u.stderr, /^clm: -u: '' is not an http:\/\/ or https:\/\/ URL$/m);
  assert.equal(mock.posts.length, 0);
});

test('--help names the plugin directory as it is found: $XDG_CONFIG_HOME first', async () => {
  const r = await run(['--help']);
  assert.equal(r.code, 0);
  const line = r.stdout.split('\n').find((l) => l.includes('--plugins DIR'))!;
  assert.match(line, /\$XDG_CONFIG_HOME\/clm\/plugins/, line);
});

test('a hosted provider (https) with no key: a notice at the start says where the key goes', { timeout: 30_000 }, async () => {
  const env = { XDG_CONFIG_HOME: dirs.config, HOME: dirs.home };
  const provider = (name: string, url: string) =>
    `return { model = "${name}/m", providers = { ["${name}"] = { kind = "openai", url = "${url}", api_key = clm.secrets["${name}"] } } }\n`;
  const said = async (e: Record<string, string> = env) =>
    (await resolveRun(parseCommandLine([]), e)).warnings.filter((w) => /API key/.test(w));
  dirs.write('config.lua', provider('groq', 'https://api.groq.com/openai/v1'));
  assert.deepEqual(await said(), [
    `provider 'groq' has no API key: add groq = "…" to ${dirs.config}/clm/secrets.lua (read by api_key = clm.secrets.groq in config.lua), or set CLM_API_KEY`,
  ]);
  assert.deepEqual(await said({ ...env, CLM_API_KEY: 'k' }), []);
  dirs.write('secrets.lua', 'return { groq = "gsk-test" }\n');
  assert.deepEqual(await said(), [], 'the key in secrets.lua');
  dirs.write('config.lua', provider('my-api', 'https://api.example.com/v1'));
  assert.match(
    (await said())[0]!,
    /add \["my-api"\] = "…" to .*secrets\.lua \(read by api_key = clm\.secrets\["my-api"\] in config\.lua\)/,
  );
  // A server on the network (http) often takes no key: nothing said.
  dirs.write('config.lua', provider('lan', 'http://192.168.1.5:8080/v1'));
  assert.deepEqual(await said(), []);
});
