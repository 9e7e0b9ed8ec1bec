// The package as a user gets it: `npm pack` of this checkout, installed with npm into an empty
// project beside its runtime dependencies (packed from node_modules; --offline: no network), then used
// there — the `clm` command, the three entry points from plain ESM, and their type declarations
// from a strict TypeScript consumer. What `files`, `exports`, `bin` and `dependencies` in
// package.json say is what this checks; the rest of the suite runs the checkout itself.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startMockLlm, type MockLlm } from '../fixtures/mock-llm.js';
import { text, toolCall } from '../fixtures/openai-replies.js';
import { REPO } from '../fixtures/run-cli.js';
import { tempDir } from '../fixtures/temp-dir.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));

let mock: MockLlm;
let project: string;
let tarball: string;
let packed: string[];

/** The environment of a user's shell: none of the test runner's loaders or clm settings. */
function userEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('CLM_') || k.startsWith('XDG_') || k.startsWith('NODE_TEST') || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  env.HOME = home;
  env.XDG_CONFIG_HOME = join(home, '.config');
  env.XDG_STATE_HOME = join(home, '.local/state');
  return env;
}

before(async () => {
  mock = await startMockLlm();
  const out = tempDir('clm-pack-');
  // --ignore-scripts: `prepack` would rebuild dist/ under the other test files running from it;
  // `npm test` has just built it.
  const { stdout } = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: REPO, maxBuffer: 64 << 20 });
  const info = JSON.parse(stdout)[0];
  tarball = join(out, info.filename);
  packed = info.files.map((f: { path: string }) => f.path);
  // The runtime dependencies come from this checkout's node_modules, packed as tarballs and
  // installed with the package into a cache of the test's own, offline: nothing depends on what an
  // earlier install left in the user's npm cache (`npm ci` stores tarballs there, not the registry
  // metadata an install by name needs). `npm ls --omit=dev` lists what package.json's
  // `dependencies` pull in, so a runtime dependency missing from it is missing here too.
  const { stdout: ls } = await run(NPM, ['ls', '--omit=dev', '--all', '--parseable'], { cwd: REPO, maxBuffer: 16 << 20 });
  const depDirs = ls
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && l !== REPO);
  const { stdout: depPack } = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', out, ...depDirs], {
    cwd: REPO,
    maxBuffer: 64 << 20,
  });
  const depTarballs = JSON.parse(depPack).map((i: { filename: string }) => join(out, i.filename));
  project = tempDir('clm-installed-');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', private: true }));
  await run(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, ...depTarballs], {
    cwd: project,
    env: {
      ...userEnv(project),
      npm_config_cache: tempDir('clm-npm-cache-'),
      npm_config_loglevel: 'error',
      npm_config_update_notifier: 'false',
    },
    maxBuffer: 64 << 20,
  });
});

after(async () => {
  await mock.close();
});

test('the tarball holds the program, the library with its declarations, the seed plugins and the docs, and nothing of the workshop', () => {
  for (const f of [
    'bin/clm.cjs',
    'dist/cli.js',
    'dist/cli.cjs',
    // The one-shot program, which a one-shot run reads instead of the whole one.
    'dist/cli-oneshot.cjs',
    // The worker threads' bundles, next to the program.
    'dist/lua-worker.js',
    'dist/config-worker.js',
    'dist/highlight-worker.js',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/node.d.ts',
    'dist/browser.d.ts',
    'README.md',
    'package.json',
  ])
    assert.ok(packed.includes(f), `${f} is packed`);
  for (const f of ['edit_file.lua', 'reverse.lua', 'tasks.lua', 'weather.lua', 'web_search.lua'])
    assert.ok(packed.includes(`plugins/${f}`), `plugins/${f}`);
  for (const f of ['cli.md', 'config.md', 'plugins.md', 'library.md', 'differences.md'])
    assert.ok(packed.includes(`docs/${f}`), `docs/${f}`);
  // The shell parser's grammar with its licence.
  for (const f of ['tree-sitter-bash.wasm', 'LICENSE'])
    assert.ok(packed.includes(`vendor/tree-sitter-bash/${f}`), `vendor/tree-sitter-bash/${f}`);
  const stray = packed.filter((f) => /^(src|test|bench|scripts|node_modules|\.ci)\/|\.tsbuildinfo$|(^|\/)\.env/.test(f));
  assert.deepEqual(stray, []);
});

test('the installed clm command runs: version, help, and a one-shot turn with a tool round', async () => {
  const bin = join(project, 'node_modules/.bin/clm');
  const home = tempDir('clm-user-');
  const env = userEnv(home);
  assert.equal((await run(bin, ['-V'], { env })).stdout, `clm ${pkg.version}\n`);
  assert.match((await run(bin, ['-h'], { env })).stdout, /^usage: clm \[options\]/);
  writeFileSync(join(home, 'notes.txt'), 'the installed package read this\n');
  mock.reset();
  mock.push(toolCall('read_file', { path: join(home, 'notes.txt') }), text('done reading'));
  const r = await run(bin, ['-u', mock.base, '-o', 'read notes.txt'], { env, cwd: home });
  assert.equal(r.stdout, 'done reading\n');
  // The tool ran (its result went back to the model), and the packaged seed plugins loaded:
  // their tools are offered, from the installed package's own plugins directory.
  assert.match(JSON.stringify(mock.posts[1]!.json.messages), /the installed package read this/);
  const offered = mock.posts[0]!.json.tools.map((t: any) => t.function.name);
  for (const name of ['read_file', 'shell_exec', 'edit_file', 'reverse_string'])
    assert.ok(offered.includes(name), `${name} offered (${offered})`);
});

test('the installed package reads shell commands with its own grammar, and nothing it installed has an install script', {
  timeout: 60_000,
}, async () => {
  const bin = join(project, 'node_modules/.bin/clm');
  const home = tempDir('clm-user-');
  const r = await run(bin, ['permissions', 'explain', 'shell_exec', 'git push && rm -rf build > out.txt'], {
    env: userEnv(home),
    cwd: home,
  });
  assert.match(r.stdout, /^ {2}ask +git push +no rule \(default\)$/m);
  assert.match(r.stdout, /^ {2}ask +rm -rf build +no rule \(default\)$/m);
  assert.match(r.stdout, /^ {2}ask +> out\.txt +no rule \(default\)$/m);
  // What npm recorded of the installed tree: a package with an install script says so there.
  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8'));
  const scripted = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean }>)
    .filter(([, e]) => e.hasInstallScript)
    .map(([path]) => path);
  assert.deepEqual(scripted, []);
  // Nor does clm's own manifest name a script npm runs, or asks the user to allow, at install
  // (npm 11.16 on warns of each, npm 12 blocks them): the checkout builds itself otherwise.
  const manifest = JSON.parse(readFileSync(join(project, 'node_modules/clm/package.json'), 'utf8'));
  const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'];
  assert.deepEqual(
    Object.keys(manifest.scripts ?? {}).filter((s) => INSTALL_SCRIPTS.includes(s)),
    [],
  );
});

test('the three entry points import from plain ESM and run a turn', async () => {
  mock.reset();
  mock.push(text('hello from the mock'));
  const script = join(project, 'use.mjs');
  writeFileSync(
    script,
    `import { createAgent, statusName } from 'clm';
import { createNodeHost, builtinTools } from 'clm/node';
import * as browser from 'clm/browser';
const host = createNodeHost();
const agent = createAgent({ baseUrl: process.argv[2] + '/chat/completions', builtinTools: builtinTools() }, host);
const r = await agent.run('hi');
agent.close();
host.close();
console.log(JSON.stringify({ status: statusName(r.status), text: r.text, fetchHost: typeof browser.createFetchHost, browserAgent: typeof browser.createAgent }));
`,
  );
  const { stdout } = await run(process.execPath, [script, mock.base], { cwd: project, env: userEnv(project) });
  assert.deepEqual(JSON.parse(stdout), { status: 'ok', text: 'hello from the mock', fetchHost: 'function', browserAgent: 'function' });
  // Nothing outside `exports` is reachable: the internals may change between releases.
  const deep = join(project, 'deep.mjs');
  writeFileSync(deep, `import 'clm/dist/core/agent.js';\n`);
  await assert.rejects(run(process.execPath, [deep], { cwd: project }), (e: any) => /ERR_PACKAGE_PATH_NOT_EXPORTED/.test(e.stderr));
});

test('a strict TypeScript consumer type-checks against the installed declarations, and a wrong use does not', async () => {
  const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(REPO, 'node_modules/@types')],
      },
      files: ['good.ts'],
    }),
  );
  writeFileSync(
    join(project, 'good.ts'),
    `import { createAgent, statusName, type AgentEvent, type ToolDef } from 'clm';
import { createNodeHost, builtinTools } from 'clm/node';
import { createFetchHost } from 'clm/browser';
const echo: ToolDef = {
  name: 'echo',
  description: 'echo',
  parameters: { type: 'object', properties: { s: { type: 'string' } } },
  noPrompt: true,
  invoke: (inv) => inv.complete(inv.args),
};
const agent = createAgent({ baseUrl: 'http://127.0.0.1:1/v1/chat/completions', builtinTools: builtinTools() }, createNodeHost());
agent.addTool(echo);
agent.subscribe((e: AgentEvent) => {
  if (e.type === 'turn_done') console.log(statusName(e.status));
});
export const host = createFetchHost;
`,
  );
  await run(process.execPath, [tsc, '-p', project], { cwd: project });
  writeFileSync(join(project, 'good.ts'), `import { createAgent } from 'clm';\ncreateAgent({ baseUrl: 42 }, {});\n`);
  await assert.rejects(run(process.execPath, [tsc, '-p', project], { cwd: project }), (e: any) =>
    /good\.ts\(2,\d+\): error TS2322/.test(e.stdout),
  );
});
