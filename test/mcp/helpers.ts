// Shared bits of the MCP tests: a ToolInvocation stand-in, an HTTP adapter from node:http to
// the SDK's web-standard server transport, and waiting for tool-set changes.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolDef, ToolInvocation } from '../../src/core/types.js';

export interface InvocationResult {
  ok: boolean;
  text: string;
}

/** A ToolInvocation whose outcome is a promise; `abort()` plays the agent's cancel/timeout. */
export function makeInvocation(args: string | object = '{}', opts: { timeoutMs?: number } = {}) {
  const controller = new AbortController();
  let done = false;
  let settle!: (r: InvocationResult) => void;
  const result = new Promise<InvocationResult>((r) => (settle = r));
  const finish = (r: InvocationResult) => {
    if (done) return;
    done = true;
    settle(r);
  };
  const inv: ToolInvocation = {
    name: 'test',
    args: typeof args === 'string' ? args : JSON.stringify(args),
    outputCap: 65536,
    timeoutMs: opts.timeoutMs ?? 5000,
    signal: controller.signal,
    complete: (out) => finish({ ok: true, text: typeof out === 'string' ? out : Buffer.from(out).toString('utf8') }),
    fail: (msg) => finish({ ok: false, text: msg }),
    get done() {
      return done;
    },
    notify() {},
  };
  return {
    inv,
    result,
    /** The agent gives up (cancel or its own deadline): the invocation is done and the signal fires. */
    abort(reason = 'cancelled') {
      finish({ ok: false, text: reason });
      controller.abort();
    },
  };
}

export async function invoke(
  tool: ToolDef | undefined,
  args: string | object = '{}',
  opts: { timeoutMs?: number } = {},
): Promise<InvocationResult> {
  if (!tool) throw new Error('no such tool');
  const call = makeInvocation(args, opts);
  await tool.invoke(call.inv);
  return call.result;
}

export function findTool(tools: readonly ToolDef[], name: string): ToolDef | undefined {
  return tools.find((t) => t.name === name);
}

/** Records onToolsChanged calls and lets a test wait for the next matching one. */
export class ToolsRecorder {
  readonly events: { server: string; names: string[] }[] = [];
  private waiters: { pred: (names: string[]) => boolean; resolve: (names: string[]) => void }[] = [];

  readonly onToolsChanged = (server: string, tools: ToolDef[]) => {
    const names = tools.map((t) => t.name);
    this.events.push({ server, names });
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred(names)) return true;
      w.resolve(names);
      return false;
    });
  };

  next(pred: (names: string[]) => boolean, timeoutMs = 5000): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error(`no matching onToolsChanged within ${timeoutMs} ms; saw ${JSON.stringify(this.events)}`)),
        timeoutMs,
      );
      this.waiters.push({
        pred,
        resolve: (n) => {
          clearTimeout(t);
          resolve(n);
        },
      });
    });
  }
}

/** Serve a fetch-style handler on 127.0.0.1 with node:http (streams the response body as it comes). */
export async function serveFetch(
  handler: (req: Request) => Promise<Response>,
): Promise<{ url: string; server: HttpServer; close(): Promise<void> }> {
  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
        else if (v !== undefined) headers.set(k, v);
      }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
      });
      const response = await handler(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body) return void res.end();
      const reader = response.body.getReader();
      res.on('close', () => void reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(e));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
