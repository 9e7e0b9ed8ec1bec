import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

// The one exception: terminal-text, the portable function that shows controls instead of letting
// them act, which the debug log applies to every line as the front ends do to what they print.
const SHARED_VALUES = new Set(['../core/terminal-text.js']);

test('src/host and src/builtin-tools import nothing from src/cli, and only types from src/core (but terminal-text)', () => {
  for (const dir of ['host', 'builtin-tools']) {
    for (const f of readdirSync(join(src, dir)).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(src, dir, f), 'utf8');
      for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gm)) {
        const [, , isType, spec] = m;
        assert.ok(!spec!.includes('/cli/'), `${dir}/${f} imports ${spec}`);
        if (spec!.includes('/core/')) assert.ok(isType || SHARED_VALUES.has(spec!), `${dir}/${f}: value import from ${spec}`);
      }
    }
  }
});
