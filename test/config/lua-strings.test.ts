// chunkStrings against Lua itself: the strings a chunk spells out, decoded exactly as the config
// Lua state decodes them (every escape, long brackets and their newlines, raw bytes), so that a
// secrets.lua warning quoting one of them is masked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigLua } from '../../src/config/lua-state.js';
import { chunkStrings } from '../../src/config/lua-strings.js';
import { SECRETS_TEMPLATE } from '../../src/config/templates.js';
import { check, fc } from '../fixtures/fuzz.js';

const lua = await ConfigLua.create();
const bytes = (s: string | Uint8Array) => (typeof s === 'string' ? new TextEncoder().encode(s) : s);
/** Raw bytes from a latin1 string (for invalid UTF-8 and lone bytes in sources). */
const raw = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** Every string in a converted Lua value: [values, keys]. */
function stringsIn(v: unknown, values = new Set<string>(), keys = new Set<string>()): [Set<string>, Set<string>] {
  if (typeof v === 'string') values.add(v);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (!Array.isArray(v)) keys.add(k);
      stringsIn(x, values, keys);
    }
  }
  return [values, keys];
}

/**
 * Every string value Lua reads from src is among chunkStrings, and every one of those is a value
 * or key Lua read. Returns false, checking nothing, for a source Lua rejects when that is allowed.
 */
function agrees(src: Uint8Array, label = new TextDecoder().decode(src).slice(0, 200), mayFail = false): boolean {
  const r = lua.run(src, '=secrets.lua', { lenient: true });
  if (!r.ok && mayFail) return false;
  assert.ok(r.ok, `Lua rejects: ${label}`);
  const mine = chunkStrings(src);
  assert.ok(mine, `not lexed: ${label}`);
  const [values, keys] = stringsIn(r.value);
  for (const v of values) assert.ok(mine.has(v), `${JSON.stringify(v)} missing: ${label}`);
  for (const s of mine) assert.ok(values.has(s) || keys.has(s), `${JSON.stringify(s)} is not what Lua read: ${label}`);
  return true;
}

const spelled: (string | Uint8Array)[] = [
  SECRETS_TEMPLATE.replace('groq = "",', 'groq = "gsk_0123456789abcdef",').replace('-- tavily = "tvly-...",', 'tavily = [[tvly-x]],'),
  'return { k = "v", ["k2"] = \'v2\', [ "k 3" ] = "v3", _x9 = "y", n = 1.5e3, m = 0x1F }',
  'return { s = "\\a\\b\\f\\n\\r\\t\\v\\\\\\"\\\'" }',
  "return { s = 'it\\'s \"quoted\"' }",
  'return { s = "\\65\\066\\0677\\0\\255\\1234" }',
  'return { s = "\\x41\\x7a\\x7A\\xff\\x00" }',
  'return { s = "a\\z   \n\t  b\\z", t = "c\\z" }',
  'return { s = "\\u{48}\\u{20AC}\\u{10FFFF}\\u{0000041}\\u{7FFFFFFF}\\u{D800}\\u{110000}" }',
  'return { s = "line\\\nnext\\\r\nthird\\\n\rfourth\\\rfifth" }',
  'return { s = "\\xEF\\xBB\\xBFbom", t = "\\xC3", u = "\\xC3\\xA9" }',
  'return { s = "ü€😀", ["schlüssel"] = "wert" }',
  raw('return { s = "\x00\x01\x7f\xff\xfe raw" }'),
  raw('return { s = [[\xc3\x28]] }'),
  'return { a = [[x]], b = [==[a]]b]=]c]==], c = [=[]]]=], d = [[]] }',
  'return { a = [[\nx]], b = [[\r\nx]], c = [[\n\rx]], d = [[\rx]], e = [[\n\nx]], f = [[\r\rx]] }',
  'return { a = [[a\r\nb\n\rc\rd\ne\n\nf]] }',
  'return --[[ "not" ]] { --[=[ "a" ]=] k --"x"\n = --[[c]] "v" --[==[d]==] , -- "e"\n }',
  "local n = 0x1p4 return { [ [[long key]] ] = n, ['k2'] = 5e-1 }",
];

test('chunkStrings: every string Lua reads, decoded as Lua decodes it, and nothing else', () => {
  for (const src of spelled) agrees(bytes(src));
});

test('chunkStrings: a source Lua cannot lex has no answer', () => {
  for (const src of [
    'return { k = "unfinished }',
    'return { k = "line\nbreak" }',
    'return { k = "a\\qb" }',
    'return { "\\300" }',
    'return { "\\xZZ" }',
    'return { "\\u{80000000}" }',
    'return { [[unclosed }',
    '--[[ unclosed comment',
  ]) {
    assert.equal(lua.run(bytes(src), '=secrets.lua', { lenient: true }).ok, false, `Lua accepts: ${src}`);
    assert.equal(chunkStrings(bytes(src)), null, src);
  }
});

/** A Lua string literal for bytes, in one of Lua's notations (each byte survives exactly). */
const stringLiteral = (b: Uint8Array, style: number): string => {
  const lat = (x: number) => String.fromCharCode(x);
  switch (style % 5) {
    case 0: // decimal escapes for everything
      return `"${[...b].map((x) => `\\${x}`).join('')}"`;
    case 1: // hex escapes
      return `'${[...b].map((x) => `\\x${x.toString(16).padStart(2, '0')}`).join('')}'`;
    case 2: // raw where printable, else escaped
      return `"${[...b].map((x) => (x >= 0x20 && x < 0x7f && x !== 0x22 && x !== 0x5c ? lat(x) : `\\${String(x).padStart(3, '0')}`)).join('')}"`;
    case 3: {
      // long bracket of a level that cannot clash (newlines and CRs change in long strings: escape-free bytes only)
      const s = [...b].map(lat).join('');
      if (/[\r\n]/.test(s)) return stringLiteral(b, 0);
      let level = 0;
      while (s.includes(`]${'='.repeat(level)}]`) || s.endsWith(`]${'='.repeat(level)}`)) level++;
      const eq = '='.repeat(level);
      return `[${eq}[${s}]${eq}]`;
    }
    default: // mixed: the named escapes, \z, raw bytes
      return `"${[...b].map((x) => (({ 10: '\\n', 9: '\\t', 13: '\\r', 92: '\\\\', 34: '\\"', 7: '\\a', 0: '\\z \\0' }) as Record<number, string>)[x] ?? (x >= 0x20 ? lat(x) : `\\${x}`)).join('')}"`;
  }
};

const junk = fc.constantFrom(' ', '\n', '\t', '--c\n', '--[[x]]', '--[==[\n"]]\n]==]', '\r\n', '');

test('generated strings in every notation: chunkStrings reads each as Lua does', () => {
  let runs = 0;
  let read = 0;
  check(
    400,
    fc.tuple(
      fc.array(fc.tuple(fc.uint8Array({ maxLength: 12 }), fc.nat(9)), { maxLength: 6 }),
      fc.array(junk, { minLength: 16, maxLength: 16 }),
    ),
    ([strs, pads]) => {
      let i = 0;
      const pad = () => pads[i++ % pads.length]!;
      const body = strs.map(([b, style]) => stringLiteral(b, style)).join(`${pad()},`);
      runs++;
      // A decimal escape next to a digit can read as one over 255: Lua rejects those.
      if (agrees(raw(`${pad()}local x = 0x1p4 ${pad()}return${pad()}{${pad()}${body}${pad()}}${pad()}`), undefined, true)) read++;
      return true;
    },
  );
  assert.ok(read > runs / 2, `Lua read only ${read} of ${runs} generated chunks`);
});
