// What a rule's pattern matches.
//
// - Text (a shell command's part, any other tool's arguments): `*` any characters (spaces and `/`
//   too), `?` one, `\` makes the next one literal; a pattern ending in ` *` also matches without
//   the space, so `npm test *` matches `npm test` and `npm test -- -u`, not `npm tests`.
// - Paths (read_file, write_file, list_dir, edit_file, and what a shell redirection writes):
//   `*` and `?` within one path segment, `**` any number of segments; a relative pattern is
//   matched against the path relative to the directory clm runs in, one starting with `/` or
//   `~/` against the absolute path. Paths are compared resolved (`.`, `..` and symbolic links
//   of the part that exists), so `src/../../etc/passwd` is not under `src/**`.

import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

const cache = new Map<string, RegExp>();
const esc = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function textRegExp(pattern: string): RegExp {
  const key = `t${pattern}`;
  let re = cache.get(key);
  if (re) return re;
  let p = pattern;
  let tail = '';
  if (p.endsWith(' *') && !p.endsWith('\\ *')) {
    p = p.slice(0, -2);
    tail = '(?: [\\s\\S]*)?';
  }
  let src = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\' && i + 1 < p.length) src += esc(p[++i]!);
    else if (c === '*') src += '[\\s\\S]*';
    else if (c === '?') src += '[\\s\\S]';
    else src += esc(c);
  }
  re = new RegExp(`^${src}${tail}$`);
  cache.set(key, re);
  return re;
}

export function textMatches(pattern: string, text: string): boolean {
  return textRegExp(pattern).test(text);
}

function pathRegExp(pattern: string): RegExp {
  const key = `p${pattern}`;
  let re = cache.get(key);
  if (re) return re;
  let src = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) src += esc(pattern[++i]!);
    else if (c === '*' && pattern[i + 1] === '*') {
      i++;
      if (pattern[i + 1] === '/') {
        i++;
        src += '(?:[^/]*/)*';
      } else src += '.*';
    } else if (c === '*') src += '[^/]*';
    else if (c === '?') src += '[^/]';
    else src += esc(c);
  }
  re = new RegExp(`^${src}$`, 's');
  cache.set(key, re);
  return re;
}

/** `p` resolved against `cwd`, with the symbolic links of its longest existing part resolved. */
export function realPath(p: string, cwd: string): string {
  let abs = resolve(cwd, p);
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(abs);
      return rest.length ? join(real, ...rest.reverse()) : real;
    } catch {
      const up = dirname(abs);
      if (up === abs) return resolve(cwd, p);
      rest.push(abs.slice(up.length + (up.endsWith(sep) ? 0 : 1)));
      abs = up;
    }
  }
}

export interface PathContext {
  /** The directory clm runs in, resolved. */
  cwd: string;
  home: string | undefined;
}

/** Whether the path pattern matches `path` (as a tool or a redirection names it). */
export function pathMatches(pattern: string, path: string, ctx: PathContext): boolean {
  const abs = realPath(expandHome(path, ctx.home), ctx.cwd);
  let pat = expandHome(pattern, ctx.home);
  if (isAbsolute(pat)) {
    // The pattern's own literal directories resolved too (a /tmp that is a link).
    const lit = pat.split('/');
    const firstWild = lit.findIndex((s) => /[*?\\]/.test(s));
    if (firstWild > 1) {
      const dir = lit.slice(0, firstWild).join('/');
      pat = `${realPath(dir, '/')}/${lit.slice(firstWild).join('/')}`;
    } else if (firstWild < 0) pat = realPath(pat, '/');
    return pathRegExp(pat).test(abs);
  }
  const rel = relative(ctx.cwd, abs) || '.';
  return pathRegExp(pat.replace(/^\.\//, '')).test(rel);
}

function expandHome(p: string, home: string | undefined): string {
  if (!home) return p;
  if (p === '~') return home;
  if (p.startsWith('~/')) return join(home, p.slice(2));
  return p;
}
