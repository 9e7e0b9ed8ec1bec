import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { tempDir } from '../fixtures/temp-dir.js';
import { join } from 'node:path';
import { CONFIG_CACHE_FILE } from '../../src/config/config-cache.js';
import { loadConfig, type LoadConfigOptions } from '../../src/config/load.js';
import { CONFIG_TEMPLATE, SECRETS_TEMPLATE } from '../../src/config/templates.js';
import { tempFor, type TempConfig } from './helpers.js';

export const GROQ = 'gsk_cache-test-0123456789abcdefABCDEF';
export const TAVILY = 'tvly-cache-test-"quoted"\\back\nline-€';

export const SECRETS = SECRETS_TEMPLATE.replace('groq = "",', `groq = "${GROQ}",`).replace(
  '-- tavily = "tvly-...",',
  `tavily = ${JSON.stringify(TAVILY)},`,
);
export const CONFIG = CONFIG_TEMPLATE.replace(
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

export interface Setup {
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

export function setup(
  t: { after(fn: () => void): void },
  files: Record<string, string> = { 'secrets.lua': SECRETS, 'config.lua': CONFIG },
): Setup {
  const c = tempFor(t, files);
  const cacheDir = join(tempDir('clm-cfgcache-'), 'state', 'clm');
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

export const PROFILE =
  'return { model = "groq/coder", system_prompt = "code, key " .. clm.secrets.groq, tools = { web_search = { extra = clm.secrets.tavily } }, odd = 1 }';

/** A Lua string literal of any text (decimal escapes for every byte outside printable ASCII). */
export const luaStr = (v: string) =>
  `"${[...Buffer.from(v, 'utf8')].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${b}`)).join('')}"`;
export const secretsOf = (secrets: Record<string, string>) =>
  `return { ${Object.entries(secrets)
    .map(([k, v]) => `${k} = ${luaStr(v)}`)
    .join(', ')} }`;

/**
 * Load with each secrets table in turn (the cache kept between loads): every load must give what
 * evaluating gives. Returns whether each load was a hit.
 */
export async function inTurn(t: { after(fn: () => void): void }, config: string, turns: Record<string, string>[]): Promise<boolean[]> {
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
export async function sentinelBytes(t: { after(fn: () => void): void }): Promise<number> {
  const s = setup(t, { 'secrets.lua': secretsOf({ k: 'k-000000' }), 'config.lua': 'return { system_prompt = clm.secrets.k }' });
  await s.load();
  assert.ok(s.cached(), s.log.join('\n'));
  const prompt = JSON.parse(s.cacheText()).entries[0].top.system_prompt as string;
  assert.ok(!prompt.includes('k-000000'));
  return Buffer.byteLength(prompt, 'utf8');
}
