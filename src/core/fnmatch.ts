// fnmatch(3) with flags 0, for volatile_tools patterns: `*` and `?` also match `/` and leading
// dots (path globbers such as picomatch do not), `[...]` classes with `!`/`^` negation.

const cache = new Map<string, RegExp>();
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

export function fnmatchToRegExp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re) return re;
  let src = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') src += '[\\s\\S]*';
    else if (c === '?') src += '[\\s\\S]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        src += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      let neg = false;
      if (body[0] === '!' || body[0] === '^') {
        neg = true;
        body = body.slice(1);
      }
      src += `[${neg ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = end;
    } else src += literal(c === '\\' && i + 1 < pattern.length ? pattern[++i]! : c);
  }
  re = new RegExp(src + '$');
  cache.set(pattern, re);
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
