// The evaluation cache: a hit gives exactly what evaluating gives (secrets substituted), every
// input that matters invalidates it, a configuration that depends on a secret's value is not
// cached, the file never holds a secret, and a broken cache is only ever a miss.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_CACHE_FILE } from '../../src/config/config-cache.js';
import { configCacheAnswers, listAgents, loadConfig, selectAgent, type LoadConfigOptions } from '../../src/config/load.js';
import { CONFIG_TEMPLATE, SECRETS_TEMPLATE } from '../../src/config/templates.js';
import { tempFor, type TempConfig } from './helpers.js';

const GROQ = 'gsk_cache-test-0123456789abcdefABCDEF';
const TAVILY = 'tvly-cache-test-"quoted"\\back\nline-€';

const SECRETS = SECRETS_TEMPLATE.replace('groq = "",', `groq = "${GROQ}",`).replace(
  '-- tavily = "tvly-...",',
  `tavily = ${JSON.stringify(TAVILY)},`,
);
const CONFIG = CONFIG_TEMPLATE.replace(
  '-- model = "groq/llama-3.3-70b-versatile",',
  'model = "groq/llama-3.3-70b-versatile",\n  unknown_top = 1,',
)
  .replace(
    '-- web_search = { api_key = clm.secrets.tavily },',
    'web_search = { api_key = clm.secrets.tavily, header = "Bearer " .. clm.secrets.groq, both = string.format("%s+%s", clm.secrets.groq, clm.secrets.tavily), list = { clm.secrets.groq, table.concat({ clm.secrets.tavily, "x" }, ",") } },',
  )
  .replace(
    '  -- system_prompt = "You are a helpful assistant.",',
    '  system_prompt = "be brief",\n  agents = { inline = { model = "groq/inline-model", system_prompt = "inline " .. clm.secrets.groq, bogus = true } },',
  );

interface Setup {
  c: TempConfig;
  cacheDir: string;
  log: string[];
  load(agent?: string): ReturnType<typeof loadConfig>;
  /** The same load without the cache. */
  plain(agent?: string): ReturnType<typeof loadConfig>;
  hit(): boolean;
  cached(): boolean;
  cacheText(): string;
}

function setup(
  t: { after(fn: () => void): void },
  files: Record<string, string> = { 'secrets.lua': SECRETS, 'config.lua': CONFIG },
): Setup {
  const c = tempFor(t, files);
  const cacheDir = join(mkdtempSync(join(tmpdir(), 'clm-cfgcache-')), 'state', 'clm');
  t.after(() => rmSync(join(cacheDir, '..', '..'), { recursive: true, force: true }));
  const log: string[] = [];
  const opts = (agent?: string): LoadConfigOptions => ({ dir: c.dir, agent, cacheDir, log: (l) => log.push(l) });
  return {
    c,
    cacheDir,
    log,
    load: (agent) => {
      log.length = 0;
      return loadConfig(opts(agent));
    },
    plain: (agent) => loadConfig({ dir: c.dir, agent }),
    hit: () => log.some((l) => l.startsWith('config: evaluation taken from the cache')),
    cached: () => log.some((l) => l.startsWith('config: evaluation cached in')),
    cacheText: () => readFileSync(join(cacheDir, CONFIG_CACHE_FILE), 'utf8'),
  };
}

const PROFILE =
  'return { model = "groq/coder", system_prompt = "code, key " .. clm.secrets.groq, tools = { web_search = { extra = clm.secrets.tavily } }, odd = 1 }';

test('a hit gives exactly the configuration an evaluation gives: no profile, a profile file, an inline profile', async (t) => {
  const s = setup(t);
  s.c.write('agents/coder.lua', PROFILE);
  for (const agent of [undefined, 'coder', 'inline']) {
    const plain = await s.plain(agent);
    const first = await s.load(agent);
    assert.ok(s.cached() && !s.hit(), `${agent}: ${s.log.join('\n')}`);
    const second = await s.load(agent);
    assert.ok(s.hit(), `${agent}: ${s.log.join('\n')}`);
    assert.ok(!s.log.some((l) => l.includes('evaluating in the Lua worker')), 'a hit does not start Lua');
    assert.deepStrictEqual(first, plain, agent);
    assert.deepStrictEqual(second, plain, agent);
    // Warnings are given again on a hit, and logged.
    assert.ok(second!.warnings.includes('config.lua: unknown key unknown_top (ignored)'), String(second!.warnings));
    assert.ok(s.log.includes('config.lua: unknown key unknown_top (ignored)'));
    assert.deepStrictEqual(listAgents(second!), listAgents(plain!));
    // The secrets arrived in every place config.lua put them.
    assert.equal(second!.providers.groq.apiKey, GROQ);
    assert.deepStrictEqual(second!.tools.web_search!.list, [GROQ, `${TAVILY},x`]);
    assert.equal(second!.tools.web_search!.both, `${GROQ}+${TAVILY}`);
    assert.equal(second!.tools.web_search!.header, `Bearer ${GROQ}`);
  }
  const coder = (await s.load('coder'))!;
  assert.ok(s.hit());
  assert.equal(coder.systemPrompt, `code, key ${GROQ}`);
  assert.ok(coder.warnings.includes('agents/coder.lua: unknown key odd (ignored)'), String(coder.warnings));
  assert.ok(s.log.includes('agents/coder.lua: unknown key odd (ignored)'));
  // A configuration from the cache switches profiles as one from Lua does.
  const hitTop = (await s.load())!;
  assert.ok(s.hit());
  assert.deepStrictEqual(await selectAgent(hitTop, 'coder'), await selectAgent((await s.plain())!, 'coder'));
  assert.deepStrictEqual(await selectAgent(hitTop, 'inline'), await selectAgent((await s.plain())!, 'inline'));
});

test('the cache file holds no secret value, is 0600, and entries for several profiles live side by side', async (t) => {
  const s = setup(t);
  s.c.write('agents/coder.lua', PROFILE);
  await s.load();
  await s.load('coder');
  const text = s.cacheText();
  for (const secret of [GROQ, TAVILY, JSON.stringify(TAVILY).slice(1, -1), 'gsk_cache-test', 'tvly-cache-test'])
    assert.ok(!text.includes(secret), `the cache holds ${secret}`);
  // Nor a hash of one (the key hashes the secrets' shape: lengths and which equal which, no values).
  for (const secret of [GROQ, TAVILY])
    for (const enc of ['hex', 'base64', 'base64url'] as const)
      for (const alg of ['sha1', 'sha256', 'sha512'])
        assert.ok(!text.includes(createHash(alg).update(secret).digest(enc)), `the cache holds the ${alg} of ${secret}`);
  assert.equal(statSync(join(s.cacheDir, CONFIG_CACHE_FILE)).mode & 0o777, 0o600);
  assert.equal(statSync(s.cacheDir).mode & 0o777, 0o700);
  assert.equal(JSON.parse(text).entries.length, 2);
  await s.load();
  assert.ok(s.hit());
  await s.load('coder');
  assert.ok(s.hit());
});

test('editing config.lua or the profile file, adding or emptying a secret: evaluated again; a new value alone: substituted', async (t) => {
  const s = setup(t);
  s.c.write('agents/coder.lua', PROFILE);
  const check = async (agent: string | undefined, expectHit: boolean, what: string) => {
    const cfg = await s.load(agent);
    assert.equal(s.hit(), expectHit, `${what}: ${s.log.join('\n')}`);
    assert.deepStrictEqual(cfg, await s.plain(agent), what);
    return cfg!;
  };
  await check('coder', false, 'first run');
  await check('coder', true, 'unchanged');
  s.c.write('config.lua', CONFIG.replace('be brief', 'be very brief'));
  assert.equal((await check('coder', false, 'config.lua edited')).raw.system_prompt, `code, key ${GROQ}`);
  assert.equal((await check(undefined, false, 'config.lua edited, no profile')).systemPrompt, 'be very brief');
  await check('coder', true, 'unchanged again');
  s.c.write('agents/coder.lua', PROFILE.replace('code, key', 'code now, key'));
  assert.equal((await check('coder', false, 'profile edited')).systemPrompt, `code now, key ${GROQ}`);
  await check('coder', true, 'unchanged again');
  s.c.write('secrets.lua', SECRETS.replace('cerebras = "",', 'cerebras = "csk-new-key-000000",'));
  assert.equal((await check('coder', false, 'a secret filled in')).providers.cerebras.apiKey, 'csk-new-key-000000');
  await check('coder', true, 'unchanged again');
  s.c.write('secrets.lua', SECRETS.replace(`groq = "${GROQ}",`, 'groq = "",'));
  const emptied = await check('coder', false, 'a secret emptied');
  assert.equal(emptied.providers.groq.apiKey, '');
  s.c.write('secrets.lua', SECRETS.replace(`groq = "${GROQ}",`, `groq = "${GROQ}", extra = "x-new-00000000",`));
  await check('coder', false, 'a secret added');
  // Same shape, another value of the same length: the entry answers, with the new value in every place.
  const rotatedKey = `gsk_rotated-key-${'9'.repeat(GROQ.length - 16)}`;
  assert.equal(rotatedKey.length, GROQ.length);
  s.c.write('secrets.lua', SECRETS.replace(`groq = "${GROQ}",`, `groq = "${rotatedKey}",\n extra = "x-new-00000000",`));
  const rotated = await check('coder', true, 'a value changed');
  assert.equal(rotated.providers.groq.apiKey, rotatedKey);
  assert.equal(rotated.systemPrompt, `code now, key ${rotatedKey}`);
  assert.ok(!s.cacheText().includes('gsk_rotated'));
  // A value of another length is another shape (`#` cannot be watched): evaluated, then cached.
  s.c.write('secrets.lua', SECRETS.replace(`groq = "${GROQ}",`, 'groq = "gsk_short",\n extra = "x-new-00000000",'));
  assert.equal((await check('coder', false, 'a value of another length')).providers.groq.apiKey, 'gsk_short');
  await check('coder', true, 'that length again');
  // The profile asked for is part of the key; so is config.lua's path.
  await check('inline', false, 'another profile');
  await check('inline', true, 'that profile again');
});

test("a configuration that looks into a secret's value is not cached, and stays right", async (t) => {
  for (const [name, config, reason] of [
    ['a method call', 'return { model = "m/" .. clm.secrets.k:sub(1, 3) }', /looks into a secret's value/],
    [
      'a library call behind pcall',
      'local ok = pcall(string.find, clm.secrets.k, "^sp")\nreturn { model = ok and "m/a" or "m/b" }',
      /looks into a secret's value/,
    ],
    ['a pattern on it', 'return { model = clm.secrets.k:match("^sp") and "m/sp" or "m/no" }', /looks into a secret's value/],
    ['its length', 'return { max_iterations = #clm.secrets.k }', /depends on more than where the secrets go/],
    ['a padded format', 'return { system_prompt = string.format("%20s", clm.secrets.k) }', /looks into a secret's value/],
    ['tonumber', 'return { max_iterations = tonumber(clm.secrets.k, 36) or 0 }', /looks into a secret's value/],
    ['rawlen', 'return { max_iterations = rawlen(clm.secrets.k) }', /looks into a secret's value/],
    ['string.rep by method syntax', 'return { system_prompt = clm.secrets.k:rep(2) }', /looks into a secret's value/],
    [
      'a comparison of two secrets',
      'return { model = clm.secrets.k == clm.secrets.n and "m/same" or "m/different" }',
      /depends on more than where the secrets go/,
    ],
  ] as const) {
    const s = setup(t, { 'secrets.lua': 'return {}', 'config.lua': config });
    for (const value of ['special', 'spare', 'other-value']) {
      s.c.write('secrets.lua', `return { k = "${value}", n = "${name.startsWith('a comparison') ? value : `n-${value}`}" }`);
      for (let i = 0; i < 2; i++) {
        const cfg = await s.load();
        assert.ok(!s.hit(), `${name}: ${s.log.join('\n')}`);
        assert.ok(
          s.log.some((l) => /^config: not cached: /.test(l) && reason.test(l)),
          `${name}: ${s.log.join('\n')}`,
        );
        assert.ok(!s.log.some((l) => l.includes(value)), `${name}: a log line quotes the secret`);
        assert.deepStrictEqual(cfg, await s.plain(), name);
      }
    }
    assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)), name);
  }
});

test('a comparison with a constant: cached while the value does not match it, evaluated when a value the source mentions comes', async (t) => {
  const s = setup(t, {
    'secrets.lua': 'return { k = "spare-000000" }',
    'config.lua':
      'local known = { dev = "m/dev-model" }\nreturn { model = known[clm.secrets.k] or (clm.secrets.k == "special" and "m/special" or "m/other"), providers = { m = { api_key = clm.secrets.k } } }',
  });
  const expect = async (value: string, model: string, hit: boolean) => {
    s.c.write('secrets.lua', `return { k = "${value}" }`);
    const cfg = await s.load();
    assert.equal(cfg?.model, model, value);
    assert.equal(cfg?.providers.m.apiKey, value);
    assert.equal(s.hit(), hit, `${value}: ${s.log.join('\n')}`);
    assert.deepStrictEqual(cfg, await s.plain(), value);
  };
  await expect('special', 'm/special', false); // real and sentinel differ: not cached
  assert.ok(
    s.log.some((l) => /^config: not cached: config\.lua's result depends on more than where the secrets go/.test(l)),
    s.log.join('\n'),
  );
  await expect('spare-000000', 'm/other', false); // the value makes no difference: cached
  assert.ok(s.cached());
  await expect('spare-111111', 'm/other', true);
  await expect('special', 'm/special', false); // the source mentions "special": the entry is not trusted
  await expect('dev', 'm/dev-model', false); // nor a name it mentions
  await expect('spare-222222', 'm/other', true);
});

test('secrets.lua that is code (globals config.lua may read) is evaluated every time and never cached', async (t) => {
  const s = setup(t, {
    'secrets.lua': 'KEY = "k-from-a-global-123"\nreturn { k = KEY }',
    'config.lua': 'return { model = "m/" .. KEY, providers = { m = { api_key = clm.secrets.k } } }',
  });
  for (let i = 0; i < 2; i++) {
    const cfg = await s.load();
    assert.equal(cfg?.model, 'm/k-from-a-global-123');
    assert.ok(s.log.includes('config: secrets.lua is not a plain literal table; the evaluation cache is not used'), s.log.join('\n'));
  }
  assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)));
  // A broken secrets.lua: Lua's warning as before, and no cache.
  s.c.write('secrets.lua', 'return { k = "unfinished }');
  s.c.write('config.lua', 'return {}');
  const cfg = await s.load();
  assert.match(cfg!.warnings[0]!, /^secrets\.lua:1: unfinished string .*; clm\.secrets is empty$/);
});

test('a key written into config.lua itself, or a secret used as a table key, is never copied into the cache', async (t) => {
  const s = setup(t, {
    'secrets.lua': 'return { k = "sk-from-secrets-0000" }',
    'config.lua': 'return { providers = { p = { api_key = "sk-literal-in-config-123" } } }',
  });
  await s.load();
  assert.ok(
    s.log.some((l) => /^config: not cached: the result would hold a secret value/.test(l)),
    s.log.join('\n'),
  );
  assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)));
  s.c.write('config.lua', 'return { tools = { [clm.secrets.k] = {} } }');
  const cfg = await s.load();
  assert.deepStrictEqual(cfg?.tools, { 'sk-from-secrets-0000': {} });
  // Substitution also reaches keys: the entry holds the sentinel there, the hit the value.
  const again = await s.load();
  assert.ok(s.hit(), s.log.join('\n'));
  assert.deepStrictEqual(again, await s.plain());
  assert.ok(!s.cacheText().includes('sk-from-secrets'));
});

test('a damaged, foreign or unreadable cache is ignored and replaced; a cache that cannot be written is only logged', async (t) => {
  const s = setup(t);
  const file = () => join(s.cacheDir, CONFIG_CACHE_FILE);
  const want = await s.plain();
  for (const [what, prepare] of [
    ['garbage', () => writeFileSync(file(), '{"format":1,"entries":[{"scope":')],
    ['another format', () => writeFileSync(file(), JSON.stringify({ format: 99, entries: [] }))],
    [
      'wrong entry types',
      () => {
        const c = JSON.parse(s.cacheText());
        c.entries[0].top = 'not a table';
        writeFileSync(file(), JSON.stringify(c));
      },
    ],
    ['a FIFO', () => execFileSync('mkfifo', [file()])],
    ['unreadable', () => chmodSync(file(), 0o000)],
  ] as const) {
    await s.load(); // a valid cache to damage
    if (process.getuid?.() === 0 && what === 'unreadable') continue; // root reads it anyway
    rmSync(file(), { force: true });
    if (what === 'wrong entry types' || what === 'unreadable') await s.load();
    prepare();
    const cfg = await s.load();
    assert.ok(!s.hit(), what);
    assert.deepStrictEqual(cfg, want, what);
    assert.ok(s.cached(), `${what}: rewritten\n${s.log.join('\n')}`);
    assert.ok(statSync(file()).isFile());
    await s.load();
    assert.ok(s.hit(), `${what}: the rewritten cache answers`);
  }
  // A directory where the file goes, and a state dir below a regular file: not written, no error.
  rmSync(file(), { force: true });
  mkdirSync(file());
  assert.deepStrictEqual(await s.load(), want);
  assert.ok(
    s.log.some((l) => l.startsWith(`config: cannot write the evaluation cache ${file()}`)),
    s.log.join('\n'),
  );
  const blocked = join(s.cacheDir, 'not-a-dir');
  writeFileSync(blocked, '');
  const cfg = await loadConfig({ dir: s.c.dir, cacheDir: join(blocked, 'clm'), log: (l) => s.log.push(l) });
  assert.deepStrictEqual(cfg, want);
});

test('configCacheAnswers: whether a load would start Lua, decided from the files alone', async (t) => {
  const s = setup(t);
  s.c.write('agents/coder.lua', PROFILE);
  const answers = (agent?: string) => configCacheAnswers({ dir: s.c.dir, agent, cacheDir: s.cacheDir });
  assert.equal(answers(), false);
  await s.load();
  assert.equal(answers(), true);
  assert.equal(answers('coder'), false);
  await s.load('coder');
  assert.equal(answers('coder'), true);
  s.c.write('agents/coder.lua', `${PROFILE}\n`);
  assert.equal(answers('coder'), false, 'the profile file changed');
  assert.equal(answers(), true);
  s.c.write('secrets.lua', SECRETS.replace('cerebras = "",', 'cerebras = "csk-0000000000",'));
  assert.equal(answers(), false, 'the secrets changed shape');
  s.c.write('secrets.lua', 'return { k = os }');
  assert.equal(answers(), false, 'secrets.lua is code');
  assert.equal(configCacheAnswers({ dir: s.c.dir }), false, 'no cache dir');
});

test('errors are not cached: a broken config.lua fails with file and line on every run', async (t) => {
  const s = setup(t, { 'config.lua': 'return {\n  model = clm.secrets.k.x.y,\n}', 'secrets.lua': 'return { k = "v0000000" }' });
  for (let i = 0; i < 2; i++) {
    await assert.rejects(
      s.load(),
      (e: Error & { line?: number }) => /^config\.lua:2: attempt to index a nil value \(field 'x'\)$/.test(e.message) && e.line === 2,
    );
  }
  assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)));
  // A value the validator refuses, reached through a cached entry: the same error as evaluating.
  s.c.write('config.lua', 'return {\n  providers = { p = { url = clm.secrets.k } },\n}');
  s.c.write('secrets.lua', 'return { k = "https://example.com/v1" }');
  await s.load();
  assert.ok(s.cached());
  s.c.write('secrets.lua', 'return { k = "ftp://example.com/abcd" }'); // the same length: the same shape
  const viaCache = await s.load().catch((e: Error) => e);
  assert.ok(!s.log.some((l) => l.includes('evaluating in the Lua worker')), 'the cached entry answered (and the check failed)');
  const viaLua = await s.plain().catch((e: Error) => e);
  assert.ok(viaCache instanceof Error && viaLua instanceof Error);
  assert.equal(viaCache.message, viaLua.message);
  assert.equal(viaCache.message, 'config.lua:2: providers.p.url must be an http:// or https:// URL (got "ftp://example.com/abcd")');
});

test('an edit within the same second that keeps the size and the mtime is still seen (the key is the bytes, not the stat)', async (t) => {
  const s = setup(t, { 'secrets.lua': 'return { k = "k-0000000000" }', 'config.lua': 'return { model = "m/aaaa" }' });
  const path = join(s.c.dir, 'config.lua');
  const second = 1_700_000_000; // a whole second: the same mtime at any timestamp resolution
  utimesSync(path, second, second);
  assert.equal((await s.load())?.model, 'm/aaaa');
  assert.ok(s.cached());
  const { ino, size } = statSync(path);
  writeFileSync(path, 'return { model = "m/bbbb" }'); // same size, in place (same inode)
  utimesSync(path, second, second);
  assert.deepEqual([statSync(path).ino, statSync(path).size, statSync(path).mtimeMs], [ino, size, second * 1000]);
  assert.equal((await s.load())?.model, 'm/bbbb');
  assert.ok(!s.hit(), s.log.join('\n'));
  // secrets.lua likewise: a value of the same length in its place is used at once.
  const spath = join(s.c.dir, 'secrets.lua');
  s.c.write('config.lua', 'return { providers = { m = { api_key = clm.secrets.k } } }');
  utimesSync(spath, second, second);
  await s.load();
  writeFileSync(spath, 'return { k = "k-1111111111" }');
  utimesSync(spath, second, second);
  assert.equal((await s.load())?.providers.m.apiKey, 'k-1111111111');
  assert.ok(s.hit(), s.log.join('\n'));
});

test('a cache file that is a symbolic link, or writable by others, or truncated to nothing, is ignored and replaced', async (t) => {
  const s = setup(t);
  const file = join(s.cacheDir, CONFIG_CACHE_FILE);
  const want = await s.plain();
  await s.load();
  assert.ok(s.cached());
  // A link to a valid cache elsewhere (whoever made it could point the run anywhere): not followed.
  const elsewhere = join(s.cacheDir, 'elsewhere.json');
  renameSync(file, elsewhere);
  symlinkSync(elsewhere, file);
  assert.deepStrictEqual(await s.load(), want);
  assert.ok(!s.hit(), `a link is read: ${s.log.join('\n')}`);
  assert.ok(!lstatSync(file).isSymbolicLink(), 'the link is replaced by a file');
  assert.ok(s.cached());
  await s.load();
  assert.ok(s.hit());
  // Group- or world-writable: anyone could have written it.
  chmodSync(file, 0o622);
  assert.deepStrictEqual(await s.load(), want);
  assert.ok(!s.hit(), `a writable-by-others cache is read: ${s.log.join('\n')}`);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  // Empty (a crash before the write, a full disk).
  writeFileSync(file, '');
  assert.deepStrictEqual(await s.load(), want);
  assert.ok(!s.hit() && s.cached(), s.log.join('\n'));
});

test('a configuration whose result varies from run to run (math.random, collectgarbage, addresses) is never cached', async (t) => {
  // No os or io: environment variables, the time and files are out of config.lua's reach.
  const probe = setup(t, { 'config.lua': 'return { system_prompt = type(os) .. type(io) .. type(require) .. type(loadfile) }' });
  assert.equal((await probe.load())?.systemPrompt, 'nilnilnilnil');
  for (const [name, config] of [
    ['math.random, same result every time', 'local n = math.random(1)\nreturn { model = "m/" .. n }'],
    ['math.random as a method value', 'local r = math.random\nreturn { max_iterations = r(1, 1) }'],
    ['math.randomseed', 'math.randomseed(42)\nreturn { model = "m/x" }'],
    ['collectgarbage', 'local kb = collectgarbage("count")\nreturn { model = kb > 0 and "m/x" or "m/y" }'],
    ['a table address', 'local a = tostring({})\nreturn { model = a ~= "" and "m/x" or "m/y" }'],
    ['a function address in a format', 'local a = string.format("%p", print or type)\nreturn { model = a ~= "" and "m/x" or "m/y" }'],
  ] as const) {
    const s = setup(t, { 'secrets.lua': 'return { k = "k-0000000000" }', 'config.lua': config });
    for (let i = 0; i < 2; i++) {
      assert.deepStrictEqual(await s.load(), await s.plain(), name);
      assert.ok(!s.hit(), `${name}: ${s.log.join('\n')}`);
      assert.ok(
        s.log.some((l) => /^config: not cached: config\.lua's result may differ from run to run \(it calls [\w.]+\)$/.test(l)),
        `${name}: ${s.log.join('\n')}`,
      );
    }
    assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)), name);
  }
  // What that means: a key picked at random is picked again on every run.
  const s = setup(t, {
    'secrets.lua': 'return { a = "key-a-000000", b = "key-b-000000" }',
    'config.lua': 'return { providers = { m = { api_key = ({ clm.secrets.a, clm.secrets.b })[math.random(2)] } } }',
  });
  const seen = new Set<string>();
  for (let i = 0; i < 24 && seen.size < 2; i++) seen.add((await s.load())!.providers.m.apiKey!);
  assert.deepStrictEqual([...seen].sort(), ['key-a-000000', 'key-b-000000']);
});

/** A Lua string literal of any text (decimal escapes for every byte outside printable ASCII). */
const luaStr = (v: string) =>
  `"${[...Buffer.from(v, 'utf8')].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${b}`)).join('')}"`;
const secretsOf = (secrets: Record<string, string>) =>
  `return { ${Object.entries(secrets)
    .map(([k, v]) => `${k} = ${luaStr(v)}`)
    .join(', ')} }`;

/**
 * Load with each secrets table in turn (the cache kept between loads): every load must give what
 * evaluating gives. Returns whether each load was a hit.
 */
async function inTurn(t: { after(fn: () => void): void }, config: string, turns: Record<string, string>[]): Promise<boolean[]> {
  const s = setup(t, { 'secrets.lua': secretsOf(turns[0]!), 'config.lua': config });
  const hits: boolean[] = [];
  for (const secrets of turns) {
    s.c.write('secrets.lua', secretsOf(secrets));
    const cfg = await s.load();
    hits.push(s.hit());
    assert.deepStrictEqual(cfg, await s.plain(), `${config}\nwith ${JSON.stringify(secrets)}:\n${s.log.join('\n')}`);
  }
  return hits;
}

/** The byte length of a sentinel, as an evaluation with sentinel secrets sees it. */
async function sentinelBytes(t: { after(fn: () => void): void }): Promise<number> {
  const s = setup(t, { 'secrets.lua': secretsOf({ k: 'k-000000' }), 'config.lua': 'return { system_prompt = clm.secrets.k }' });
  await s.load();
  assert.ok(s.cached(), s.log.join('\n'));
  const prompt = JSON.parse(s.cacheText()).entries[0].top.system_prompt as string;
  assert.ok(!prompt.includes('k-000000'));
  return Buffer.byteLength(prompt, 'utf8');
}

test("a secret's length (in bytes) is part of the key: a value as long as a sentinel does not answer for other lengths", async (t) => {
  const n = await sentinelBytes(t);
  const config = 'return { max_iterations = #clm.secrets.k, model = #clm.secrets.k > 30 and "m/long" or "m/short" }';
  const hits = await inTurn(t, config, [
    { k: 'a'.repeat(n) }, // `#` agrees with the sentinel's
    { k: 'b'.repeat(7) },
    { k: 'c'.repeat(n + 1) },
    { k: `${'é'.repeat(5)}${'x'.repeat(n - 5)}` }, // n characters, n + 5 bytes
    { k: `${'é'.repeat(5)}${'x'.repeat(n - 10)}` }, // n bytes
    { k: 'd'.repeat(n) },
  ]);
  // The coincidence is cached (a value of that length gives the same), and answers only for it.
  assert.deepStrictEqual(hits, [false, false, false, false, true, true]);
});

test('an order between a secret and a constant, or between two secrets, is never cached', async (t) => {
  const turns = (k: string[], n: string[]) => k.map((v, i) => ({ k: v, n: n[i]! }));
  const cases: [string, Record<string, string>[]][] = [
    ['return { model = clm.secrets.k < "m" and "m/a" or "m/b" }', turns(['xyz-0000000', 'abc-0000000', 'xyz-1111111'], ['', '', ''])],
    ['return { model = "m" <= clm.secrets.k and "m/a" or "m/b" }', turns(['xyz-0000000', 'abc-0000000', 'xyz-1111111'], ['', '', ''])],
    [
      'return { model = clm.secrets.k < clm.secrets.n and "m/a" or "m/b" }',
      turns(['aaa-0000000', 'bbb-0000000', 'aaa-1111111'], ['bbb-0000000', 'aaa-0000000', 'bbb-1111111']),
    ],
    [
      'return { model = clm.secrets.k > clm.secrets.n and "m/a" or "m/b" }',
      turns(['aaa-0000000', 'bbb-0000000', 'aaa-1111111'], ['bbb-0000000', 'aaa-0000000', 'bbb-1111111']),
    ],
  ];
  for (const [config, secrets] of cases) {
    for (const s of secrets) if (s.n === '') delete s.n;
    assert.deepStrictEqual(await inTurn(t, config, secrets), [false, false, false], config);
  }
  // Eleven secrets (numbered in key order): the order of the 3rd and the 11th flips between the two sentinel runs too.
  const many = (a: string, b: string) => {
    const o: Record<string, string> = {};
    for (let i = 0; i < 11; i++) o[`s${String(i).padStart(2, '0')}`] = `filler-${i}-000`;
    o.s02 = a;
    o.s10 = b;
    return o;
  };
  const config = 'return { model = clm.secrets.s02 < clm.secrets.s10 and "m/a" or "m/b" }';
  assert.deepStrictEqual(await inTurn(t, config, [many('bbb-000', 'aaa-000'), many('aaa-000', 'bbb-000')]), [false, false]);
});

test('which secrets equal which is part of the key: values that become equal, or cease to be, are evaluated', async (t) => {
  const config =
    'return { model = clm.secrets.k == clm.secrets.n and "m/same" or "m/different", max_iterations = clm.secrets.k ~= clm.secrets.o and 1 or 2 }';
  const hits = await inTurn(t, config, [
    { k: 'key-aaaa', n: 'key-bbbb', o: 'key-cccc' },
    { k: 'key-aaaa', n: 'key-aaaa', o: 'key-cccc' }, // k == n now
    { k: 'key-dddd', n: 'key-eeee', o: 'key-ffff' }, // all different again: the first entry's shape
    { k: 'key-aaaa', n: 'key-bbbb', o: 'key-aaaa' }, // k == o
  ]);
  assert.deepStrictEqual(hits, [false, false, true, false]);
  // Equal values that are only passed along: cached, and the entry answers while they stay equal.
  const pass = 'return { providers = { a = { api_key = clm.secrets.k }, b = { api_key = clm.secrets.n } } }';
  assert.deepStrictEqual(
    await inTurn(t, pass, [
      { k: 'same-0000', n: 'same-0000' },
      { k: 'same-1111', n: 'same-1111' },
      { k: 'same-1111', n: 'diff-2222' },
      { k: 'same-3333', n: 'diff-4444' },
    ]),
    [false, true, false, true],
  );
});

test('a secret that reads as a number (arithmetic, a for loop, select coerce it), or is not valid UTF-8, is never cached', async (t) => {
  for (const config of [
    'local ok, v = pcall(function() return clm.secrets.k + 0 end)\nreturn { max_iterations = ok and v or 5 }',
    'local n = 1\npcall(function() for _ = 1, clm.secrets.k do n = n + 1 end end)\nreturn { max_iterations = n }',
    'local ok, v = pcall(select, clm.secrets.k, 10, 20, 30)\nreturn { max_iterations = ok and v or 5 }',
  ]) {
    const hits = await inTurn(t, config, [{ k: 'abc' }, { k: '002' }, { k: '0x3' }, { k: 'def' }]);
    assert.deepStrictEqual(hits, [false, false, false, true], config);
  }
  // The length of a value holding bytes that are not UTF-8 cannot be told from its decoded text.
  const n = await sentinelBytes(t);
  const s = setup(t, { 'secrets.lua': 'return {}', 'config.lua': 'return { max_iterations = #clm.secrets.k }' });
  for (const [secrets, bytes] of [
    [`return { k = "\\255${'x'.repeat(n - 1)}" }`, n],
    [`return { k = "\u{FFFD}${'x'.repeat(n - 1)}" }`, n + 2],
  ] as const) {
    s.c.write('secrets.lua', secrets);
    assert.equal((await s.load())?.maxIterations, bytes);
    assert.ok(!s.hit(), s.log.join('\n'));
    assert.ok(
      s.log.includes('config: clm.secrets.k holds U+FFFD (or bytes that are not UTF-8); the evaluation cache is not used'),
      s.log.join('\n'),
    );
  }
  s.c.write('secrets.lua', 'return { k = "0x1F" }');
  assert.equal((await s.load())?.maxIterations, 4);
  assert.ok(s.log.includes('config: clm.secrets.k reads as a number; the evaluation cache is not used'), s.log.join('\n'));
  assert.equal(configCacheAnswers({ dir: s.c.dir, cacheDir: s.cacheDir }), false);
});

test('a table keyed by secrets: built, looked up and counted through pairs, it is cached and right', async (t) => {
  // The order pairs visits string keys in is seeded per Lua state (it differs between runs
  // whatever the cache does), so only a result that does not depend on it is compared.
  const config = `local t = { [clm.secrets.a] = "x", [clm.secrets.b] = "y", plain = "z" }
local n, joined = 0, 0
for k, v in pairs(t) do n = n + 1; joined = joined + #v end
return { max_iterations = n * 10 + joined, system_prompt = t[clm.secrets.a] .. t[clm.secrets.b], tools = { [clm.secrets.a .. "-tool"] = { n = n } } }`;
  const hits = await inTurn(t, config, [
    { a: 'key-a-000000', b: 'key-b-000000' },
    { a: 'key-a-111111', b: 'key-b-111111' },
    { a: 'key-a-111111', b: 'key-a-111111' }, // equal: one key fewer
  ]);
  assert.deepStrictEqual(hits, [false, true, false]);
});
