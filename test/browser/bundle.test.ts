// `clm/browser` bundled as a browser project's bundler does it (esbuild, through the package's
// exports): no Node module, no Lua runtime, no MCP client; a page holds only the wire dialects it
// names. Its minified+gzip sizes printed; the one-dialect page's checked against the 21.25 KiB goal
// (deterministic for the pinned esbuild).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { bundle, REPO } from '../fixtures/chromium.js';

// The page carries the whole agent of clm_agent(3): the permission gate in both its forms, the
// checkpoint hook, cancelled replies kept, the body deadline and malformed-stream errors, and a
// compaction that fits a conversation over the context window. 21.25 KiB holds that with room for
// a little more; what a page can do without stays behind hooks it names.
const GOAL = 21.25 * 1024;
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const figure = (js: string) => {
  const gz = gzipSync(js, { level: 9 }).length;
  return { gz, text: `${kib(js.length)} minified, ${kib(gz)} minified+gzip` };
};

/** Each dialect's module, and strings found in its code alone (wire names, request fragments). */
const ADAPTERS = {
  openaiAdapter: { module: 'dist/core/providers/openai.js', marks: ['stream_options', 'finish_reason'] },
  anthropicAdapter: { module: 'dist/core/providers/anthropic.js', marks: ['anthropic-version', 'content_block_delta'] },
  responsesAdapter: { module: 'dist/core/providers/responses.js', marks: ['function_call_output', 'response.output_text.delta'] },
};
const DIALECT_MODULES = /^dist\/core\/providers\/(openai|anthropic|responses|index)\.js$/;
/** Modules of clm/browser that such a page does not call into: they must cost it nothing (no top-level code kept). */
const NOT_CALLED = ['dist/core/terminal-text.js'];

const page = (names: string) =>
  `import { createAgent, createFetchHost, ${names} } from 'clm/browser'; globalThis.page = [createAgent, createFetchHost, ${names}];`;

test('a bundle of all of clm/browser holds only the core and the fetch host', async (t) => {
  const { js, inputs } = await bundle("export * from 'clm/browser';", { minify: true });
  // jsonrepair (pure ECMAScript) comes with repairToolCalls, for the pages that ask for it.
  const foreign = inputs.filter(
    (p) => !/^dist\/(core\/|browser\/|browser\.js$|portable-api\.js$)|^node_modules\/jsonrepair\//.test(p) && p !== 'entry.ts',
  );
  assert.deepEqual(foreign, [], 'modules outside the portable core');
  assert.ok(inputs.includes('dist/browser/fetch-host.js') && inputs.includes('dist/core/agent.js'), inputs.join('\n'));
  for (const heavy of ['wasmoon', '@modelcontextprotocol', 'node:', 'zod']) {
    assert.ok(!inputs.some((p) => p.includes(heavy)), `${heavy} in the bundle`);
  }
  assert.doesNotMatch(js, /\bfrom\s*["']node:|require\(["']/);
  t.diagnostic(`clm/browser, every export: ${figure(js).text}`);
});

test('a page of clm/browser that names one dialect bundles that one alone, within 21.25 KiB gzip', async (t) => {
  for (const [name, mine] of Object.entries(ADAPTERS)) {
    const { js, used } = await bundle(page(name), { minify: true });
    assert.deepEqual(
      used.filter((p) => DIALECT_MODULES.test(p)),
      [mine.module],
      `${name}: ${used.join(' ')}`,
    );
    assert.ok(used.includes('dist/core/agent.js') && used.includes('dist/browser/fetch-host.js'));
    for (const m of NOT_CALLED) assert.ok(!used.includes(m), `${name}: ${m} has code in the page`);
    for (const [other, theirs] of Object.entries(ADAPTERS)) {
      for (const mark of theirs.marks) {
        if (other === name) assert.ok(js.includes(mark), `${name}: its own ${mark} is missing, so the check below proves nothing`);
        else assert.ok(!js.includes(mark), `${name}: ${other}'s ${mark} is in the bundle`);
      }
    }
    const f = figure(js);
    t.diagnostic(`clm/browser page naming ${name}: ${f.text} (goal ≤ 21.25 KiB: ${GOAL - f.gz} B to spare)`);
    assert.ok(f.gz <= GOAL, `${name}: ${kib(f.gz)} minified+gzip, over the 21.25 KiB goal`);
  }
});

test('the repair of tool calls, and jsonrepair, are in a page only when it names repairToolCalls', async (t) => {
  const plain = await bundle(page('openaiAdapter'), { minify: true });
  assert.ok(
    !plain.used.some((p) => p.includes('jsonrepair') || p.includes('tool-call-repair') || p.includes('text-tool-calls')),
    plain.used.join(' '),
  );
  const asked = await bundle(page('openaiAdapter, repairToolCalls'), { minify: true });
  for (const m of ['dist/core/providers/tool-call-repair.js', 'dist/core/providers/text-tool-calls.js'])
    assert.ok(asked.used.includes(m), `${m}: ${asked.used.join(' ')}`);
  assert.ok(
    asked.used.some((p) => p.startsWith('node_modules/jsonrepair/')),
    asked.used.join(' '),
  );
  t.diagnostic(`clm/browser page naming openaiAdapter and repairToolCalls: ${figure(asked.js).text}`);
});

test('a page of clm/browser that names DIALECTS bundles every dialect', async (t) => {
  const { js, used } = await bundle(page('DIALECTS'), { minify: true });
  for (const [name, a] of Object.entries(ADAPTERS)) {
    assert.ok(used.includes(a.module), `${name}'s module: ${used.join(' ')}`);
    for (const mark of a.marks) assert.ok(js.includes(mark), `${name}'s ${mark}`);
  }
  t.diagnostic(`clm/browser page naming DIALECTS (every dialect): ${figure(js).text}`);
});

/** TypeScript `private` members in code (comments left out): a minifier keeps their names whole. */
const tsPrivate = (src: string): string[] =>
  [
    ...src
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1')
      .matchAll(/(?:^|[\s(,])private\s+(?:readonly\s+|static\s+|get\s+|set\s+|async\s+)*([A-Za-z_$][\w$]*)/g),
  ].map((m) => m[1]!);

test("the browser code's class internals are #private, which a page's minifier shortens", () => {
  const files = (d: string): string[] =>
    readdirSync(d).flatMap((n) => {
      const p = join(d, n);
      return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
    });
  const bad = [...files(join(REPO, 'src/core')), ...files(join(REPO, 'src/browser')), join(REPO, 'src/browser.ts')].flatMap((f) =>
    tsPrivate(readFileSync(f, 'utf8')).map((name) => `${f.slice(REPO.length)}: private ${name} (make it #${name})`),
  );
  assert.deepEqual(bad, []);
});

test('the check would catch a TypeScript private member', () => {
  assert.deepEqual(
    tsPrivate('class A {\n  private readonly x = 1;\n  constructor(private y: number) {}\n  private get z() { return 1; }\n}'),
    ['x', 'y', 'z'],
  );
  assert.deepEqual(tsPrivate('class A {\n  // private w\n  #x = 1;\n  /** private v */\n}'), []);
});

test('the check would catch a Node-only module in the bundle', async () => {
  await assert.rejects(bundle("export * from 'clm/node';", { minify: true }), /Could not resolve "node:|node:/);
});
