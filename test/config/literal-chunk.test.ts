// readLiteralChunk against Lua itself: every source it accepts must give exactly what the real
// config Lua state gives for the same bytes (evaluated as secrets.lua is, converted leniently);
// what it does not fully understand it declines, including everything Lua rejects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigLua } from '../../src/config/lua-state.js';
import { readLiteralChunk } from '../../src/config/literal-chunk.js';
import { SECRETS_TEMPLATE } from '../../src/config/templates.js';
import { check, fc } from '../fixtures/fuzz.js';

const lua = await ConfigLua.create();
const bytes = (s: string | Uint8Array) => (typeof s === 'string' ? new TextEncoder().encode(s) : s);
/** Raw bytes from a latin1 string (for invalid UTF-8 and lone bytes in sources). */
const raw = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

function viaLua(src: Uint8Array): { ok: true; value: unknown; luaType: string } | { ok: false; message: string } {
  try {
    const r = lua.run(src, '=secrets.lua', { lenient: true });
    return r.ok ? { ok: true, value: r.value, luaType: r.luaType } : r;
  } catch (e) {
    return { ok: false, message: String(e) };
  }
}

/** Accepted and equal to Lua, or declined; returns whether it was accepted. */
function agrees(src: Uint8Array, label = new TextDecoder().decode(src)): boolean {
  const mine = readLiteralChunk(src);
  if (!mine) return false;
  const theirs = viaLua(src);
  assert.ok(theirs.ok, `accepted what Lua rejects: ${label}\n${!theirs.ok ? theirs.message : ''}`);
  assert.equal(theirs.luaType, 'table', label);
  assert.deepStrictEqual(mine.value, theirs.value, label);
  return true;
}

const accepted: (string | Uint8Array)[] = [
  SECRETS_TEMPLATE,
  SECRETS_TEMPLATE.replace('groq = "",', 'groq = "gsk_0123456789abcdef",').replace('-- tavily = "tvly-...",', 'tavily = [[tvly-x]],'),
  'return {}',
  'return{};',
  'return {} -- done\n',
  '\n\t\f\v\r return { } --[==[ long\ncomment ]] ]=] ]==] ;--x',
  'return { k = "v", ["k2"] = \'v2\', [ "k 3" ] = "v3", _x9 = "y" }',
  'return { a = 1, b = 2.5, c = -3, d = -0, e = -0.0, f = 1e3, g = 1E-2, h = .5, i = 5., j = 00012, k = -.25, l = 5.e3 }',
  'return { big = 9223372036854775807, bigger = 9223372036854775808, neg = -9223372036854775807, negbig = -9223372036854775808 }',
  'return { inf = 1e400, tiny = 5e-324, round = 9007199254740993, frac = 0.1 }',
  'return { t = true, f = false, n = nil, l = { true, false, nil } }',
  'return { nested = { deeper = { deepest = "x", list = { "a", "b" } } } }',
  'return { "a", "b", "c" }',
  'return { "a", nil, "c" }',
  'return { "a", nil }',
  'return { [1] = "a", [2] = "b" }',
  'return { [2] = "b", [1] = "a" }',
  'return { [1] = "a", [3] = "c" }',
  'return { [0] = "zero", [-1] = "minus", [ - 2 ] = "m2", [1] = "one" }',
  'return { "x", k = "v" }',
  'return { 1, 2; 3; }',
  // short-string escapes
  'return { s = "\\a\\b\\f\\n\\r\\t\\v\\\\\\"\\\'" }',
  "return { s = 'it\\'s \"quoted\"' }",
  'return { s = "\\65\\066\\0677\\0\\255\\1234" }',
  'return { s = "\\x41\\x7a\\x7A\\xff\\x00" }',
  'return { s = "a\\z   \n\t  b\\z", t = "c\\z" }',
  'return { s = "\\u{48}\\u{20AC}\\u{10FFFF}\\u{0000041}\\u{7FFFFFFF}\\u{D800}\\u{110000}" }',
  'return { s = "line\\\nnext\\\r\nthird\\\n\rfourth\\\rfifth" }',
  'return { s = "\\xEF\\xBB\\xBFbom", t = "\\xC3", u = "\\xC3\\xA9" }',
  'return { ["\\xEF\\xBB\\xBFk"] = 1 }',
  'return { s = "ü€😀", ["schlüssel"] = "wert" }',
  raw('return { s = "\x00\x01\x7f\xff\xfe raw" }'),
  raw('return { s = [[\xc3\x28]] }'),
  // long strings and their newlines
  'return { a = [[x]], b = [==[a]]b]=]c]==], c = [=[]]]=], d = [[]] }',
  'return { a = [[\nx]], b = [[\r\nx]], c = [[\n\rx]], d = [[\rx]], e = [[\n\nx]], f = [[\r\rx]] }',
  'return { a = [[a\r\nb\n\rc\rd\ne\n\nf]] }',
  'return { a = [==[\n]=]]==] }',
  // comments everywhere
  'return --[[ a ]] { --[=[ b ]=] k --x\n = --[[c]] "v" --[==[d]==] , -- e\n }',
  'return { k = "v" } --[= not a long comment\n',
  'return { k = "v" } --[',
  'return { k = - --[[ x ]] 5 }',
  // names that are keywords only in part
  'return { returns = 1, ["end"] = 2, nil_ = 3, True = 4, _ = 5 }',
  // nesting within the limits
  `return ${'{'.repeat(31)}"deep"${'}'.repeat(31)}`,
  `return { ${'1, '.repeat(49)}{ ${'2, '.repeat(49)}{ ${'3, '.repeat(49)}"x" } } }`,
  `return { ${Array.from({ length: 120 }, (_, i) => `"v${i}"`).join(', ')} }`,
];

test('the literal reader gives exactly what Lua gives for literal tables', () => {
  for (const src of accepted) {
    const b = bytes(src);
    assert.ok(agrees(b), `declined: ${new TextDecoder().decode(b)}`);
  }
});

// Lua accepts these, the reader declines them (they are not plain literal tables, or not worth
// modelling): the loader then evaluates secrets.lua in Lua.
const declinedButLua: string[] = [
  'return { k = x }',
  'return { k == 1 }',
  'local t = { k = "v" } return t',
  'return { k = "a" .. "b" }',
  'return { k = 0x10 }',
  'return { k = 0x1p4 }',
  'return { k = - -1 }',
  'return { k = -"1" }',
  'return { [1.5] = "f" }',
  'return { [1.0] = "f" }',
  'return { [true] = "b" }',
  'return { [{}] = "t" }',
  'return { [9007199254740993] = "big" }',
  'return { a = 1, a = 2 }',
  'return { a = nil, a = 1 }',
  'return { [1] = "x", "y" }',
  'return { [1] = "a", ["1"] = "b" }',
  'return { ["\\xff"] = 1, ["\\xfe"] = 2 }',
  'return {}, 1',
  'return ({})',
  'return { f = function() end }',
  'return "x"',
  'return',
  '-- nothing',
  '',
  '; return {}',
  'return { k = "v" };;',
  `return ${'{'.repeat(40)}${'}'.repeat(40)}`,
  `return { ${'1, '.repeat(49)}{ ${'2, '.repeat(49)}{ ${'3, '.repeat(49)}{ ${'4, '.repeat(49)}"x" } } } }`,
  `return { k = "${'x'.repeat(300 * 1024)}" }`,
  // 4 and 5 levels of 49 list items: within Lua's registers, beyond the reader's cautious estimate
  `return { ${'1, '.repeat(49)}{ ${'2, '.repeat(49)}{ ${'3, '.repeat(49)}{ ${'4, '.repeat(49)}{ ${'5, '.repeat(49)}"x" } } } } }`,
];

// Lua rejects these; so does the reader (secrets.lua then gets its warning from Lua).
const rejectedByLua: (string | Uint8Array)[] = [
  'return { k = "unfinished }',
  'return { k = "line\nbreak" }',
  'return { k = "a\\qb" }',
  'return { "\\300" }',
  'return { "\\xZZ" }',
  'return { "\\x4" }',
  'return { "\\u{80000000}" }',
  'return { "\\u{}" }',
  'return { "\\u48" }',
  'return { "\\u{48" }',
  'return { [[unclosed }',
  'return { k = 1 } x',
  'return { k = 3x }',
  'return { k = 1e }',
  'return { k = 1.2.3 }',
  'return { [=x] = 1 }',
  'return { end = 1 }',
  'return { true = 1 }',
  'return { "a" "b" }',
  'return { k = 1 }}',
  'return { k = 1 ',
  'return { , }',
  'return { [nil] = 1 }',
  '--[[ unclosed comment',
  'return { k = 1 } --[[ unclosed',
  raw('\x1bLua'),
  raw('return { k\xff = 1 }'),
  // 6 levels of 49 list items: more than Lua's 255 registers
  `return ${'{ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, '.repeat(6)}"x"${' }'.repeat(6)}`,
];

test('what the reader does not fully understand it declines; what Lua rejects it never accepts', () => {
  for (const src of declinedButLua) {
    assert.equal(readLiteralChunk(bytes(src)), null, `accepted: ${src.slice(0, 200)}`);
  }
  for (const src of rejectedByLua) {
    const b = bytes(src);
    const label = new TextDecoder().decode(b).slice(0, 200);
    assert.equal(viaLua(b).ok, false, `Lua accepts: ${label}`);
    assert.equal(readLiteralChunk(b), null, `accepted: ${label}`);
  }
});

// ---- generated literals -------------------------------------------------------------------

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

type Gen =
  | { kind: 'str'; b: Uint8Array; style: number }
  | { kind: 'num'; v: number; neg: boolean }
  | { kind: 'bool'; v: boolean }
  | { kind: 'nil' }
  | { kind: 'table'; fields: { key: Gen | string | null; v: Gen }[] };

const genValue: fc.Memo<Gen> = fc.memo((n) =>
  fc.oneof(
    { depthSize: 'small' },
    fc.record({ kind: fc.constant('str' as const), b: fc.uint8Array({ maxLength: 12 }), style: fc.nat(9) }),
    fc.record({
      kind: fc.constant('num' as const),
      v: fc.oneof(fc.nat(1000), fc.double({ min: 0, noNaN: true }), fc.constantFrom(0, 2 ** 53, 2 ** 63, 1e300)),
      neg: fc.boolean(),
    }),
    fc.record({ kind: fc.constant('bool' as const), v: fc.boolean() }),
    fc.constant<Gen>({ kind: 'nil' }),
    n > 1
      ? fc.record({
          kind: fc.constant('table' as const),
          fields: fc.array(
            fc.record({
              key: fc.oneof(fc.constant(null), fc.constantFrom('a', 'b', 'key_1', '_'), genValue(n - 1)),
              v: genValue(n - 1),
            }),
            { maxLength: 6 },
          ),
        })
      : fc.constant<Gen>({ kind: 'table', fields: [] }),
  ),
);

const junk = fc.constantFrom(' ', '\n', '\t', '--c\n', '--[[x]]', '--[==[\n]]\n]==]', '\r\n', '');

function render(g: Gen, pad: () => string): string {
  switch (g.kind) {
    case 'str':
      return stringLiteral(g.b, g.style);
    case 'num': {
      const t = Number.isInteger(g.v) && g.v < 2 ** 63 ? BigInt(g.v).toString() : String(g.v).replace('+', '');
      return g.neg ? `-${pad()}${t}` : t;
    }
    case 'bool':
      return String(g.v);
    case 'nil':
      return 'nil';
    case 'table':
      return `{${pad()}${g.fields
        .map((f) => {
          const v = render(f.v, pad);
          if (f.key === null) return v;
          if (typeof f.key === 'string') return `${f.key}${pad()}=${pad()}${v}`;
          return `[${pad()}${render(f.key, pad)}${pad()}]${pad()}=${pad()}${v}`;
        })
        .join(`${pad()},${pad()}`)}${pad()}}`;
  }
}

test('generated literal tables: accepted ones equal Lua exactly', () => {
  let accepted = 0;
  let runs = 0;
  check(400, fc.tuple(genValue(4), fc.array(junk, { minLength: 64, maxLength: 64 })), ([g, pads]) => {
    runs++;
    let i = 0;
    const pad = () => pads[i++ % pads.length]!;
    const top: Gen = g.kind === 'table' ? g : { kind: 'table', fields: [{ key: 'x', v: g }] };
    const src = raw(`${pad()}return${pad()} ${render(top, pad)}${pad()}`);
    if (agrees(src)) accepted++;
    return true;
  });
  // Duplicate and odd keys decline; most generated tables must still be read.
  assert.ok(accepted > runs / 3, `only ${accepted} of ${runs} generated literals were accepted`);
});

test('mutated literals: the reader never accepts what Lua rejects or reads differently', () => {
  const base = raw('return { a = "x\\65", ["b"] = [[y]], 1, -2.5, { true, nil } } -- c');
  check(600, fc.array(fc.tuple(fc.nat(base.length), fc.nat(255), fc.nat(2)), { minLength: 1, maxLength: 4 }), (edits) => {
    const b = [...base];
    for (const [at, byte, op] of edits) {
      const p = at % (b.length + 1);
      if (op === 0) b.splice(p, 0, byte);
      else if (op === 1) b.splice(p, 1);
      else b[p] = byte;
    }
    agrees(Uint8Array.from(b), JSON.stringify(String.fromCharCode(...b)));
    return true;
  });
});
