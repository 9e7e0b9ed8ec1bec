// `clm setup`: seed plugins, agents/, secrets.lua 0600, config.lua 0644; never overwrites.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_TEMPLATE, SECRETS_TEMPLATE, TEMPLATE_PROVIDERS, loadConfig, resolveConnection, runSetup } from '../../src/config/index.js';
import { withoutMoves } from './helpers.js';

const seeds = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'config', 'seed-plugins');

function tmp(t: { after(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'clm-setup-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const mode = (p: string) => statSync(p).mode & 0o777;

test('setup writes everything once; a second run keeps everything', (t) => {
  const xdg = tmp(t);
  const dir = join(xdg, 'clm');
  const first = runSetup({ seedPluginsDir: seeds, env: { XDG_CONFIG_HOME: xdg } });
  assert.deepEqual(first, {
    ok: true,
    lines: [`plugins in ${dir}/plugins`, `agent profiles in ${dir}/agents`, `wrote ${dir}/secrets.lua`, `wrote ${dir}/config.lua`],
  });
  assert.deepEqual(readdirSync(join(dir, 'plugins')).sort(), ['alpha.lua', 'beta.lua']);
  assert.equal(readFileSync(join(dir, 'plugins', 'alpha.lua'), 'utf8'), readFileSync(join(seeds, 'alpha.lua'), 'utf8'));
  assert.equal(mode(join(dir, 'secrets.lua')), 0o600);
  assert.equal(mode(join(dir, 'config.lua')) & 0o600, 0o600);
  assert.equal(mode(join(dir, 'plugins', 'alpha.lua')) & 0o600, 0o600);
  assert.ok(statSync(join(dir, 'agents')).isDirectory());
  assert.equal(readFileSync(join(dir, 'config.lua'), 'utf8'), CONFIG_TEMPLATE);
  assert.equal(readFileSync(join(dir, 'secrets.lua'), 'utf8'), SECRETS_TEMPLATE);

  // the user edits things and deletes a plugin; setup again
  writeFileSync(join(dir, 'config.lua'), 'return { model = "mine" }');
  writeFileSync(join(dir, 'secrets.lua'), 'return { groq = "gsk" }');
  writeFileSync(join(dir, 'plugins', 'alpha.lua'), '-- edited');
  rmSync(join(dir, 'plugins', 'beta.lua'));
  const second = runSetup({ dir, seedPluginsDir: seeds });
  assert.deepEqual(second.lines, [
    `plugins in ${dir}/plugins`,
    `agent profiles in ${dir}/agents`,
    `kept existing ${dir}/secrets.lua`,
    `kept existing ${dir}/config.lua`,
  ]);
  assert.equal(second.ok, true);
  assert.equal(readFileSync(join(dir, 'config.lua'), 'utf8'), 'return { model = "mine" }');
  assert.equal(readFileSync(join(dir, 'secrets.lua'), 'utf8'), 'return { groq = "gsk" }');
  assert.equal(readFileSync(join(dir, 'plugins', 'alpha.lua'), 'utf8'), '-- edited');
  assert.ok(existsSync(join(dir, 'plugins', 'beta.lua'))); // a missing seed comes back
  assert.equal(mode(join(dir, 'secrets.lua')), 0o600);
});

test('the generated config.lua and secrets.lua load, with every template provider', async (t) => {
  const dir = join(tmp(t), 'clm');
  assert.equal(runSetup({ dir, seedPluginsDir: seeds }).ok, true);
  const log: string[] = [];
  const cfg = await loadConfig({ dir, log: (l) => log.push(l) });
  assert.ok(cfg);
  assert.deepEqual(withoutMoves(log), []); // 0600 secrets, no unknown keys
  assert.deepEqual(cfg.warnings, []);
  assert.deepEqual(Object.keys(cfg.providers).sort(), TEMPLATE_PROVIDERS.map(([n]) => n).sort());
  for (const [name, kind, url] of TEMPLATE_PROVIDERS) {
    assert.equal(cfg.providers[name].kind, kind, name);
    assert.equal(cfg.providers[name].url, url, name);
    assert.equal(cfg.providers[name].apiKey, '', name); // every provider has a secrets slot
  }
  assert.equal(cfg.providers.openai.kind, 'openai-responses');
  assert.equal(cfg.providers.anthropic.kind, 'anthropic');
  assert.deepEqual(cfg.tools, {});
  assert.equal(cfg.model, undefined);
  // a filled-in secret reaches the provider
  writeFileSync(join(dir, 'secrets.lua'), SECRETS_TEMPLATE.replace('openai = ""', 'openai = "sk-openai"'));
  chmodSync(join(dir, 'secrets.lua'), 0o600);
  const cfg2 = (await loadConfig({ dir }))!;
  const r = resolveConnection(cfg2, { model: 'openai/gpt-5' }, {});
  assert.equal(r.apiKey, 'sk-openai');
  assert.equal(r.baseUrl, 'https://api.openai.com/v1/responses');
});

test('the commented local example is valid Lua once uncommented', async (t) => {
  const dir = join(tmp(t), 'clm');
  mkdirSync(dir);
  const uncommented = CONFIG_TEMPLATE.replace(/-- (\["local"\]| {2}|\},)/g, '$1').replace(/--\s{3}(\S)/g, '$1');
  writeFileSync(join(dir, 'config.lua'), uncommented);
  const cfg = (await loadConfig({ dir }))!;
  assert.equal(cfg.providers.local?.kind, 'ollama');
  assert.deepEqual(cfg.providers.local?.models['qwen3-32b'], { contextSize: 32768, autocompactPct: 70 });
});

test('setup errors: no config path, mkdir failure, unwritable file', (t) => {
  assert.deepEqual(runSetup({ seedPluginsDir: seeds, env: {} }), {
    ok: false,
    lines: ['setup: could not determine config path ($XDG_CONFIG_HOME or $HOME not set)'],
    error: 'setup: could not determine config path ($XDG_CONFIG_HOME or $HOME not set)',
  });
  const base = tmp(t);
  writeFileSync(join(base, 'file'), 'x');
  const r = runSetup({ dir: join(base, 'file', 'clm'), seedPluginsDir: seeds });
  assert.equal(r.ok, false);
  assert.match(r.error!, new RegExp(`^setup: mkdir ${join(base, 'file', 'clm', 'plugins')}: ENOTDIR`));
  assert.equal(r.lines.at(-1), r.error);

  if (process.getuid?.() !== 0) {
    const dir = join(base, 'ro');
    assert.equal(runSetup({ dir, seedPluginsDir: seeds }).ok, true);
    rmSync(join(dir, 'config.lua'));
    chmodSync(dir, 0o555);
    t.after(() => chmodSync(dir, 0o755));
    const ro = runSetup({ dir, seedPluginsDir: seeds });
    assert.equal(ro.ok, false);
    assert.match(ro.error!, new RegExp(`^setup: writing ${join(dir, 'config.lua')}: EACCES`));
    assert.equal(ro.lines.at(-2), `kept existing ${join(dir, 'secrets.lua')}`);
  }
});
