// OAuth for HTTP MCP servers, over the SDK's client side (discovery, dynamic client registration,
// PKCE, token and refresh requests). What the SDK leaves to the host is here: the login (the
// browser, the loopback listener and its state check — `clm mcp login`), keeping the login in
// its file (oauth-store.ts), refreshing the access token before it expires, and saying that a
// server needs a login instead of failing its tools. A connection never starts a login: where one
// is needed it ends with NeedsLogin, and the person runs `clm mcp login NAME`.

import { randomBytes } from 'node:crypto';
import type {
  AuthProvider,
  FetchLike,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { McpServerSpec } from './config.js';
import { errorText } from './errors.js';
import { LoginError, startCallbackListener } from './oauth-callback.js';
import { type OAuthRecord, OAuthStore, type SavedTokens } from './oauth-store.js';
import { loadClientSdk } from './sdk.js';

/** How long a login waits for the browser to come back. */
export const LOGIN_TIMEOUT_MS = 5 * 60_000;

/** An access token is refreshed this long before it expires (at most a tenth of its lifetime). */
const REFRESH_MARGIN_MS = 60_000;

export interface OAuthContext {
  /** clm's state directory, where the login files are. */
  stateDir: string;
  /** Every token and client secret as it is read or made: the run masks them wherever text is shown. */
  onSecret?(value: string): void;
}

/** The server cannot be used until the person logs in (again). */
export class NeedsLogin extends Error {
  override name = 'McpNeedsLogin';
  constructor(
    readonly server: string,
    /** Why: never logged in, or the login is no longer accepted (with what said so). */
    readonly why: { kind: 'none' } | { kind: 'refused'; detail: string },
  ) {
    super(
      why.kind === 'none'
        ? `needs login — run clm mcp login ${server}`
        : `the login is no longer accepted (${why.detail}) — run clm mcp login ${server}`,
    );
  }
}

/** fetch with a deadline for each OAuth request: a silent authorization server ends in a clear error. */
function timedFetch(timeoutMs: number): FetchLike {
  return async (url, init) => {
    const ctl = new AbortController();
    const outer = init?.signal;
    const onAbort = () => ctl.abort(outer?.reason);
    outer?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => ctl.abort(new LoginError(`${originOf(url)} did not answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      const res = await fetch(url, { ...init, signal: ctl.signal });
      // The body is read after this returns: the deadline holds until it has arrived.
      const body = await res.arrayBuffer();
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    } catch (e) {
      if (ctl.signal.aborted && ctl.signal.reason instanceof LoginError) throw ctl.signal.reason;
      throw new LoginError(`cannot reach ${originOf(url)} (${errorText(e)})`);
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    }
  };
}

function originOf(url: string | URL): string {
  try {
    return new URL(String(url)).origin;
  } catch {
    return String(url);
  }
}

/** The tokens to keep: with the time they expire at, from `expires_in`. */
function withExpiry(t: StoredOAuthTokens, now = Date.now()): SavedTokens {
  const saved: SavedTokens = { ...t };
  if (typeof t.expires_in === 'number' && t.expires_in > 0) saved.expires_at = now + t.expires_in * 1000;
  return saved;
}

function registerSecrets(ctx: OAuthContext, r: OAuthRecord | null): void {
  for (const v of [r?.tokens?.access_token, r?.tokens?.refresh_token, r?.client?.client_secret])
    if (typeof v === 'string' && v) ctx.onSecret?.(v);
}

const isOAuthError = (e: unknown, ...codes: string[]): e is { code: string; message: string } =>
  (e as { name?: unknown })?.name === 'OAuthError' && codes.includes(String((e as { code?: unknown }).code));

/**
 * The transport's auth provider for one connection to an HTTP server: the stored access token
 * for each request, refreshed before it expires; on a 401, one refresh, else NeedsLogin.
 */
export class ServerOAuth implements AuthProvider {
  private readonly store: OAuthStore;
  private record: OAuthRecord | null;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly spec: McpServerSpec,
    private readonly ctx: OAuthContext,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.store = new OAuthStore(ctx.stateDir, spec.name, spec.url!);
    this.record = this.store.load();
    registerSecrets(ctx, this.record);
  }

  async token(): Promise<string | undefined> {
    const t = this.record?.tokens;
    if (!t) return undefined;
    if (t.expires_at !== undefined && t.refresh_token) {
      const lifetime = (t.expires_in ?? 0) * 1000;
      const margin = Math.min(REFRESH_MARGIN_MS, lifetime / 10);
      if (Date.now() >= t.expires_at - margin) await this.refresh();
    }
    return this.record?.tokens?.access_token;
  }

  async onUnauthorized(): Promise<void> {
    const t = this.record?.tokens;
    if (!t) throw new NeedsLogin(this.spec.name, { kind: 'none' });
    if (!t.refresh_token) {
      this.dropTokens();
      throw new NeedsLogin(this.spec.name, { kind: 'refused', detail: 'the server refused the access token' });
    }
    await this.refresh();
  }

  /** One refresh at a time: a rotated refresh token must not be sent twice. */
  private refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<void> {
    const r = this.record;
    const refreshToken = r?.tokens?.refresh_token;
    const as = r?.discovery?.authorizationServerUrl;
    if (!r?.tokens || !refreshToken || !r.client || !as) throw new NeedsLogin(this.spec.name, { kind: 'none' });
    const { refreshAuthorization } = await loadClientSdk();
    this.log('refreshing the access token');
    try {
      const tokens = await refreshAuthorization(as, {
        metadata: r.discovery?.authorizationServerMetadata,
        clientInformation: r.client,
        refreshToken,
        resource: r.resource ? new URL(r.resource) : undefined,
        // Half the request's deadline: the refresh's own failure, naming the authorization
        // server, is what ends the request, not the request's deadline.
        fetchFn: timedFetch(Math.max(1, Math.floor(this.spec.timeoutMs / 2))),
      });
      this.record = { ...r, tokens: withExpiry({ ...tokens, issuer: r.tokens.issuer }) };
      this.store.save(this.record);
      registerSecrets(this.ctx, this.record);
    } catch (e) {
      if (!isOAuthError(e, 'invalid_grant', 'invalid_client', 'unauthorized_client')) {
        throw new LoginError(`refreshing the access token failed: ${errorText(e)}`);
      }
      // Another clm may have refreshed (and so rotated the token) meanwhile: its tokens count.
      const now = this.store.load();
      if (now?.tokens?.refresh_token && now.tokens.refresh_token !== refreshToken) {
        this.record = now;
        registerSecrets(this.ctx, now);
        return;
      }
      this.dropTokens();
      throw new NeedsLogin(this.spec.name, { kind: 'refused', detail: `the authorization server refused the refresh: ${e.code}` });
    }
  }

  /** Tokens the server no longer takes are forgotten (the client registration stays). */
  private dropTokens(): void {
    const r = this.record;
    if (!r?.tokens) return;
    const { tokens: _, ...rest } = r;
    this.record = rest;
    this.store.save(rest);
  }
}

export interface LoginOptions extends OAuthContext {
  /** Open the URL in a browser; false when there is none (the URL is then only shown). */
  open(url: string): Promise<boolean>;
  /** Lines for the person: the URL to open, what is being waited for. */
  say(text: string): void;
  /** How long to wait for the browser (default LOGIN_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** The client clm registers as (dynamic client registration): a public native client with PKCE. */
function clientMetadata(redirectUrl: string): OAuthClientMetadata {
  return {
    client_name: 'clm',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** The port of a registered loopback redirect URI, to listen on again (a registration names its port). */
function registeredPort(client: StoredOAuthClientInformation | undefined): number {
  const uri = (client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  const first = Array.isArray(uri) && typeof uri[0] === 'string' ? uri[0] : '';
  try {
    const u = new URL(first);
    return u.hostname === '127.0.0.1' ? Number(u.port) || 0 : 0;
  } catch {
    return 0;
  }
}

/**
 * The SDK's side of one login: the client it registers as, the state and PKCE verifier of this
 * login, and what it learns, kept in the login's record (the file is written as each part comes).
 */
class LoginProvider implements OAuthClientProvider {
  readonly clientMetadata: OAuthClientMetadata;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;

  constructor(
    private readonly spec: McpServerSpec,
    private readonly o: LoginOptions,
    private readonly store: OAuthStore,
    /** The login in force stays until this one has its tokens. */
    public record: OAuthRecord,
    readonly redirectUrl: string,
    private readonly loginState: string,
  ) {
    this.clientMetadata = clientMetadata(redirectUrl);
  }

  private save(r: OAuthRecord): void {
    this.record = r;
    this.store.save(r);
  }

  state(): string {
    return this.loginState;
  }

  /** A registration made for another redirect URI (its port was taken) is made anew. */
  clientInformation(): StoredOAuthClientInformation | undefined {
    const uris = (this.record.client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    return Array.isArray(uris) && !uris.includes(this.redirectUrl) ? undefined : this.record.client;
  }

  saveClientInformation(client: StoredOAuthClientInformation): void {
    if (client.client_secret) this.o.onSecret?.(client.client_secret);
    // Tokens of another registration cannot be refreshed by this one.
    const { tokens: _, ...rest } = this.record;
    this.save({ ...(this.record.client?.client_id === client.client_id ? this.record : rest), client });
  }

  tokens(): undefined {
    return undefined;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    const t = withExpiry(tokens);
    registerSecrets(this.o, { ...this.record, tokens: t });
    this.save({ ...this.record, tokens: t, ...(this.discovery ? { discovery: this.discovery } : {}) });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const { name } = this.spec;
    const text = url.toString();
    const opened = await this.o.open(text);
    this.o.say(
      opened
        ? `mcp: ${name}: the browser is open for the login; if it did not come up, open:\n  ${text}`
        : `mcp: ${name}: open this address in a browser to log in:\n  ${text}`,
    );
    this.o.say(`mcp: ${name}: waiting for the browser (at most ${Math.round((this.o.timeoutMs ?? LOGIN_TIMEOUT_MS) / 1000)} s)…`);
  }

  saveCodeVerifier(v: string): void {
    this.verifier = v;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  saveDiscoveryState(d: OAuthDiscoveryState): void {
    this.discovery = d;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  saveResourceUrl(r: string): void {
    this.record = { ...this.record, resource: r };
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.record = { ...this.record, client: undefined };
    if (scope === 'all' || scope === 'tokens') this.record = { ...this.record, tokens: undefined };
  }
}

/** What failed in a login, as one line naming the address whose answer it was. */
function loginError(e: unknown, asked: string): LoginError {
  if (e instanceof LoginError) return e;
  const what = (e as Error)?.name === 'SyntaxError' ? `the answer is not JSON (${errorText(e)})` : errorText(e);
  return new LoginError(`${asked ? `${asked}: ` : ''}${what.length > 400 ? `${what.slice(0, 400)}…` : what}`);
}

/**
 * Log in to an HTTP MCP server: discovery, registration when there is none for this redirect
 * URI, the browser (or the URL printed), the code from the loopback listener, tokens saved.
 * Throws LoginError with what went wrong; nothing is stored then but a client registration.
 */
export async function login(spec: McpServerSpec, o: LoginOptions): Promise<void> {
  if (spec.transport !== 'http' || !spec.url) throw new LoginError(`'${spec.name}' is not an HTTP server; only those log in`);
  if (spec.apiKey) throw new LoginError(`'${spec.name}' has an api_key in config.lua; it is sent instead of a login`);
  const store = new OAuthStore(o.stateDir, spec.name, spec.url);
  const record = store.load() ?? { v: 1, url: spec.url };
  const state = randomBytes(24).toString('base64url');
  const listener = await startCallbackListener({ state, timeoutMs: o.timeoutMs ?? LOGIN_TIMEOUT_MS, port: registeredPort(record.client) });
  const provider = new LoginProvider(spec, o, store, record, listener.redirectUrl, state);
  const { auth } = await loadClientSdk();
  const timed = timedFetch(spec.timeoutMs);
  // What was asked last: an answer the SDK cannot read is reported with the address that gave it.
  let asked = '';
  const fetchFn: FetchLike = (url, init) => {
    asked = String(url);
    return timed(url, init);
  };
  try {
    const first = await auth(provider, { serverUrl: spec.url, fetchFn });
    if (first === 'AUTHORIZED') return;
    const { code, iss } = await listener.answer;
    const second = await auth(provider, { serverUrl: spec.url, authorizationCode: code, iss, fetchFn });
    if (second !== 'AUTHORIZED' || !provider.record.tokens) throw new LoginError('the authorization server gave no tokens');
  } catch (e) {
    throw loginError(e, asked);
  } finally {
    listener.close();
  }
}

/**
 * Forget the login of a server: its tokens revoked at the authorization server where it offers
 * revocation (as far as it answers), the file removed. Returns what was done, for the person.
 */
export async function logout(spec: McpServerSpec, o: OAuthContext): Promise<string> {
  const store = new OAuthStore(o.stateDir, spec.name, spec.url ?? '');
  const r = store.load();
  if (!store.remove()) return `mcp: ${spec.name}: not logged in`;
  // OpenID metadata has no revocation endpoint; RFC 8414's does.
  const meta = r?.discovery?.authorizationServerMetadata as { revocation_endpoint?: unknown } | undefined;
  const endpoint = typeof meta?.revocation_endpoint === 'string' ? meta.revocation_endpoint : undefined;
  if (!r?.tokens || !endpoint || !r.client) return `mcp: ${spec.name}: logged out`;
  const fetchFn = timedFetch(spec.timeoutMs);
  const failures: string[] = [];
  for (const [token, hint] of [
    [r.tokens.refresh_token, 'refresh_token'],
    [r.tokens.access_token, 'access_token'],
  ] as const) {
    if (!token) continue;
    const body = new URLSearchParams({ token, token_type_hint: hint, client_id: r.client.client_id });
    try {
      const res = await fetchFn(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      if (!res.ok) failures.push(`${hint}: HTTP ${res.status}`);
    } catch (e) {
      failures.push(`${hint}: ${errorText(e)}`);
    }
  }
  return failures.length
    ? `mcp: ${spec.name}: logged out here; revoking at the authorization server failed (${failures.join('; ')})`
    : `mcp: ${spec.name}: logged out (tokens revoked at the authorization server)`;
}
