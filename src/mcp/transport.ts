// Building the SDK transport for one server: a spawned child over stdio, or streamable HTTP
// (which the SDK also speaks to servers that answer a POST with plain JSON).

import type { Transport } from '@modelcontextprotocol/client';
import type { Readable } from 'node:stream';
import type { McpServerSpec } from './config.js';
import { loadClientSdk, loadStdioSdk } from './sdk.js';

export interface ServerTransport {
  transport: Transport;
  /** The child's pid (stdio, once spawned), else null. */
  pid(): number | null;
  /** Signal the child (stdio) to stop, with SIGKILL armed 500 ms later. No-op for HTTP. */
  terminate(): void;
  /** The child is known to be gone (the SDK's close() resolved): cancel the pending SIGKILL. */
  disarm(): void;
}

/**
 * The largest message read from a server: over stdio the SDK's default, stated here so messages
 * can name it (a larger one makes the SDK drop the connection, and clm then stops the server);
 * over HTTP cappedFetch's, the same (a larger reply fails its request, the session goes on).
 */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** The error a JSON reply over the message limit ends with (errors.ts isReplyTooLarge). */
export class ReplyTooLarge extends Error {
  override name = 'ReplyTooLarge';
}

/** The JSON-RPC error code of the answer cappedFetch gives a request whose event stream went over the limit. */
export const REPLY_TOO_LARGE_CODE = -32099;

/** The id of the one JSON-RPC request a POST carries, if it carries one. */
function requestId(init: RequestInit | undefined): string | number | undefined {
  if (typeof init?.body !== 'string') return undefined;
  try {
    const m: unknown = JSON.parse(init.body);
    const id = m !== null && typeof m === 'object' && !Array.isArray(m) ? (m as { id?: unknown }).id : undefined;
    return typeof id === 'string' || typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * fetch whose reply bodies stop at `limit` bytes per message — the whole body of a JSON reply,
 * each event of an event stream (counted from the blank line that ends the one before) — so a
 * server that sends without end cannot fill clm's memory. A JSON body over it fails its request
 * (ReplyTooLarge). An event stream over it ends with an error answer to the request it carries
 * (REPLY_TOO_LARGE_CODE): the SDK reads a stream's failure as a transport error only, and the
 * request would wait for its timeout.
 */
export function cappedFetch(limit: number): (url: string | URL, init?: RequestInit) => Promise<Response> {
  const message = `the reply was larger than ${limit} bytes`;
  return async (url, init) => {
    const res = await fetch(url, init);
    if (!res.body) return res;
    const events = (res.headers.get('content-type') ?? '').includes('text/event-stream');
    const id = events ? requestId(init) : undefined;
    let n = 0;
    let newline = false;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          if (!events) n += chunk.length;
          else
            for (const b of chunk) {
              if (b === 13) continue;
              if (b === 10 && newline) n = 0;
              else n++;
              newline = b === 10;
            }
          if (n <= limit) return ctl.enqueue(chunk);
          if (id === undefined) return ctl.error(new ReplyTooLarge(message));
          const answer = { jsonrpc: '2.0', id, error: { code: REPLY_TOO_LARGE_CODE, message } };
          ctl.enqueue(new TextEncoder().encode(`\n\nevent: message\ndata: ${JSON.stringify(answer)}\n\n`));
          ctl.terminate();
        },
      }),
    );
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** Environment for a stdio server: ours, minus the variable that overrides the LLM API key. */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'CLM_API_KEY') env[k] = v;
  return env;
}

/** Split a byte stream into lines for the debug log. */
function forwardLines(stream: Readable, emit: (line: string) => void): void {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string | Buffer) => {
    buf += String(chunk);
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).replace(/\r$/, '');
      buf = buf.slice(i + 1);
      if (line) emit(line);
    }
    if (buf.length > 8192) {
      emit(buf);
      buf = '';
    }
  });
  stream.on('end', () => {
    if (buf) emit(buf);
    buf = '';
  });
  stream.on('error', () => {});
}

export async function createServerTransport(
  spec: McpServerSpec,
  opts: { log?: (line: string) => void; userAgent: string },
): Promise<ServerTransport> {
  if (spec.transport === 'http') {
    const headers: Record<string, string> = { 'User-Agent': opts.userAgent };
    if (spec.apiKey) headers.Authorization = `Bearer ${spec.apiKey}`;
    const { StreamableHTTPClientTransport } = await loadClientSdk();
    const transport = new StreamableHTTPClientTransport(new URL(spec.url!), {
      requestInit: { headers },
      fetch: cappedFetch(MAX_MESSAGE_BYTES),
    });
    return { transport, pid: () => null, terminate() {}, disarm() {} };
  }
  const { StdioClientTransport } = await loadStdioSdk();
  const [command, ...args] = spec.command;
  const stdio = new StdioClientTransport({
    command: command!,
    args,
    env: childEnv(),
    stderr: 'pipe',
    maxBufferSize: MAX_MESSAGE_BYTES,
  });
  const log = opts.log;
  // Always drain stderr (a full pipe would stall the server); keep it for the debug log only.
  if (stdio.stderr)
    forwardLines(stdio.stderr as Readable, (line) => {
      try {
        log?.(`mcp ${spec.name} stderr: ${line}`);
      } catch {
        /* a failing log sink must not break the pipe */
      }
    });
  let killTimer: NodeJS.Timeout | undefined;
  return {
    transport: stdio,
    pid: () => stdio.pid,
    terminate() {
      // SIGTERM lets wrappers such as npx pass the signal on; SIGKILL follows if it is ignored.
      // The SDK's close() then reaps the child (it waits for the process "close" event).
      const pid = stdio.pid;
      if (pid === null) return;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        return;
      }
      // The SDK forgets the child as soon as close() starts, so the pid is remembered here;
      // disarm() runs once the SDK has seen it exit, so the pid cannot have been reused.
      killTimer ??= setTimeout(() => {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }, 500);
      killTimer.unref();
    },
    disarm() {
      if (killTimer) clearTimeout(killTimer);
    },
  };
}
