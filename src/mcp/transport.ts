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
 * The largest message read from a stdio server (the SDK's default, stated here so messages can
 * name it). A larger one makes the SDK drop the connection, and clm then stops the server.
 */
export const STDIO_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

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
    const transport = new StreamableHTTPClientTransport(new URL(spec.url!), { requestInit: { headers } });
    return { transport, pid: () => null, terminate() {}, disarm() {} };
  }
  const { StdioClientTransport } = await loadStdioSdk();
  const [command, ...args] = spec.command;
  const stdio = new StdioClientTransport({
    command: command!,
    args,
    env: childEnv(),
    stderr: 'pipe',
    maxBufferSize: STDIO_MAX_MESSAGE_BYTES,
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
