// Stand-ins for the secret values, so an evaluated configuration can be kept without them.
//
// Every non-empty string in clm.secrets gets a unique sentinel string (empty ones stay "");
// config.lua evaluated against those holds sentinels wherever it used a secret, also inside
// concatenations, and substituting the real values gives the real configuration. Numbers and
// booleans stay as they are: nothing masks them, so they are part of the secrets' shape.

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

const OPEN = '\u{E000}clm-secret:';
const CLOSE = '\u{E001}';

/**
 * The shape of clm.secrets: its keys and lists, "" for an empty string and "s" for any other,
 * numbers and booleans as they are. Two tables of the same shape give the same sentinel table.
 */
export function secretsShape(v: unknown): unknown {
  if (typeof v === 'string') return v === '' ? '' : 's';
  if (Array.isArray(v)) return v.map(secretsShape);
  if (isTable(v)) return Object.entries(v).map(([k, x]) => [k, secretsShape(x)]);
  return v;
}

export function makeSentinels(secrets: unknown, nonce: string): Sentinels {
  const marker = `${OPEN}${nonce}:`;
  const paths: SecretPath[] = [];
  const walk = (v: unknown, path: SecretPath): unknown => {
    if (typeof v === 'string') {
      if (v === '') return '';
      paths.push(path);
      return `${marker}${paths.length - 1}${CLOSE}`;
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
