// Tool-call arguments as models write them, made into what the tool takes: JSON that is not
// valid (trailing commas, single quotes, unescaped newlines, a missing closing brace) repaired
// with jsonrepair, a JSON string holding the object unwrapped, values of the wrong type that
// say the right thing (`"5"` for an integer, `"true"` for a boolean, an object sent as a JSON
// string) converted as the tool's schema says, and an optional argument sent as null dropped.
// What still does not fit the schema gets a message naming the argument, which the model reads
// as the call's result and can correct.
//
// The schema is read for what models get wrong: `type` (one or a list), `required`,
// `properties`, `items`, `enum`, and `anyOf`/`oneOf` as alternatives. Anything else a schema
// says is left to the tool.

import { jsonrepair } from 'jsonrepair';

type Schema = Record<string, unknown>;

/** `text` as JSON; `repaired` when it took jsonrepair. Undefined when not even that makes it JSON. */
export function parseLoose(text: string): { value: unknown; repaired: boolean } | undefined {
  try {
    return { value: JSON.parse(text), repaired: false };
  } catch {
    try {
      return { value: JSON.parse(jsonrepair(text)), repaired: true };
    } catch {
      return undefined;
    }
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON type names `v` has (an integer is also a number). */
function typesOf(v: unknown): string[] {
  if (v === null) return ['null'];
  if (Array.isArray(v)) return ['array'];
  if (typeof v === 'number') return Number.isInteger(v) ? ['integer', 'number'] : ['number'];
  return [typeof v];
}

function expected(s: Schema): string[] | null {
  const t = s.type;
  if (typeof t === 'string') return [t];
  if (Array.isArray(t) && t.every((x) => typeof x === 'string')) return t as string[];
  return null;
}

const NUMBER = /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/;

/** The string `v` as one of `want`, when it says such a value; undefined otherwise. */
function fromString(v: string, want: string[]): unknown {
  if ((want.includes('integer') || want.includes('number')) && NUMBER.test(v)) {
    const n = Number(v);
    if (want.includes('number') || Number.isInteger(n)) return n;
  }
  if (want.includes('boolean') && /^\s*(true|false)\s*$/i.test(v)) return v.trim().toLowerCase() === 'true';
  if ((want.includes('object') || want.includes('array')) && /^\s*[[{]/.test(v)) {
    const p = parseLoose(v);
    if (p && want.some((w) => typesOf(p.value).includes(w))) return p.value;
  }
  return undefined;
}

/** `v` converted to one of `want` when it says that value in another type; `v` itself otherwise. */
function convert(v: unknown, want: string[]): unknown {
  if (typeof v === 'string') return fromString(v, want) ?? v;
  if (want.includes('string') && (typeof v === 'number' || typeof v === 'boolean')) return String(v);
  return v;
}

/** An optional argument sent as null means "not given", unless null is one of its types. */
const dropped = (x: unknown, k: string, required: unknown[], ps: unknown) =>
  x === null && !required.includes(k) && isObject(ps) && !(expected(ps) ?? ['null']).includes('null');

/** The object `v`'s properties conformed to `schema.properties` (a new object). */
function conformProperties(v: Record<string, unknown>, schema: Schema, props: Schema): Record<string, unknown> {
  const required = Array.isArray(schema.required) ? schema.required : [];
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const ps = Object.hasOwn(props, k) ? props[k] : undefined;
    if (!dropped(x, k, required, ps)) out[k] = conform(x, ps);
  }
  return out;
}

/** `v` with what the schema's types say converted, recursively (a new value; `v` is not changed). */
export function conform(v: unknown, schema: unknown): unknown {
  if (!isObject(schema)) return v;
  const want = expected(schema);
  if (want && !want.some((w) => typesOf(v).includes(w))) v = convert(v, want);
  if (isObject(v) && isObject(schema.properties)) return conformProperties(v, schema, schema.properties);
  if (Array.isArray(v) && isObject(schema.items)) return v.map((x) => conform(x, schema.items));
  return v;
}

/** Why `v` is not of the schema's own kind (alternatives, type, enum), or null. */
function ownMisfit(v: unknown, schema: Schema, path: string, at: string): string | null {
  const alternatives = (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null) as unknown[] | null;
  if (alternatives?.length && alternatives.every((s) => misfit(v, s, path) !== null))
    return `${at} fits none of its allowed forms, got ${describe(v)}`;
  const want = expected(schema);
  if (want && !want.some((w) => typesOf(v).includes(w))) return `${at} must be ${want.map(article).join(' or ')}, got ${describe(v)}`;
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    return `${at} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}, got ${describe(v)}`;
  return null;
}

/** Why the object `v` lacks a required property or holds one that does not fit, or null. */
function propertiesMisfit(v: Record<string, unknown>, schema: Schema, path: string): string | null {
  const props = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const missing = required.find((k): k is string => typeof k === 'string' && !Object.hasOwn(v, k));
  if (missing !== undefined) {
    const t = isObject(props[missing]) ? expected(props[missing] as Schema) : null;
    return `argument '${child(path, missing)}' is required${t ? ` (${t.join(' or ')})` : ''}`;
  }
  for (const [k, x] of Object.entries(v)) {
    const m = Object.hasOwn(props, k) ? misfit(x, props[k], child(path, k)) : null;
    if (m) return m;
  }
  return null;
}

/** Why `v` does not fit `schema` (`path` is where it is: '' for the arguments, `a.b[0]` inside them), or null. */
function misfit(v: unknown, schema: unknown, path: string): string | null {
  if (!isObject(schema)) return null;
  const own = ownMisfit(v, schema, path, path ? `argument '${path}'` : 'the arguments');
  if (own) return own;
  if (isObject(v)) return propertiesMisfit(v, schema, path);
  if (Array.isArray(v) && isObject(schema.items)) {
    for (let i = 0; i < v.length; i++) {
      const m = misfit(v[i], schema.items, `${path}[${i}]`);
      if (m) return m;
    }
  }
  return null;
}

const child = (path: string, k: string) => (path ? `${path}.${k}` : k);
const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);

function describe(v: unknown): string {
  const t = typesOf(v)[0]!;
  const shown = JSON.stringify(v) ?? String(v);
  return t === 'null' ? 'null' : `${article(t)} (${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown})`;
}

/**
 * Why arguments (JSON text) do not fit a tool's parameters schema — a message naming the
 * argument, for the model — or null when they do.
 */
export function argumentsMisfit(args: string, parameters: Record<string, unknown>): string | null {
  let v: unknown;
  try {
    v = JSON.parse(args || '{}');
  } catch (e) {
    return `the arguments are not valid JSON (${e instanceof Error ? e.message : String(e)}); send a JSON object`;
  }
  if (!isObject(v)) return `the arguments must be a JSON object, got ${describe(v)}`;
  return misfit(v, parameters, '');
}

/**
 * Arguments (JSON text, or a value already parsed) as the tool takes them: repaired, unwrapped,
 * conformed to `parameters`. `changed` when the text is not what came; undefined when nothing
 * makes it JSON (the call then fails with argumentsMisfit's message).
 */
export function repairArguments(args: unknown, parameters: unknown): { json: string; changed: boolean } | undefined {
  let v = args;
  let changed = false;
  if (typeof args === 'string') {
    if (args.trim() === '') return { json: '{}', changed: false };
    const p = parseLoose(args);
    if (!p) return undefined;
    v = p.value;
    changed = p.repaired;
  }
  // A JSON string holding the arguments object.
  if (typeof v === 'string' && /^\s*\{/.test(v)) {
    const inner = parseLoose(v);
    if (inner && isObject(inner.value)) {
      v = inner.value;
      changed = true;
    }
  }
  const json = JSON.stringify(conform(v, parameters));
  if (json !== JSON.stringify(v)) changed = true;
  // Valid arguments that needed nothing keep their bytes.
  if (!changed && typeof args === 'string') return { json: args, changed: false };
  return { json, changed };
}
