// The loopback listener an OAuth login's browser comes back to (RFC 8252 §7.3): 127.0.0.1 on a
// port of the system's choosing (or the one a registration already names), one path, and the
// `state` of this login checked before a code is taken. An answer with another state ends the
// login refused: it did not come from the authorization this login started.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const CALLBACK_PATH = '/callback';

export interface CallbackAnswer {
  code: string;
  /** RFC 9207's `iss`, when the authorization server sends it. */
  iss?: string;
}

export interface CallbackListener {
  /** The redirect URI to register and send: http://127.0.0.1:PORT/callback. */
  readonly redirectUrl: string;
  /** The authorization code, or why there is none (refused, the server's error, no answer in time). */
  readonly answer: Promise<CallbackAnswer>;
  close(): void;
}

export class LoginError extends Error {
  override name = 'LoginError';
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text.replace(/[<>&]/g, (c) => `&#${c.charCodeAt(0)};`)}</p>\n`;

/** What an answer to the login comes to: the code, or why there is none; and the page the browser shows. */
function answerOf(q: URLSearchParams, state: string): { status: number; page: string; outcome: CallbackAnswer | LoginError } {
  if (q.get('state') !== state) {
    const why = 'the answer to the login did not carry the state this login sent; refused, nothing stored';
    return { status: 400, page: PAGE('clm: login refused', `clm: login refused: ${why}.`), outcome: new LoginError(why) };
  }
  const error = q.get('error');
  const code = q.get('code');
  if (error || !code) {
    const detail = q.get('error_description');
    const why = error
      ? `the authorization server refused: ${error}${detail ? ` (${detail})` : ''}`
      : 'the answer to the login carried no authorization code';
    return { status: 400, page: PAGE('clm: login failed', `clm: ${why}.`), outcome: new LoginError(why) };
  }
  const iss = q.get('iss') ?? undefined;
  return { status: 200, page: PAGE('clm: logged in', 'clm: logged in. You can close this page.'), outcome: iss ? { code, iss } : { code } };
}

function listen(server: ReturnType<typeof createServer>, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Listen for the browser's return. `port` 0 takes a free one; a port that is taken falls back to
 * a free one. The listener closes on the first answer, on close(), or after `timeoutMs`.
 */
export async function startCallbackListener(o: { state: string; timeoutMs: number; port?: number }): Promise<CallbackListener> {
  let settle!: (a: CallbackAnswer | LoginError) => void;
  const answer = new Promise<CallbackAnswer>((resolve, reject) => {
    settle = (a) => (a instanceof LoginError ? reject(a) : resolve(a));
  });
  answer.catch(() => {});
  let done = false;
  const finish = (res: ServerResponse, status: number, page: string, outcome: CallbackAnswer | LoginError) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
    if (done) return void res.end(page);
    done = true;
    settle(outcome);
    // The page goes out before the listener closes.
    res.end(page, close);
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH || done) {
      res.writeHead(404, { connection: 'close' }).end();
      return;
    }
    const a = answerOf(url.searchParams, o.state);
    finish(res, a.status, a.page, a.outcome);
  };
  const server = createServer(onRequest);
  let port: number;
  try {
    port = await listen(server, o.port ?? 0);
  } catch {
    port = await listen(server, 0);
  }
  const timer = setTimeout(() => {
    if (done) return;
    done = true;
    const within = o.timeoutMs >= 1000 ? `${Math.round(o.timeoutMs / 1000)} s` : `${o.timeoutMs} ms`;
    settle(new LoginError(`no answer from the browser within ${within}; the login listener is closed`));
    close();
  }, o.timeoutMs);
  timer.unref();
  function close(): void {
    clearTimeout(timer);
    server.close();
    server.closeAllConnections();
    if (!done) {
      done = true;
      settle(new LoginError('the login was stopped'));
    }
  }
  return { redirectUrl: `http://127.0.0.1:${port}${CALLBACK_PATH}`, answer, close };
}
