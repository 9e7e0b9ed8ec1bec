// Driving plugin tools the way the agent does: a ToolInvocation per call, results awaited.

import { startMockLlm, type MockLlm } from '../fixtures/mock-llm.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolDef, ToolInvocation } from '../../src/core/types.js';
import type { PluginHost } from '../../src/lua/index.js';

export const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

export type Result = { ok: true; out: string | Uint8Array } | { ok: false; error: string };

export interface Call {
  result: Promise<Result>;
  abort(reason?: unknown): void;
}

export function tool(host: PluginHost, name: string): ToolDef {
  const t = host.tools.find((x) => x.name === name);
  if (!t)
    throw new Error(
      `tool ${name} not registered (have: ${host.tools.map((x) => x.name).join(', ')}; errors: ${JSON.stringify(host.errors)})`,
    );
  return t;
}

/** Start a call; the result settles on complete/fail (first one wins, as in the agent). */
export function start(host: PluginHost, name: string, args: string | object = '{}'): Call {
  const def = tool(host, name);
  const ac = new AbortController();
  let settle!: (r: Result) => void;
  const result = new Promise<Result>((r) => {
    settle = r;
  });
  let done = false;
  const inv: ToolInvocation = {
    name,
    args: typeof args === 'string' ? args : JSON.stringify(args),
    outputCap: 65536,
    timeoutMs: def.timeoutMs ?? 0,
    signal: ac.signal,
    get done() {
      return done;
    },
    complete(out) {
      if (!done) {
        done = true;
        settle({ ok: true, out });
      }
    },
    fail(error) {
      if (!done) {
        done = true;
        settle({ ok: false, error });
      }
    },
    notify() {},
  };
  void def.invoke(inv);
  return { result, abort: (reason?: unknown) => ac.abort(reason) };
}

export function invoke(host: PluginHost, name: string, args: string | object = '{}'): Promise<Result> {
  return start(host, name, args).result;
}

/** The output of a call that must succeed, as text. */
export async function ok(host: PluginHost, name: string, args: string | object = '{}'): Promise<string> {
  const r = await invoke(host, name, args);
  if (!r.ok) throw new Error(`${name} failed: ${r.error}`);
  return typeof r.out === 'string' ? r.out : Buffer.from(r.out).toString('latin1');
}

/** The message of a call that must fail. */
export async function failure(host: PluginHost, name: string, args: string | object = '{}'): Promise<string> {
  const r = await invoke(host, name, args);
  if (r.ok) throw new Error(`${name} succeeded unexpectedly: ${String(r.out)}`);
  return r.error;
}

/** A temporary plugin directory holding the given files. */
export function pluginDir(files: Record<string, string | Uint8Array>): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'clm-lua-test-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once cond() holds (polling), or rejects after ms. */
export async function until(cond: () => boolean, ms = 30_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/**
 * A loopback HTTP server for plugin tests: GET /hello answers "hi"; GET /hang never answers,
 * counting the requests that arrived and the connections that were closed (aborts reach it).
 */
export async function startLoopback(): Promise<{ server: MockLlm; hits: { hanging: number; closed: number } }> {
  const server = await startMockLlm();
  const hits = { hanging: 0, closed: 0 };
  server.onGet('/hello', { body: 'hi' });
  server.onGet('/hang', {
    handle: (_req, res) => {
      hits.hanging++;
      res.on('close', () => {
        hits.closed++;
      });
    },
  });
  return { server, hits };
}
