// The five seed plugins shipped in plugins/. The
// network ones are pointed at a loopback server through clm.config.base_url.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadPlugins, seedPluginDir, type PluginHost } from '../../src/lua/index.js';
import { startMockLlm, type MockLlm } from '../fixtures/mock-llm.js';
import { ok, failure, pluginDir, tool } from './helpers.js';

let host: PluginHost;
let server: MockLlm;

const CONDITIONS = {
  current_condition: [
    {
      temp_F: '70',
      temp_C: '21',
      FeelsLikeF: '68',
      humidity: '55',
      weatherDesc: [{ value: 'Partly cloudy' }],
      windspeedMiles: '9',
      winddir16Point: 'WSW',
      precipInches: '0.1',
    },
  ],
};

before(async () => {
  server = await startMockLlm();
  server.onGet('/Paris?format=j1', { body: CONDITIONS });
  server.onGet('/Paris?format=%l', { body: 'Paris, Ile-de-France, France\n' });
  server.onGet('/New+York?format=j1', { body: CONDITIONS });
  server.onGet('/Atlantis?format=j1', { status: 404, body: 'Unknown location' });
  server.onGet('/Garbage?format=j1', { body: 'not json' });
  host = await loadPlugins({
    dirs: [seedPluginDir()],
    toolsConfig: {
      weather: { base_url: `${server.url}/` },
      web_search: { api_key: 'tvly-test', base_url: server.url },
    },
  });
  assert.deepEqual(host.errors, []);
});
after(async () => {
  await host.close();
  await server.close();
});

test('the seed directory registers the five tools in file order', () => {
  assert.deepEqual(
    host.tools.map((t) => t.name),
    ['edit_file', 'reverse_string', 'tasks', 'get_weather', 'web_search'],
  );
});

describe('reverse_string', () => {
  test('reverses text, by character for UTF-8', async () => {
    assert.equal(await ok(host, 'reverse_string', { text: 'hello' }), 'olleh');
    assert.equal(await ok(host, 'reverse_string', { text: 'héllo 🦴' }), '🦴 olléh');
    assert.equal(await ok(host, 'reverse_string', { text: '' }), '');
  });

  test('fails without text; it is gated', async () => {
    assert.equal(await failure(host, 'reverse_string', {}), "missing 'text' argument");
    assert.equal(tool(host, 'reverse_string').noPrompt, undefined);
  });
});

describe('edit_file', () => {
  test('replaces a unique match, refuses ambiguous or missing ones, replace_all replaces all', async () => {
    const d = pluginDir({ 'f.txt': 'alpha beta\nbeta gamma\nunique line\n' });
    const path = join(d.dir, 'f.txt');
    try {
      assert.equal(
        await ok(host, 'edit_file', { path, old_str: 'unique line', new_str: 'changed' }),
        `ok: replaced 1 occurrence(s) of 11 bytes with 7 bytes each in ${path}`,
      );
      assert.equal(readFileSync(path, 'utf8'), 'alpha beta\nbeta gamma\nchanged\n');
      assert.match(
        await failure(host, 'edit_file', { path, old_str: 'beta', new_str: 'B' }),
        /^old_str matches 2 times; must be unique \(/,
      );
      assert.equal(await failure(host, 'edit_file', { path, old_str: 'delta', new_str: 'D' }), `old_str not found in ${path}`);
      assert.equal(
        await failure(host, 'edit_file', { path, old_str: '', new_str: 'D' }),
        "missing 'old_str' (use write_file to create new files)",
      );
      assert.equal(
        await ok(host, 'edit_file', { path, old_str: 'beta', new_str: 'B.', replace_all: true }),
        `ok: replaced 2 occurrence(s) of 4 bytes with 2 bytes each in ${path}`,
      );
      assert.equal(readFileSync(path, 'utf8'), 'alpha B.\nB. gamma\nchanged\n');
      // Literal, not a pattern.
      writeFileSync(path, 'a.b a%b (x)');
      assert.equal(
        await ok(host, 'edit_file', { path, old_str: '(x)', new_str: '[y]' }),
        `ok: replaced 1 occurrence(s) of 3 bytes with 3 bytes each in ${path}`,
      );
      assert.equal(readFileSync(path, 'utf8'), 'a.b a%b [y]');
      // The same error text as the builtin file tools (strerror's, not Node's).
      const nope = join(d.dir, 'nope.txt');
      assert.equal(
        await failure(host, 'edit_file', { path: nope, old_str: 'a', new_str: 'b' }),
        `cannot read '${nope}': No such file or directory`,
      );
      assert.equal(await failure(host, 'edit_file', { path: d.dir, old_str: 'a', new_str: 'b' }), `cannot read '${d.dir}': Is a directory`);
      assert.equal(tool(host, 'edit_file').noPrompt, undefined);
    } finally {
      d.remove();
    }
  });
});

describe('tasks', () => {
  test('keeps a list across calls: add, list, done, update, remove', async () => {
    assert.equal(tool(host, 'tasks').noPrompt, true);
    assert.equal(await ok(host, 'tasks', { action: 'list' }), 'no tasks.');
    assert.equal(await ok(host, 'tasks', { action: 'add', text: 'write tests' }), 'added task 1.\n[ ] 1. write tests');
    assert.equal(await ok(host, 'tasks', { action: 'add', text: 'ship' }), 'added task 2.\n[ ] 1. write tests\n[ ] 2. ship');
    assert.equal(await ok(host, 'tasks', { action: 'done', id: 1 }), 'task 1 done.\n[x] 1. write tests\n[ ] 2. ship');
    assert.equal(
      await ok(host, 'tasks', { action: 'update', id: 2, text: 'ship it' }),
      'updated task 2.\n[x] 1. write tests\n[ ] 2. ship it',
    );
    assert.equal(await ok(host, 'tasks', { action: 'remove', id: '1' }), 'removed task 1.\n[ ] 2. ship it');
    assert.equal(await ok(host, 'tasks', { action: 'list' }), '[ ] 2. ship it');
  });

  test('explains bad requests', async () => {
    assert.equal(await failure(host, 'tasks', { action: 'add' }), "'add' requires a 'text' argument");
    assert.equal(await failure(host, 'tasks', { action: 'done' }), "'done' requires an 'id' argument");
    assert.equal(await failure(host, 'tasks', { action: 'done', id: 99 }), 'no task with id 99');
    assert.equal(await failure(host, 'tasks', { action: 'fly' }), "unknown action 'fly'; use add, list, done, remove, or update");
    assert.equal(await failure(host, 'tasks', {}), "unknown action 'nil'; use add, list, done, remove, or update");
  });
});

describe('get_weather', () => {
  test('fetches conditions and the area name and formats a report', async () => {
    assert.equal(
      await ok(host, 'get_weather', { location: 'Paris' }),
      'Weather for Paris, Ile-de-France, France: Partly cloudy, 70°F (21°C), feels like 68°F; humidity 55%; wind 9 mph WSW; precipitation 0.1 in',
    );
    const paths = server.requests
      .filter((r) => r.path.startsWith('/Paris'))
      .map((r) => r.path)
      .sort();
    assert.deepEqual(paths, ['/Paris?format=%l', '/Paris?format=j1']);
    assert.equal(server.requests.find((r) => r.path === '/Paris?format=j1')?.headers['user-agent'], 'clm (get_weather)');
  });

  test('encodes the location; a missing area name falls back to it', async () => {
    assert.match(await ok(host, 'get_weather', { location: 'New York' }), /^Weather for New York: Partly cloudy/);
  });

  test('fails on an HTTP error or unreadable data; needs a location; has a 15 s timeout', async () => {
    assert.equal(await failure(host, 'get_weather', { location: 'Atlantis' }), 'weather service returned HTTP 404');
    assert.match(await failure(host, 'get_weather', { location: 'Garbage' }), /^unreadable weather data: json\.decode: invalid JSON/);
    assert.equal(await failure(host, 'get_weather', {}), "missing 'location' argument");
    assert.equal(tool(host, 'get_weather').timeoutMs, 15000);
    assert.equal(tool(host, 'get_weather').noPrompt, undefined);
  });
});

describe('web_search', () => {
  test('posts the query with the configured key and formats answer and results', async () => {
    server.push({
      body: {
        answer: 'Lua is a language.',
        results: [
          { title: 'Lua', url: 'https://www.lua.org', content: 'The programming language.' },
          { title: 'Lua (moon)', url: 'https://example.org/moon', content: '' },
        ],
      },
    });
    assert.equal(
      await ok(host, 'web_search', { query: 'what is lua', max_results: 50, topic: 'general' }),
      'Answer: Lua is a language.\n\n1. Lua\n   https://www.lua.org\n   The programming language.\n2. Lua (moon)\n   https://example.org/moon',
    );
    const req = server.posts[server.posts.length - 1];
    assert.equal(req.path, '/search');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(req.json, { query: 'what is lua', max_results: 20, api_key: 'tvly-test', include_answer: 'basic', topic: 'general' });
    assert.equal(tool(host, 'web_search').noPrompt, true);
    assert.equal(tool(host, 'web_search').timeoutMs, 15000);
  });

  test('defaults to 5 results; reports no results and HTTP errors', async () => {
    server.push({ body: { results: [] } });
    assert.equal(await ok(host, 'web_search', { query: 'nothing' }), 'no results.');
    assert.equal(server.posts[server.posts.length - 1].json.max_results, 5);
    server.push({ status: 401, body: { detail: { error: 'Unauthorized: missing or invalid API key.' } } });
    assert.equal(
      await failure(host, 'web_search', { query: 'x' }),
      'search service returned HTTP 401: Unauthorized: missing or invalid API key.',
    );
    assert.equal(await failure(host, 'web_search', {}), "missing 'query' argument");
  });

  test('without an API key it says how to configure one (and sends nothing)', async () => {
    const h = await loadPlugins({ dirs: [seedPluginDir()] });
    const before = server.requests.length;
    try {
      assert.match(
        await failure(h, 'web_search', { query: 'x' }),
        /^web_search needs a Tavily API key: set tools = \{ web_search = \{ api_key = "\.\.\." \} \} in config\.lua$/,
      );
      assert.equal(server.requests.length, before);
    } finally {
      await h.close();
    }
  });
});
