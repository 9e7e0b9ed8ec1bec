// Stand-ins for the secret values, so an evaluated configuration can be kept without them.
//
// Every non-empty string in clm.secrets gets a unique sentinel string (empty ones stay "");
// config.lua evaluated against those holds sentinels wherever it used a secret, also inside
// concatenations, and substituting the real values gives the real configuration. Numbers and
// booleans stay as they are: nothing masks them, so they are part of the secrets' shape.
//
// What Lua does to a string without calling a function cannot be watched (lua-state.ts
// watches the library calls): `#`, `==`, `<` and `<=`, and the coercion of a numeral in
// arithmetic, a `for` loop or a C function's integer argument. So the shape holds each string's
// length in bytes and which strings equal which; a secret that reads as a number is not stood
// in for at all (uncacheableSecret); and a configuration is evaluated with two sets of
// sentinels, one sorting above every string of text and one below, numbered in opposite
// orders, so that an order between a secret and a constant, or between two secrets, differs
// between the two.

import { childPath } from './key-path.js';
import { isTable } from './validate.js';

/** Where a secret sits in clm.secrets: object keys and 0-based list positions. */
export type SecretPath = (string | number)[];

export interface Sentinels {
  /** Text every sentinel starts with (unique to one evaluation). */
  marker: string;
  /** The secret paths, in the order of their sentinel numbers. */
  paths: SecretPath[];
  /** clm.secrets with sentinels in place of the non-empty strings. */
  table: unknown;
}

/**
 * How the sentinels sort (Lua compares bytes): "high" above every string of UTF-8 text (U+10FFFF
 * is F4 8F BF BF, the largest UTF-8 sequence), numbered in the order the secrets come; "low"
 * below every string that does not start with byte 0 or 1, numbered the other way. Both have
 * the same byte length.
 */
export type SentinelOrder = 'high' | 'low';
const OPEN: Record<SentinelOrder, string> = { high: '\u{10FFFF}clm-secret:', low: '\u0001\u0001\u0001\u0001clm-secret:' };
const CLOSE = '\u{E001}';

const utf8Length = (s: string) => new TextEncoder().encode(s).length;

/**
 * The shape of clm.secrets: its keys and lists; "" for an empty string; for any other string
 * ["s", its length in bytes, which of the distinct strings it is, numbered as they first come];
 * numbers and booleans as they are. Two tables of the same shape give the same sentinel tables,
 * and the same result for `#`, `==` and `~=` on the secrets. It holds no string, nor anything
 * computed from one but its length and which others it equals.
 */
export function secretsShape(secrets: unknown): unknown {
  const first = new Map<string, number>();
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (v === '') return '';
      if (!first.has(v)) first.set(v, first.size);
      return ['s', utf8Length(v), first.get(v)];
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isTable(v)) return Object.entries(v).map(([k, x]) => [k, walk(x)]);
    return v;
  };
  return walk(secrets);
}

/** Sentinels for clm.secrets, sorting as `order` says; `nonce` makes them unique to one evaluation. */
export function makeSentinels(secrets: unknown, nonce: string, order: SentinelOrder = 'high'): Sentinels {
  const marker = `${OPEN[order]}${nonce}:`;
  let count = 0;
  const countStrings = (v: unknown): void => {
    if (typeof v === 'string') count += v === '' ? 0 : 1;
    else if (Array.isArray(v)) v.forEach(countStrings);
    else if (isTable(v)) Object.values(v).forEach(countStrings);
  };
  countStrings(secrets);
  // Numbers of one width: the sentinels sort in the order of their numbers.
  const width = String(Math.max(count - 1, 0)).length;
  const paths: SecretPath[] = [];
  let seen = 0;
  const walk = (v: unknown, path: SecretPath): unknown => {
    if (typeof v === 'string') {
      if (v === '') return '';
      const n = order === 'high' ? seen : count - 1 - seen;
      seen++;
      paths[n] = path;
      return `${marker}${String(n).padStart(width, '0')}${CLOSE}`;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (isTable(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v))
        Object.defineProperty(out, k, { value: walk(x, [...path, k]), enumerable: true, writable: true, configurable: true });
      return out;
    }
    return v;
  };
  return { marker, paths, table: walk(secrets, []) };
}

const LUA_SPACE = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;
const LUA_INTEGER = /^[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+)$/;
const LUA_FLOAT =
  /^[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][-+]?[0-9]+)?)$/;

/**
 * Whether Lua converts the string to a number (tonumber, arithmetic, a `for` limit, an integer
 * argument): a decimal or hexadecimal integer or float, with spaces around it; never inf or nan,
 * nor a string with a zero byte.
 */
export function readsAsNumber(s: string): boolean {
  if (s.includes('\0')) return false;
  const t = s.replace(LUA_SPACE, '');
  return LUA_INTEGER.test(t) || LUA_FLOAT.test(t);
}

/**
 * Why a secret cannot be stood in for, naming it (`clm.secrets.pin reads as a number`), or null:
 * a numeral (Lua coerces it without a library call, and a sentinel is never one), or a string
 * holding U+FFFD: bytes that are not UTF-8 decode to it, so the text does not tell the bytes,
 * nor their length, nor which other secrets they equal.
 */
export function uncacheableSecret(secrets: unknown): string | null {
  const walk = (v: unknown, at: string): string | null => {
    if (typeof v === 'string') {
      if (readsAsNumber(v)) return `${at} reads as a number`;
      if (v.includes('\u{FFFD}')) return `${at} holds U+FFFD (or bytes that are not UTF-8)`;
      return null;
    }
    const entries: [string, unknown][] = Array.isArray(v)
      ? v.map((x, i) => [childPath(at, i + 1), x])
      : isTable(v)
        ? Object.entries(v).map(([k, x]) => [childPath(at, k), x])
        : [];
    for (const [path, x] of entries) {
      const why = walk(x, path);
      if (why) return why;
    }
    return null;
  };
  return walk(secrets, 'clm.secrets');
}

/** The value at a secret path, or undefined. */
export function secretAt(secrets: unknown, path: SecretPath): unknown {
  let v = secrets;
  for (const k of path) {
    if (typeof k === 'number' ? !Array.isArray(v) : !isTable(v) || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

/** Replace every sentinel of `marker` in strings and keys by values[i]; a sentinel without a value stays. */
export function substitute(v: unknown, marker: string, values: readonly string[]): unknown {
  const re = new RegExp(`${marker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\d+)${CLOSE}`, 'gu');
  const text = (s: string) => (s.includes(marker) ? s.replace(re, (m, i: string) => values[Number(i)] ?? m) : s);
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') return text(x);
    if (Array.isArray(x)) return x.map(walk);
    if (isTable(x)) {
      const out: Record<string, unknown> = {};
      for (const [k, y] of Object.entries(x))
        Object.defineProperty(out, text(k), { value: walk(y), enumerable: true, writable: true, configurable: true });
      return out;
    }
    return x;
  };
  return walk(v);
}

/** Lua source of a string: printable ASCII as is, every other byte as a decimal escape. */
function luaString(s: string): string {
  let out = '"';
  for (const b of new TextEncoder().encode(s)) {
    out += b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, '0')}`;
  }
  return `${out}"`;
}

function luaNumber(n: number): string {
  if (Number.isNaN(n)) return '(0/0)';
  if (n === Infinity) return '(1/0)';
  if (n === -Infinity) return '(-1/0)';
  if (Object.is(n, -0)) return '(-0.0)';
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  return String(n);
}

/** A Lua chunk returning `v` (plain data: strings, numbers, booleans, lists, maps). */
export function luaLiteral(v: unknown): string {
  const value = (x: unknown): string => {
    if (typeof x === 'string') return luaString(x);
    if (typeof x === 'number') return luaNumber(x);
    if (typeof x === 'boolean') return String(x);
    if (Array.isArray(x)) return `{${x.map(value).join(',')}}`;
    if (isTable(x))
      return `{${Object.entries(x)
        .map(([k, y]) => `[${luaString(k)}]=${value(y)}`)
        .join(',')}}`;
    return 'nil';
  };
  return `return ${value(v)}\n`;
}

/** Secrets shorter than this are looked for as whole strings only: as parts of words they occur by chance. */
const MIN_SCANNED = 6;

/**
 * Whether JSON text holds one of the strings: as a whole string (a value or a key), or, for any
 * but the shortest, anywhere inside one, as is or as JSON escapes it.
 */
export function containsAny(json: string, strings: Iterable<string>): boolean {
  for (const s of strings) {
    if (!s) continue;
    const quoted = JSON.stringify(s);
    if (json.includes(quoted)) return true;
    if (s.length >= MIN_SCANNED && (json.includes(s) || json.includes(quoted.slice(1, -1)))) return true;
  }
  return false;
}
