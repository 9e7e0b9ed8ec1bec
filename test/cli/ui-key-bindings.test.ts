// The interactive screen's key table (src/cli/ui/key-bindings.ts): how a row is chosen, and that
// docs/cli.md lists every key it binds. What each key then does on screen is driven through the
// pty suites (ui-screen, ui-queue-search, ui-permission, ui-original…).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { boundAction, KEY_BINDINGS, type KeyCondition } from '../../src/cli/ui/key-bindings.js';

const docs = readFileSync(join(import.meta.dirname, '../../docs/cli.md'), 'utf8');

/** A key id (`ctrl+c`, `alt+up`, `pagedown`) as docs/cli.md writes it (`Ctrl-C`, `Alt+Up`, `PgDn`). */
function docName(id: string): string {
  const NAMES: Record<string, string> = { escape: 'Esc', pageup: 'PgUp', pagedown: 'PgDn', tab: 'TAB' };
  const parts = id.split('+');
  const key = parts.pop()!;
  const name = NAMES[key] ?? (key.length === 1 ? key.toUpperCase() : key[0]!.toUpperCase() + key.slice(1));
  return parts.map((m) => (m === 'ctrl' ? 'Ctrl-' : `${m[0]!.toUpperCase()}${m.slice(1)}+`)).join('') + name;
}

/** The first cells of the rows of the **Keys.** table of the interactive UI. */
function documentedKeys(): string[] {
  const at = docs.indexOf('**Keys.**');
  assert.ok(at >= 0, 'docs/cli.md has no **Keys.** table');
  const rows = docs.slice(at).split('\n\n')[1]!.split('\n');
  return rows.filter((r) => r.startsWith('| ') && !r.startsWith('| key ')).map((r) => r.split('|')[1]!);
}

const mentions = (text: string, name: string) => new RegExp(`(^|[^\\w-])${name.replace('+', '\\+')}(?![\\w-])`).test(text);

test('docs/cli.md lists every key the screen binds', () => {
  const cells = documentedKeys();
  assert.ok(cells.length > 10, cells.join('\n'));
  const missing = KEY_BINDINGS.filter((b) => (b.mode ?? 'input') === 'input')
    .flatMap((b) => b.keys)
    .filter((id) => !cells.some((c) => mentions(c, docName(id))));
  assert.deepEqual([...new Set(missing)], []);
  // While a permission question shows, Ctrl-C denies it: said under the table.
  const perm = KEY_BINDINGS.filter((b) => b.mode === 'permission').flatMap((b) => b.keys);
  for (const id of perm) assert.match(docs, new RegExp(`${docName(id)} denies`), id);
});

test('the docs check reads key names as the docs write them', () => {
  assert.deepEqual(['ctrl+c', 'escape', 'alt+up', 'pagedown', 'tab', 'home'].map(docName), [
    'Ctrl-C',
    'Esc',
    'Alt+Up',
    'PgDn',
    'TAB',
    'Home',
  ]);
  assert.equal(mentions('| Ctrl-C, Ctrl-Y |', 'Ctrl-C'), true);
  assert.equal(mentions('| Ctrl-CA |', 'Ctrl-C'), false);
  assert.equal(mentions('| Shift+Enter |', 'Enter'), true);
});

test('a key takes the first row whose conditions hold; a key with none goes to the editor', () => {
  const when =
    (...held: KeyCondition[]) =>
    (c: KeyCondition) =>
      held.includes(c);
  assert.equal(boundAction('input', 'ctrl+c', when('busy', 'typed')), 'cancelTurnAndForever');
  assert.equal(boundAction('input', 'ctrl+c', when('typed')), 'clearInput');
  assert.equal(boundAction('input', 'ctrl+c', when('empty')), 'quit');
  assert.equal(boundAction('input', 'escape', when('busy')), 'cancelTurn');
  assert.equal(boundAction('input', 'escape', when('empty')), 'nothing');
  assert.equal(boundAction('input', 'ctrl+d', when('empty')), 'quit');
  assert.equal(boundAction('input', 'ctrl+d', when('typed')), null);
  assert.equal(boundAction('input', 'home', when('typed')), null);
  assert.equal(boundAction('input', 'alt+up', when('empty', 'queued')), 'takeBackQueued');
  assert.equal(boundAction('input', 'alt+up', when('empty')), 'nothing');
  assert.equal(boundAction('input', 'a', when('empty')), null);
  assert.equal(boundAction('permission', 'ctrl+c', when()), 'denyPermission');
  assert.equal(boundAction('permission', 'escape', when()), null);
  assert.equal(boundAction('question', 'escape', when()), 'cancelQuestion');
});
