// fnmatch(3) with flags 0, for volatile_tools patterns: `*` and `?` also match `/` and leading
// dots (path globbers such as picomatch do not), `[...]` classes with `!`/`^` negation.

const cache = new Map<string, RegExp>();
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** `[set]` (the first `]` after its first character closes it), `\c` (the character c itself), or any other character. */
const TOKEN = /\[([\s\S][^\]]*)\]|\\([\s\S])|[\s\S]/g;

function token(c: string, set: string | undefined, escaped: string | undefined): string {
  if (set !== undefined) {
    const neg = set[0] === '!' || set[0] === '^';
    return `[${neg ? '^' : ''}${(neg ? set.slice(1) : set).replace(/[\\\]^]/g, '\\$&')}]`;
  }
  if (escaped !== undefined) return literal(escaped);
  return c === '*' ? '[\\s\\S]*' : c === '?' ? '[\\s\\S]' : literal(c);
}

export function fnmatchToRegExp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    re = new RegExp(`^${pattern.replace(TOKEN, token)}$`);
    cache.set(pattern, re);
  }
  return re;
}

export function fnmatch(pattern: string, name: string): boolean {
  return fnmatchToRegExp(pattern).test(name);
}

export function matchesAny(patterns: readonly string[] | undefined, name: string): boolean {
  if (!patterns) return false;
  for (const p of patterns) if (fnmatch(p, name)) return true;
  return false;
}
