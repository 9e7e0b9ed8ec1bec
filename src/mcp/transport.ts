// Building the SDK transport for one server: a child over stdio, or streamable HTTP (which the
// SDK also speaks to servers that answer a POST with plain JSON). A stdio server runs in a
// process group of its own (builtin-tools/process-group.ts), which is stopped as a whole: what
// the server starts — children, their background jobs — ends with it, and with clm.

import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import type { Readable } from 'node:stream';
import { spawnGroup, type GroupProcess } from '../builtin-tools/process-group.js';
import { SANDBOX_SETUP_TRIES, type SpawnRequest, type WrappedSpawn } from '../sandbox/backend.js';
import type { McpServerSpec } from './config.js';
import type { OAuthContext } from './mcp-oauth.js';
import { loadClientSdk } from './sdk.js';

export interface ServerTransport {
  transport: Transport;
  /** The server's pid (stdio, once spawned), else null. */
  pid(): number | null;
  /** Stop the server's process group (stdio): SIGTERM, SIGKILL 500 ms later. No-op for HTTP. */
  terminate(): void;
  /** SIGKILL the server's process group now, synchronously (the process's 'exit' event). No-op for HTTP. */
  kill(): void;
  /**
   * How a stdio server ended: its exit status (null while it runs on) and the last lines it wrote
   * to stderr (a sandbox's own complaint among them), once its pipes are closed; null for HTTP.
   */
  exit(): Promise<{ status: string | null; stderr: string[] } | null>;
}

/** How many of a server's last stderr lines are kept for the error that says why it exited. */
const STDERR_TAIL_LINES = 5;
const STDERR_LINE_CHARS = 300;
/** How long the reason for an exit waits for the server's pipes to close. */
const EXIT_WAIT_MS = 1000;

/** How long a stopped stdio server (and its group) has between SIGTERM and SIGKILL. */
const STOP_GRACE_MS = 500;

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

type Confine = (req: SpawnRequest) => WrappedSpawn;

/**
 * Start a stdio server: its argv in a new process group, in the sandbox when it opted in (started
 * again while the sandbox cannot be set up: backend.ts SANDBOX_SETUP_TRIES). The one place a
 * server process starts. Its output waits in its pipes for the caller.
 */
async function spawnServer(command: readonly string[], confine: Confine | undefined): Promise<GroupProcess> {
  for (let n = 1; ; n++) {
    const group = spawnGroup(command, { kind: 'mcp', stdin: 'pipe', confine });
    if (!confine || n === SANDBOX_SETUP_TRIES || (await group.began) || (await group.exited).spawnError) return group;
    group.child.stdin?.destroy();
  }
}

type Sdk = Awaited<ReturnType<typeof loadClientSdk>>;

/** JSON-RPC over a server's stdin and stdout, newline-delimited, as the SDK's stdio transport speaks it. */
class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  group: GroupProcess | null = null;
  private readonly buffer: InstanceType<Sdk['ReadBuffer']>;

  constructor(
    private readonly command: readonly string[],
    private readonly sdk: Sdk,
    private readonly onStderr: (stream: Readable) => void,
    private readonly confine: Confine | undefined,
  ) {
    this.buffer = new sdk.ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  }

  async start(): Promise<void> {
    if (this.group) throw new Error('the server was started already');
    const group = await spawnServer(this.command, this.confine);
    this.group = group;
    const { stdin, stdout, stderr } = group.child;
    stdout!.on('data', (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
      } catch (e) {
        // Over the size limit (errors.ts isMessageTooLarge): the connection is dropped.
        this.onerror?.(e as Error);
        void this.close();
        return;
      }
      // A line that is JSON but no message is reported and skipped; the lines after it still count.
      for (;;) {
        try {
          const m = this.buffer.readMessage();
          if (!m) break;
          this.onmessage?.(m);
        } catch (e) {
          this.onerror?.(e as Error);
        }
      }
    });
    stdout!.on('error', (e) => this.onerror?.(e));
    stdin!.on('error', (e) => this.onerror?.(e));
    this.onStderr(stderr!);
    void group.exited.then(() => {
      this.buffer.clear();
      // What the server left running in its group goes with it.
      group.stop(STOP_GRACE_MS);
      this.onclose?.();
    });
    await group.started;
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.group?.child.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded)
      return Promise.reject(new this.sdk.SdkError(this.sdk.SdkErrorCode.NotConnected, 'Not connected'));
    return new Promise((resolve) => {
      if (stdin.write(this.sdk.serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** End the server's input, stop its group, and wait until the server has exited. */
  async close(): Promise<void> {
    const group = this.group;
    if (!group) return;
    group.child.stdin?.end();
    group.stop(STOP_GRACE_MS);
    await group.exited;
  }
}

export async function createServerTransport(
  spec: McpServerSpec,
  opts: { log?: (line: string) => void; userAgent: string; confine?: Confine; oauth?: OAuthContext },
): Promise<ServerTransport> {
  if (spec.transport === 'http') {
    const headers: Record<string, string> = { 'User-Agent': opts.userAgent };
    if (spec.apiKey) headers.Authorization = `Bearer ${spec.apiKey}`;
    const { StreamableHTTPClientTransport } = await loadClientSdk();
    // Without an api_key a server may ask for an OAuth login (a 401): the stored one is used.
    const oauth = !spec.apiKey && opts.oauth ? opts.oauth : null;
    const authProvider = oauth
      ? new (await import('./mcp-oauth.js')).ServerOAuth(spec, oauth, (l) => opts.log?.(`mcp ${spec.name}: ${l}`))
      : undefined;
    const transport = new StreamableHTTPClientTransport(new URL(spec.url!), {
      requestInit: { headers },
      fetch: cappedFetch(MAX_MESSAGE_BYTES),
      authProvider,
    });
    return { transport, pid: () => null, terminate() {}, kill() {}, exit: async () => null };
  }
  // A server that opted in runs in the sandbox (src/sandbox); one that cannot be had throws here.
  if (spec.sandbox && !opts.confine) throw new Error('sandbox = true, but this program has no sandbox to run it in');
  const confine = spec.sandbox ? opts.confine : undefined;
  const log = opts.log;
  // Always drain stderr (a full pipe would stall the server): to the debug log, and its last
  // lines kept for the error when the server exits before it is ready.
  const tail: string[] = [];
  const stdio = new GroupStdioTransport(
    spec.command,
    await loadClientSdk(),
    (stderr) =>
      forwardLines(stderr, (line) => {
        tail.push(line.length > STDERR_LINE_CHARS ? `${line.slice(0, STDERR_LINE_CHARS)}…` : line);
        if (tail.length > STDERR_TAIL_LINES) tail.shift();
        try {
          log?.(`mcp ${spec.name} stderr: ${line}`);
        } catch {
          /* a failing log sink must not break the pipe */
        }
      }),
    confine,
  );
  return {
    transport: stdio,
    pid: () => stdio.group?.pid ?? null,
    // SIGTERM to the group reaches the server behind a wrapper such as npx, and what it started.
    terminate: () => stdio.group?.stop(STOP_GRACE_MS),
    kill: () => stdio.group?.kill(),
    async exit() {
      const group = stdio.group;
      if (!group) return null;
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<null>((resolve) => {
        timer = setTimeout(resolve, EXIT_WAIT_MS, null);
      });
      const e = await Promise.race([group.exited, bound]);
      clearTimeout(timer);
      const status = !e ? null : e.signal ? `killed by ${e.signal}` : `status ${e.code}`;
      return { status, stderr: [...tail] };
    },
  };
}
