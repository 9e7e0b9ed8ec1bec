// The evaluation cache: a hit gives exactly what evaluating gives (secrets substituted), every
// input that matters invalidates it, the file never holds a secret, and a broken cache is only
// ever a miss. (What is never cached: config-cache-inspect and config-cache-shape.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_CACHE_FILE } from '../../src/config/config-cache.js';
import { configCacheAnswers, listAgents, loadConfig, selectAgent } from '../../src/config/load.js';

import { CONFIG, GROQ, PROFILE, SECRETS, setup, TAVILY } from './cache-setup.js';

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
