// The published types of `clm/browser`, as a browser project sees them: the docs' examples compile
// with lib ES2022 + DOM, no @types/node and no skipLibCheck; `using` works where the lib has
// Symbol.dispose; createAgent asks for the dialects the page speaks. Needs dist/ (npm test builds it).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserDocBlocks } from '../fixtures/docs-browser.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A browser project with `clm` installed (a link to this repository) and these files; tsc's output and status. */
async function typecheck(lib: string[], files: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'clm-types-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(REPO, join(dir, 'node_modules/clm'), 'dir');
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib,
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        isolatedModules: true,
      },
      include: ['*.ts'],
    }),
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TSC, '-p', dir], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

test('the docs\' browser examples type-check with lib ["ES2022", "DOM"] and no @types/node', async () => {
  const blocks = browserDocBlocks().filter((b) => b.lang === 'ts');
  assert.ok(blocks.length >= 3, `expected the page, Anthropic and Worker examples, found ${blocks.length} ts blocks`);
  const files = Object.fromEntries(blocks.map((b, i) => [`example-${i + 1}.ts`, b.code]));
  const r = await typecheck(['ES2022', 'DOM'], files);
  assert.equal(r.code, 0, r.out);
});

test('`using` disposes an agent where the lib knows Symbol.dispose; without it the types ask for nothing', async () => {
  const code = `import { createAgent, createFetchHost, openaiAdapter } from 'clm/browser';
{
  using agent = createAgent({ baseUrl: '/v1/chat/completions' }, createFetchHost(), {}, { dialects: [openaiAdapter] });
  agent.submit('hi');
}
`;
  const r = await typecheck(['ESNext', 'DOM'], { 'using.ts': code });
  assert.equal(r.code, 0, r.out);
  const plain = `import { createAgent, createFetchHost, openaiAdapter, type Agent } from 'clm/browser';
const agent: Agent = createAgent({ baseUrl: '/v1/chat/completions' }, createFetchHost(), undefined, { dialects: [openaiAdapter] });
agent.close();
`;
  const r2 = await typecheck(['ES2022', 'DOM'], { 'plain.ts': plain });
  assert.equal(r2.code, 0, r2.out);
});

test('createAgent of clm/browser: no dialects, or an empty list, does not type-check; DIALECTS and new Agent do', async () => {
  const wrong = {
    'none.ts':
      "import { createAgent, createFetchHost } from 'clm/browser';\ncreateAgent({ baseUrl: '/v1/chat/completions' }, createFetchHost());\n",
    'no-dialects.ts':
      "import { createAgent, createFetchHost } from 'clm/browser';\ncreateAgent({ baseUrl: '/v1/chat/completions' }, createFetchHost(), {}, { retryBaseMs: 1 });\n",
    'empty.ts':
      "import { createAgent, createFetchHost } from 'clm/browser';\ncreateAgent({ baseUrl: '/v1/chat/completions' }, createFetchHost(), {}, { dialects: [] });\n",
  };
  const right = `import { Agent, createAgent, createFetchHost, DIALECTS, anthropicAdapter, responsesAdapter } from 'clm/browser';
createAgent({ baseUrl: '/v1/messages', provider: 'anthropic' }, createFetchHost(), undefined, { dialects: DIALECTS }).close();
createAgent({ baseUrl: '/v1/messages', provider: 'anthropic' }, createFetchHost(), {}, { dialects: [anthropicAdapter, responsesAdapter] }).close();
new Agent({ baseUrl: '/v1/responses', provider: 'openai-responses' }, createFetchHost(), {}, { dialects: [responsesAdapter] }).close();
`;
  // One project: each file's errors are reported against it.
  const r = await typecheck(['ES2022', 'DOM'], { ...wrong, 'right.ts': right });
  assert.notEqual(r.code, 0);
  for (const name of Object.keys(wrong)) assert.match(r.out, new RegExp(`^${name.replace('.', '\\.')}\\(2,`, 'm'), r.out);
  assert.doesNotMatch(r.out, /^right\.ts/m, r.out);
});

test('the check would catch a Node type in a browser project', async () => {
  const r = await typecheck(['ES2022', 'DOM'], {
    'node.ts': "import { createFetchHost } from 'clm/browser';\ncreateFetchHost();\nconst b: Buffer = new Uint8Array();\nexport { b };\n",
  });
  assert.notEqual(r.code, 0);
  assert.match(r.out, /Cannot find name 'Buffer'/);
});

test('at run time, [Symbol.dispose]() closes the agent (what `using` calls)', async () => {
  const { createAgent, createFetchHost, openaiAdapter } = await import('../../src/browser.js');
  const agent = createAgent({ baseUrl: '/v1/chat/completions' }, createFetchHost(), {}, { dialects: [openaiAdapter] });
  const dispose = (agent as unknown as Record<symbol, () => void>)[Symbol.dispose];
  assert.equal(typeof dispose, 'function');
  dispose!.call(agent);
  assert.throws(() => agent.submit('x'), /agent is closed/);
});
