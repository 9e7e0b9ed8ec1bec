// Prompt commands and file mentions in the interactive UI, on a pty: TAB completes a prompt
// command's name and an `@path` from the workspace, /help lists the prompt commands (and which a
// builtin hides), a workspace command named like a builtin never replaces it, and a mention shows
// in the transcript as typed while the request carries the file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KEYS, type PtyScreen } from '../fixtures/pty-screen.js';
import { uiSuite } from '../fixtures/ui-suite.js';
import { MENTIONS_MARKER } from '../../src/cli/file-mentions.js';

const ui = await uiSuite();

const inputLine = (s: PtyScreen) => s.screen().find((l) => l.startsWith('> ')) ?? '';
const lastUser = () => {
  const msgs = ui.mock.posts.at(-1)!.json.messages as { role: string; content: string }[];
  return msgs.filter((m) => m.role === 'user').at(-1)!.content;
};

function workspace(): string {
  const ws = join(ui.dirs.root, 'ws');
  mkdirSync(join(ws, 'src'), { recursive: true });
  mkdirSync(join(ws, '.clm/commands'), { recursive: true });
  writeFileSync(join(ws, 'src/main.ts'), 'console.log("MAIN-CONTENT");\n');
  writeFileSync(join(ws, '.clm/commands/review.md'), 'Please review $ARGUMENTS.\n');
  writeFileSync(join(ws, '.clm/commands/clear.md'), 'WORKSPACE-CLEAR\n');
  return ws;
}

test('TAB completes a prompt command; /help lists it and the one a builtin hides; that builtin still runs', async (t) => {
  const ws = workspace();
  const s = await ui.open(t, [], { cwd: ws });
  await s.waitFor('[online]');
  s.type(`/rev${KEYS.tab}`);
  await s.waitFor(() => inputLine(s) === '> /review', 'the name completed');
  s.type(`src/main.ts${KEYS.enter}`);
  await s.waitFor('Banana', 'the reply');
  assert.equal(lastUser(), 'Please review src/main.ts.\n');
  assert.ok(s.text().includes('you> /review src/main.ts'), s.text());
  s.type(`/help${KEYS.enter}`);
  await s.waitFor('yours: /review', '/help');
  assert.ok(s.text().includes('hidden by builtins: /clear'), s.text());
  const posts = ui.mock.posts.length;
  s.type(`/clear${KEYS.enter}`);
  await s.waitFor('[new session', 'the builtin /clear');
  assert.equal(ui.mock.posts.length, posts, 'nothing was sent');
});

test('@path: TAB completes it from the workspace; the transcript shows the mention, the request carries the file', async (t) => {
  const ws = workspace();
  const s = await ui.open(t, [], { cwd: ws });
  await s.waitFor('[online]');
  s.type(`what does @sr${KEYS.tab}`);
  await s.waitFor(() => inputLine(s) === '> what does @src/', 'the directory');
  s.type(KEYS.tab);
  await s.waitFor(() => inputLine(s) === '> what does @src/main.ts', 'the file');
  s.type(`do?${KEYS.enter}`);
  await s.waitFor('Banana', 'the reply');
  assert.equal(
    lastUser(),
    `what does @src/main.ts do?${MENTIONS_MARKER}<file path="src/main.ts">\nconsole.log("MAIN-CONTENT");\n\n</file>`,
  );
  const text = s.text();
  assert.ok(text.includes('you> what does @src/main.ts do?'), text);
  assert.ok(text.includes('[attached src/main.ts (29 bytes)]'), text);
  assert.ok(!text.includes('MAIN-CONTENT'), 'the content is not drawn');
});
