// `clm/browser` bundled as a browser project's bundler does it (esbuild, through the package's
// exports): no Node module, no Lua runtime, no MCP client; its minified+gzip size printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { bundle } from '../fixtures/chromium.js';

test('a bundle of all of clm/browser holds only the core and the fetch host', async (t) => {
  const { js, inputs } = await bundle("export * from 'clm/browser';", { minify: true });
  const foreign = inputs.filter((p) => !/^dist\/(core\/|browser\/|index\.js$|browser\.js$|portable-api\.js$)/.test(p) && p !== 'entry.ts');
  assert.deepEqual(foreign, [], 'modules outside the portable core');
  assert.ok(inputs.includes('dist/browser/fetch-host.js') && inputs.includes('dist/core/agent.js'), inputs.join('\n'));
  for (const heavy of ['wasmoon', '@modelcontextprotocol', 'node:', 'zod']) {
    assert.ok(!inputs.some((p) => p.includes(heavy)), `${heavy} in the bundle`);
  }
  assert.doesNotMatch(js, /\bfrom\s*["']node:|require\(["']/);
  const gz = gzipSync(js, { level: 9 }).length;
  t.diagnostic(
    `clm/browser bundle: ${(js.length / 1024).toFixed(1)} KiB minified, ${(gz / 1024).toFixed(1)} KiB minified+gzip (goal ≤ 20 KiB: ${gz <= 20 * 1024 ? 'met' : 'missed'})`,
  );
});

test('a page of clm/browser/lean that names one dialect bundles that one alone', async (t) => {
  const modules = { openaiAdapter: 'openai', anthropicAdapter: 'anthropic', responsesAdapter: 'responses' };
  for (const [adapter, mine] of Object.entries(modules)) {
    const { js, used } = await bundle(
      `import { createAgent, createFetchHost, ${adapter} } from 'clm/browser/lean'; globalThis.page = [createAgent, createFetchHost, ${adapter}];`,
      { minify: true },
    );
    const dialects = used.filter((p) => /^dist\/core\/providers\/(openai|anthropic|responses|index)\.js$/.test(p));
    assert.deepEqual(dialects, [`dist/core/providers/${mine}.js`], `${adapter}: ${used.join(' ')}`);
    assert.ok(used.includes('dist/core/agent.js') && used.includes('dist/browser/fetch-host.js'));
    const gz = gzipSync(js, { level: 9 }).length;
    t.diagnostic(
      `clm/browser/lean page with ${adapter} only: ${(js.length / 1024).toFixed(1)} KiB minified, ${(gz / 1024).toFixed(1)} KiB minified+gzip (goal ≤ 20 KiB: ${gz <= 20 * 1024 ? 'met' : 'missed'})`,
    );
  }
});

test('the check would catch a Node-only module in the bundle', async () => {
  await assert.rejects(bundle("export * from 'clm/node';", { minify: true }), /Could not resolve "node:|node:/);
});
