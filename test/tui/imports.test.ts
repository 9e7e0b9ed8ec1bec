// The toolkit stands alone: nothing in src/tui imports the rest of src/ (that the one-shot paths
// of the CLI do not load it is test/cli/ui-imports.test.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const tui = join(root, 'src/tui');

test('src/tui imports nothing else of src/', () => {
  for (const f of readdirSync(tui).filter((n) => n.endsWith('.ts'))) {
    const text = readFileSync(join(tui, f), 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)'([^']+)'/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) assert.ok(spec.startsWith('./') && !spec.slice(2).includes('/'), `${f} imports ${spec}`);
    }
  }
});
