// Config files that are one table of literals are read without Lua (literal-config.ts): the value
// must be exactly what the Lua state gives, and anything outside the subset must be declined,
// never read otherwise. Random files are evaluated both ways and compared, key order and the sign
// of zero included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/index.js';
import { LiteralConfig, NotLiteral } from '../../src/config/literal-config.js';
import { ConfigLua } from '../../src/config/lua-state.js';
import { CONFIG_TEMPLATE as TEMPLATE, SECRETS_TEMPLATE } from '../../src/config/templates.js';
import { tempFor } from './helpers.js';

const bytes = (s: string) => new TextEncoder().encode(s);

/** A small seeded generator (mulberry32), so a failure names a case that can be run again. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const SECRET_NAMES = ['openai', 'groq', 'k', '__proto__', 'x1'];
  const space = () => pick([' ', '', '\n  ', '\t', ' -- a comment\n ', ' --[[ block ]] ', ' --[==[ long\n]==] ']);
  const shortString = () => {
    const parts = [
      'a',
      'é',
      '日本',
      ' ',
      '\\n',
      '\\t',
      '\\\\',
      '\\"',
      "\\'",
      '\\x41',
      '\\u{48}',
      '\\u{1F600}',
      '\\065',
      '\\z  \n  x',
      '\\\n',
      '%s',
      '\\255',
      '\\xff',
    ];
    let s = '';
    for (let i = Math.floor(r() * 5); i > 0; i--) s += pick(parts);
    return pick(['"', "'"]) === '"' ? `"${s.replace(/(?<!\\)'/g, "'")}"` : `'${s.replace(/(?<!\\)"/g, '"')}'`;
  };
  const longString = () => {
    const eq = '='.repeat(Math.floor(r() * 3));
    const body = pick(['plain', 'two\nlines', eq ? ']] inside' : '] inside', 'é', '\r\nCRLF']);
    return `[${eq}[${pick(['', '\n', '\r\n'])}${body}]${eq}]`;
  };
  const number = () =>
    pick([
      '0',
      '7',
      '42',
      '007',
      '1.5',
      '.5',
      '5.',
      '1e3',
      '2E-2',
      '1.25e+2',
      '9007199254740993',
      '9223372036854775807',
      '9223372036854775808',
      '123456789012345678901234567890',
      '0.0',
    ]);
  const name = () => pick(['a', 'model', 'api_key', 'x_1', 'Z', 'providers', 'ends', 'nil_', 'trueish', '_']);
  const secretRef = () => {
    const n = pick(SECRET_NAMES);
    return pick([`clm.secrets.${n === '__proto__' ? 'k' : n}`, `clm.secrets["${n}"]`, `clm ${space()}.secrets${space()}[ [[${n}]] ]`]);
  };
  const value = (depth: number, positional: boolean): string => {
    const kinds = ['string', 'long', 'number', 'neg', 'bool', 'table', 'secret'];
    if (!positional) kinds.push('nil');
    const k = depth > 3 ? pick(['string', 'number', 'bool']) : pick(kinds);
    switch (k) {
      case 'string':
        return shortString();
      case 'long':
        return longString();
      case 'number':
        return number();
      case 'neg':
        return `-${space()}${pick([number(), '0', '0.0'])}`;
      case 'bool':
        return pick(['true', 'false']);
      case 'nil':
        return 'nil';
      case 'secret':
        // A positional reference must find its secret: a missing one is a hole (declined).
        return positional ? 'clm.secrets.openai' : secretRef();
      default:
        return table(depth + 1);
    }
  };
  const table = (depth: number): string => {
    const fields: string[] = [];
    const list = r() < 0.3;
    for (let i = Math.floor(r() * 5); i > 0; i--) {
      if (list) fields.push(value(depth, true));
      else if (r() < 0.7) fields.push(`${name()}${space()}=${space()}${value(depth, false)}`);
      // `[ [[k]] ]`: without the space `[[` would open a long string.
      else
        fields.push(
          `[ ${pick([`"${name()}"`, '"__proto__"', "'é \\x41\\u{1F600}'", '"a\\z  b"', longString()])}${space()}]=${value(depth, false)}`,
        );
    }
    const seps = fields.map(() => pick([',', ';', ' ,', ';\n']));
    const body = fields.map((f, i) => (i < fields.length - 1 || r() < 0.5 ? f + seps[i] : f)).join(space());
    return `{${space()}${body}${space()}}`;
  };
  const secrets = () => {
    const fields = SECRET_NAMES.filter(() => r() < 0.7).map((n) => `["${n}"] = ${pick([shortString(), '"sk-123"', number(), 'true'])}`);
    if (!fields.some((f) => f.startsWith('["openai"]'))) fields.push('openai = "sk-openai"');
    return `${space()}return${space()}{ ${fields.join(', ')} }${pick(['', ';', ' ; '])}${space()}`;
  };
  const config = () => `${pick(['', '-- config\n', '--[[ header ]]\n'])}return${space()}${table(0)}${pick(['', ';'])}${space()}`;
  return { secrets, config };
}

/** Both evaluations of secrets.lua then config.lua, as loadConfig runs them. */
async function both(secrets: string, config: string) {
  const literal = new LiteralConfig();
  const lua = await ConfigLua.create();
  const viaLua = [
    lua.run(bytes(secrets), '=secrets.lua', { lenient: true, publishAsSecrets: true }),
    lua.run(bytes(config), '=config.lua', {}),
  ];
  const viaLiteral = [
    literal.run(bytes(secrets), '=secrets.lua', { lenient: true, publishAsSecrets: true }),
    literal.run(bytes(config), '=config.lua', {}),
  ];
  return { viaLua, viaLiteral };
}

test('random tables of literals: the value without Lua is the value Lua gives, key order and -0 included', async () => {
  for (let seed = 1; seed <= 300; seed++) {
    const g = generator(seed);
    const secrets = g.secrets();
    const config = g.config();
    const where = `seed ${seed}:\n${secrets}\n${config}`;
    const { viaLua, viaLiteral } = await both(secrets, config).catch((e) => assert.fail(`${where}\n${e}`));
    assert.ok(
      viaLua.every((o) => o.ok),
      `${where}\nLua failed: ${JSON.stringify(viaLua)}`,
    );
    assert.deepStrictEqual(viaLiteral, viaLua, where);
    assert.equal(JSON.stringify(viaLiteral), JSON.stringify(viaLua), `${where}\n(key order)`);
  }
});

test('what is not a table of literals is declined, never read another way', () => {
  const declined = [
    'return { a = x }',
    'return { a = f() }',
    'return { a = 1 + 2 }',
    'return { a = "x" .. "y" }',
    'return { a = 0x10 }',
    'return { a = 1e }',
    'return { a = 1..2 }',
    'return { a = - - 1 }',
    'return { 1, nil, 3 }',
    'return { clm.secrets.missing }',
    'return { [1] = "a" }',
    'return { [1.5] = "a" }',
    'return { "a", ["1"] = "b" }',
    'return { ["\\xff"] = 1 }',
    'return { end = 1 }',
    'return { a == 1 }',
    'return { a = clm.secrets }',
    'return { a = clm.secrets.x.y }',
    'return { a = clm.secrets[[x]] }',
    'return { a = clm.secrets[[[x]]] }',
    'return { ["k"] == 1 }',
    'return { a = clm.secrets.x() }',
    'return { a = clm.secrets.x "s" }',
    'return { a = clm.other }',
    'return { a = other.secrets.k }',
    'return { a = 1 b = 2 }',
    'return { a = [=x] }',
    'local a = 1 return { a = a }',
    'return {} return {}',
    'return "text"',
    'return',
    '',
    'return { a = "unfinished }',
    'return { a = 1 }\nprint("x")',
    `return ${'{ a = '.repeat(40)}1${' }'.repeat(40)}`,
  ];
  for (const src of declined) {
    assert.throws(() => new LiteralConfig().run(bytes(src), '=config.lua', {}), NotLiteral, src);
  }
  // A table under clm.secrets would nest below the config's own tables: left to Lua.
  assert.throws(() => new LiteralConfig().run(bytes('return { k = { "v" } }'), '=secrets.lua', { publishAsSecrets: true }), NotLiteral);
});

test('edge values: nil takes a key out, the last of two equal keys wins, -0 and 0, big integers', async () => {
  const cases = [
    'return { a = 1, a = nil }',
    'return { a = 1, ["a"] = 2 }',
    'return { a = -0, b = -0.0, c = 0.0, d = - 7, e = -1.5e3 }',
    'return { big = 9007199254740993, huge = 9223372036854775808, more = 1e400 }',
    'return { list = { "a", [[b]], 3, true }, empty = {}, ["__proto__"] = "kept" }',
    'return { s = "\\u{7FFFFFFF}\\u{D800}\\xff\\z\n   end", l = [==[\n]]\n]==] }',
  ];
  for (const config of cases) {
    const { viaLua, viaLiteral } = await both('return { openai = "sk" }', config);
    assert.deepStrictEqual(viaLiteral, viaLua, config);
    assert.equal(JSON.stringify(viaLiteral), JSON.stringify(viaLua), config);
  }
});

test('the files clm setup writes load without Lua, and as Lua loads them', async (t) => {
  const secrets = SECRETS_TEMPLATE.replace('groq = ""', 'groq = "gsk-literal-test"');
  const c = tempFor(t, { 'config.lua': TEMPLATE, 'secrets.lua': secrets });
  // Each file runs as one table of literals.
  const literal = new LiteralConfig();
  literal.run(bytes(secrets), '=secrets.lua', { lenient: true, publishAsSecrets: true });
  const top = literal.run(bytes(TEMPLATE), '=config.lua', {});
  assert.ok(top.ok);
  const lines: string[] = [];
  const viaLiteral = await loadConfig({ dir: c.dir, log: (l) => lines.push(l) });
  assert.ok(lines.includes('config: read without Lua (every file is a table of literals)'), lines.join('\n'));
  // A statement Lua must run sends the same files through the Lua state.
  c.write('config.lua', `local _ = 1\n${TEMPLATE}`);
  lines.length = 0;
  const viaLua = await loadConfig({ dir: c.dir, log: (l) => lines.push(l) });
  assert.ok(!lines.some((l) => l.includes('without Lua')), lines.join('\n'));
  assert.ok(viaLiteral && viaLua);
  assert.deepStrictEqual({ ...viaLiteral }, { ...viaLua });
  assert.equal(viaLiteral.providers?.groq?.apiKey, 'gsk-literal-test');
});
