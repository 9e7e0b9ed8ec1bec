// The evaluation cache through the real clm: the second run of an unchanged configuration is
// answered from the state dir's cache without the Lua worker, the requests carry the real keys
// (a new value of the same length is picked up from secrets.lua at once), the cache file is
// private and holds no secret, and a damaged cache is rewritten. `clm setup`'s own files are
// cached too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { runCli, show } from '../fixtures/run-cli.js';
import { cliSuite } from '../fixtures/cli-suite.js';

const KEY = 'sk-cache-cli-KEY-0123456789abcdef';
const ROTATED = 'sk-cache-cli-ROTATED-fedcba987654'; // as long as KEY: the same shape
const LONGER = 'sk-cache-cli-LONGER-KEY-0123456789abcdef';
const SEARCH = 'tvly-cache-cli-SEARCH-55555';

const { mock, dirs, run } = await cliSuite({ dirs: 'each', script: () => oa.text('ok'), args: (_m, d) => ['-p', d.empty] });

const log = () => join(dirs.root, 'debug.log');
const cacheFile = () => join(dirs.sessions, 'config-cache.json');

function writeFiles(key = KEY): void {
  dirs.write('secrets.lua', `-- keys\nreturn {\n  mock = "${key}", -- the mock's key\n  search = [[${SEARCH}]],\n  unused = "",\n}\n`);
  chmodSync(join(dirs.clm, 'secrets.lua'), 0o600);
  dirs.write(
    'config.lua',
    `return {\n  model = "mock/m1",\n  providers = { mock = { url = "${mock.base}", api_key = clm.secrets.mock } },\n  tools = { web_search = { api_key = clm.secrets.search } },\n  system_prompt = "be brief",\n}\n`,
  );
}

/** One run with the debug log; its log lines about the configuration. */
async function runLogged(): Promise<string[]> {
  rmSync(log(), { force: true });
  const r = await run(['-o', 'q'], { env: { CLM_DEBUG_LOG: log() } });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'ok\n');
  return readFileSync(log(), 'utf8')
    .split('\n')
    .filter((l) => / config: /.test(l));
}

const hit = (lines: string[]) => lines.some((l) => l.includes('config: evaluation taken from the cache'));
const evaluated = (lines: string[]) => lines.some((l) => l.includes('config: no cached evaluation fits; evaluating in the Lua worker'));

test('the second run is answered from the cache and sends the real key; a new key value is used at once', async () => {
  assert.equal(ROTATED.length, KEY.length);
  writeFiles();
  const cold = await runLogged();
  assert.ok(evaluated(cold) && !hit(cold), cold.join('\n'));
  assert.ok(
    cold.some((l) => l.includes(`config: evaluation cached in ${dirs.sessions}`)),
    cold.join('\n'),
  );
  const warm = await runLogged();
  assert.ok(hit(warm) && !evaluated(warm), warm.join('\n'));
  assert.equal(mock.posts.length, 2);
  for (const p of mock.posts) {
    assert.equal(p.headers.authorization, `Bearer ${KEY}`);
    assert.equal(p.json.model, 'm1');
  }
  // The same system prompt (it ends with the current time, which moves on between the runs).
  for (const p of mock.posts) assert.match(p.json.messages[0].content, /^be brief\n/);

  writeFiles(ROTATED);
  const rotated = await runLogged();
  assert.ok(hit(rotated), rotated.join('\n'));
  assert.equal(mock.posts[2]!.headers.authorization, `Bearer ${ROTATED}`);
  // A value of another length is another shape: evaluated (and cached again).
  writeFiles(LONGER);
  const longer = await runLogged();
  assert.ok(evaluated(longer) && !hit(longer), longer.join('\n'));
  assert.equal(mock.posts[3]!.headers.authorization, `Bearer ${LONGER}`);

  // Private, and no key in it (nor in the debug log).
  assert.equal(statSync(cacheFile()).mode & 0o777, 0o600);
  const text = readFileSync(cacheFile(), 'utf8');
  const logText = readFileSync(log(), 'utf8');
  for (const s of [KEY, ROTATED, LONGER, SEARCH]) {
    assert.ok(!text.includes(s), `the cache holds ${s}`);
    assert.ok(!logText.includes(s), `the debug log holds ${s}`);
  }
});

test('editing config.lua is seen on the next run; a damaged cache is ignored and rewritten', async () => {
  writeFiles();
  await runLogged();
  dirs.write('config.lua', readFileSync(join(dirs.clm, 'config.lua'), 'utf8').replace('"mock/m1"', '"mock/m2"'));
  const edited = await runLogged();
  assert.ok(evaluated(edited), edited.join('\n'));
  assert.equal(mock.posts.at(-1)!.json.model, 'm2');
  writeFileSync(cacheFile(), '{ not json');
  const damaged = await runLogged();
  assert.ok(evaluated(damaged), damaged.join('\n'));
  assert.equal(mock.posts.at(-1)!.headers.authorization, `Bearer ${KEY}`);
  assert.equal(JSON.parse(readFileSync(cacheFile(), 'utf8')).entries.length, 1);
  assert.ok(hit(await runLogged()));
});

test("clm setup's config.lua and secrets.lua (a key filled in) are answered from the cache from the second run on", async () => {
  const s = await runCli(['setup'], { dirs });
  assert.equal(s.code, 0, show(s));
  const secrets = join(dirs.clm, 'secrets.lua');
  writeFileSync(secrets, readFileSync(secrets, 'utf8').replace('groq = "",', `groq = "${KEY}",`));
  // The setup's providers are remote: -u points the run at the mock; the model stays the default.
  const one = async () => {
    rmSync(log(), { force: true });
    const r = await runCli(['-u', mock.base, '-p', dirs.empty, '-o', 'q'], { dirs, env: { CLM_DEBUG_LOG: log() } });
    assert.equal(r.code, 0, show(r));
    return readFileSync(log(), 'utf8');
  };
  assert.match(await one(), /config: evaluation cached in /);
  const warm = await one();
  assert.match(warm, /config: evaluation taken from the cache/);
  assert.doesNotMatch(warm, /evaluating in the Lua worker/);
  assert.ok(!readFileSync(cacheFile(), 'utf8').includes(KEY));
});
