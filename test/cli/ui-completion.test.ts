// TAB completion of the interactive UI over the real runtime: command names, profiles, providers,
// /model's provider names, configured specs and the provider's live catalog (asked of that
// provider's server with its dialect's auth, kept a minute, failures told), emoji shortcodes and
// paths (hidden files, directories behind symlinks, a FIFO that must not block, the 128 cap,
// names with spaces written escaped).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeSuite } from '../fixtures/command-context.js';
import { complete } from '../../src/cli/ui/completion.js';
import type { Completion } from '../../src/cli/ui/command-context.js';

const s = runtimeSuite();

function config(): void {
  s.dirs.write(
    'config.lua',
    `return {
  model = "oa/gpt",
  providers = {
    oa = { url = "${s.mock.base}", api_key = "sk-oa-0123456789", models = { gpt = {} } },
    anth = { kind = "anthropic", url = "${s.mock.url}/anth/v1", api_key = "sk-ant-0123456789", models = { claude = {}, ["claude-opus"] = {} } },
    another = { url = "${s.mock.url}/another/v1" },
    broken = { url = "http://127.0.0.1:1/v1" },
  },
  agents = { coder = {}, critic = {} },
}
`,
  );
  s.dirs.write('agents/reviewer.lua', 'return {}\n');
}

const unique = (insert: string, replace: number): Completion => ({ replace, insert, candidates: [] });
/** The commands of the families (command-families.ts), after the core ones. */
const MORE = ['/context', '/fork', '/usage', '/tools', '/mcp', '/sandbox', '/permissions'];

test('command names: one completes with a space, several give their common prefix and the list', async () => {
  const { ctx } = await s.start(['-u', s.mock.base]);
  assert.deepEqual(complete('/mo', ctx).now, unique('/model ', 3));
  assert.deepEqual(complete('  /he', ctx).now, unique('/help ', 3));
  assert.deepEqual(complete('/c', ctx).now, { replace: 2, insert: '/c', candidates: ['/clear', '/compact', '/context'] });
  const all = complete('/', ctx).now!;
  assert.deepEqual(all.candidates, [
    '/help',
    '/clear',
    '/agent',
    '/model',
    '/provider',
    '/reasoning',
    '/output',
    '/compact',
    '/undo',
    '/rewind',
    '/diff',
    '/quit',
    ...MORE,
  ]);
  assert.equal(all.insert, '/');
  assert.equal(complete('/zz', ctx).now, null);
  assert.equal(complete('/clear x', ctx).now, null, 'commands without arguments complete nothing');
  assert.equal(complete('hello', ctx).now, null);
  assert.equal(complete('', ctx).now, null);
});

test('arguments: /agent profiles (inline and files), /provider names, /reasoning and /output values', async () => {
  config();
  const { ctx } = await s.start([]);
  assert.deepEqual(complete('/agent ', ctx).now, { replace: 0, insert: '', candidates: ['coder', 'critic', 'reviewer'] });
  assert.deepEqual(complete('/agent c', ctx).now, { replace: 1, insert: 'c', candidates: ['coder', 'critic'] });
  assert.deepEqual(complete('/a r', ctx).now, unique('reviewer ', 1), 'aliases complete their arguments too');
  assert.deepEqual(complete('/provider a', ctx).now, { replace: 1, insert: 'an', candidates: ['another', 'anth'] });
  assert.deepEqual(complete('/provider o', ctx).now, unique('oa ', 1));
  assert.deepEqual(complete('/think o', ctx).now, { replace: 1, insert: 'o', candidates: ['on', 'off'] });
  assert.deepEqual(complete('/output f', ctx).now, unique('full ', 1));
  assert.equal(complete('/agent coder x', ctx).now, null, 'only the first argument');
});

test('/model: provider names before the slash (one gets the slash)', async () => {
  config();
  const { ctx } = await s.start([]);
  assert.deepEqual(complete('/model ant', ctx).now, unique('anth/', 3));
  assert.deepEqual(complete('/model an', ctx).now, { replace: 2, insert: 'an', candidates: ['another', 'anth'] });
  assert.equal(complete('/model ', ctx).now!.candidates.length, 4);
  const x = complete('/model x', ctx);
  assert.equal(x.now, null);
  await assert.rejects(x.later!, /HTTP 404/, 'no provider by that name: the current server is asked for its ids');
  const r = complete('/model nope/', ctx);
  assert.equal(r.now, null);
  assert.equal(r.later, undefined, 'no server to ask for an unknown provider');
});

test("/model provider/: the configured specs at once, then that provider's live list asked with its own url and key", async () => {
  config();
  s.mock.onGet('/anth/v1/models', { body: { data: [{ id: 'claude' }, { id: 'claude-haiku' }, { id: 'other' }] } });
  const { ctx } = await s.start([]);
  const r = complete('/model anth/cl', ctx);
  assert.deepEqual(r.now, { replace: 7, insert: 'anth/claude', candidates: ['anth/claude', 'anth/claude-opus'], heading: 'from config:' });
  assert.ok(r.later);
  assert.deepEqual(await r.later, { replace: 0, insert: '', candidates: ['anth/claude', 'anth/claude-haiku'], heading: 'from server:' });
  const get = s.mock.requests.find((q) => q.path === '/anth/v1/models')!;
  assert.equal(get.headers['x-api-key'], 'sk-ant-0123456789', "the anthropic dialect's auth");
  assert.ok(get.headers['anthropic-version']);

  // Nothing configured matches: the server's list completes the text itself.
  const h = complete('/model anth/claude-h', ctx);
  assert.equal(h.now, null);
  assert.deepEqual(await h.later, unique('anth/claude-haiku ', 13));
  assert.equal(s.mock.requests.filter((q) => q.path === '/anth/v1/models').length, 1, 'asked once a minute, not per TAB');
  assert.equal(await complete('/model anth/zzz', ctx).later, null);
});

test('/model current-provider/: the live list of the current connection', async () => {
  config();
  s.mock.onGet('/v1/models', { body: { data: [{ id: 'gpt' }, { id: 'gpt-mini' }] } });
  const { ctx } = await s.start([]);
  const r = complete('/model oa/', ctx);
  assert.deepEqual(
    r.now,
    { replace: 3, insert: 'oa/gpt', candidates: ['oa/gpt'], heading: 'from config:' },
    'one configured spec is listed, not closed with a space: the server may have longer ones',
  );
  assert.deepEqual(await r.later, { replace: 0, insert: '', candidates: ['oa/gpt', 'oa/gpt-mini'], heading: 'from server:' });
});

test('/model without config.lua: bare ids from the current server', async () => {
  s.mock.onGet('/v1/models', { body: { data: [{ id: 'qwen3-32b' }, { id: 'qwen3-8b' }, { id: 'llama' }] } });
  const { ctx } = await s.start(['-u', s.mock.base]);
  const r = complete('/model q', ctx);
  assert.equal(r.now, null);
  assert.deepEqual(await r.later, { replace: 1, insert: 'qwen3-', candidates: ['qwen3-32b', 'qwen3-8b'], heading: 'from server:' });
  assert.deepEqual(await complete('/model l', ctx).later, unique('llama ', 1));
});

test('/model: a failed live fetch rejects with the reason, and is asked again next time', async () => {
  config();
  s.mock.onGet('/another/v1/models', { status: 401, body: { error: { message: 'no key' } } });
  const { ctx } = await s.start([]);
  await assert.rejects(complete('/model another/', ctx).later!, /HTTP 401/);
  await assert.rejects(complete('/model broken/', ctx).later!, /ECONNREFUSED|connect/);
  s.mock.onGet('/another/v1/models', { body: { data: [{ id: 'fine' }] } });
  assert.deepEqual(await complete('/model another/', ctx).later, unique('another/fine ', 8));
});

test('/model: a live fetch that never answers leaves `now` usable and the promise pending (the screen drops it)', async () => {
  config();
  s.mock.onGet('/anth/v1/models', { hang: true });
  const { ctx } = await s.start([]);
  const r = complete('/model anth/', ctx);
  assert.equal(r.now!.insert, 'anth/claude');
  const outcome = await Promise.race([
    r.later!.then(
      () => 'settled',
      () => 'settled',
    ),
    new Promise((res) => setTimeout(() => res('pending'), 300)),
  ]);
  assert.equal(outcome, 'pending');
});

test('emoji shortcodes: one becomes the emoji, several give the common prefix and a list; not inside a word', async () => {
  const { ctx } = await s.start(['-u', s.mock.base]);
  // The table loads on first use: that answer comes later.
  const first = complete('ship it :tad', ctx);
  const tada = first.now ?? (await first.later);
  assert.deepEqual(tada, unique('🎉', 4));
  assert.deepEqual(complete(':tada', ctx).now, unique('🎉', 5));
  const thumbs = complete('(:thumbs', ctx).now!;
  assert.equal(thumbs.insert, ':thumbs');
  assert.deepEqual(thumbs.candidates, [':thumbsdown: 👎', ':thumbsup: 👍']);
  assert.equal(complete('at 10:3', ctx).now, null);
  assert.equal(complete('a :', ctx).now, null, 'at least one letter');
  const many = complete(':s', ctx).now!;
  assert.equal(many.candidates.length, 129);
  assert.match(many.candidates.at(-1)!, /^\(\+\d+ more\)$/);
});

test('paths: names in the directory, hidden ones only for a dot, directories and symlinked ones get a slash, a FIFO does not block', async () => {
  const { ctx } = await s.start(['-u', s.mock.base]);
  const d = join(s.dirs.root, 'files');
  mkdirSync(join(d, 'alpine'), { recursive: true });
  writeFileSync(join(d, 'alpha.txt'), '');
  writeFileSync(join(d, '.hidden'), '');
  symlinkSync(join(d, 'alpine'), join(d, 'linked'));
  execFileSync('mkfifo', [join(d, 'pipe')]);
  const later = (text: string) => {
    const r = complete(text, ctx);
    assert.equal(r.now, null);
    return r.later!;
  };
  assert.deepEqual(await later(`look at ${d}/al`), { replace: 2, insert: 'alp', candidates: ['alpha.txt', 'alpine/'] });
  assert.deepEqual(await later(`${d}/alpi`), unique('alpine/', 4));
  assert.deepEqual(await later(`${d}/alph`), unique('alpha.txt ', 4));
  assert.deepEqual(await later(`${d}/li`), unique('linked/', 2));
  assert.deepEqual(await later(`${d}/pi`), unique('pipe ', 2));
  assert.deepEqual(await later(`${d}/.h`), unique('.hidden ', 2));
  assert.deepEqual((await later(`${d}/`))!.candidates, ['alpha.txt', 'alpine/', 'linked/', 'pipe']);
  assert.equal(await later(`${d}/zz`), null);
  assert.equal(await later(`${d}/nonexistent/x`), null);
  // Spaces in names are written escaped, and TAB goes on through them.
  mkdirSync(join(d, 'My Documents'));
  writeFileSync(join(d, 'My Documents', 'notes one.txt'), '');
  writeFileSync(join(d, 'My Documents', 'notes two.txt'), '');
  assert.deepEqual(await later(`look at ${d}/My`), unique('My\\ Documents/', 2));
  assert.deepEqual(await later(`look at ${d}/My\\ Documents/no`), {
    replace: 2,
    insert: 'notes\\ ',
    candidates: ['notes one.txt', 'notes two.txt'],
  });
  assert.deepEqual(await later(`look at ${d}/My\\ Documents/notes\\ t`), unique('notes\\ two.txt ', 8));
});

test('paths: ~ is the home directory, relative paths the working directory, at most 128 listed', async () => {
  const { ctx } = await s.start(['-u', s.mock.base]);
  const home = process.env.HOME;
  const cwd = process.cwd();
  const big = join(s.dirs.home, 'big');
  mkdirSync(big);
  for (let i = 0; i < 200; i++) writeFileSync(join(big, `f${String(i).padStart(3, '0')}`), '');
  process.env.HOME = s.dirs.home;
  try {
    assert.deepEqual(await complete('~', ctx).later, unique('~/', 1));
    assert.deepEqual(await complete('~/bi', ctx).later, unique('big/', 2));
    const listed = (await complete('~/big/f', ctx).later)!;
    assert.equal(listed.insert, 'f');
    assert.equal(listed.candidates.length, 129);
    assert.equal(listed.candidates.at(-1), '(+72 more)');
    assert.equal(listed.candidates[0], 'f000');
    process.chdir(s.dirs.home);
    assert.deepEqual(await complete('./b', ctx).later, unique('big/', 1));
    assert.deepEqual(await complete('big/f19', ctx).later, {
      replace: 3,
      insert: 'f19',
      candidates: ['f190', 'f191', 'f192', 'f193', 'f194', 'f195', 'f196', 'f197', 'f198', 'f199'],
    });
  } finally {
    process.env.HOME = home;
    process.chdir(cwd);
  }
});
