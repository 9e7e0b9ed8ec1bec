// Where the OAuth login of one MCP server is kept: one file per server, mode 0600, in a 0700
// directory under clm's state directory — never in a session, log or the configuration. The file
// names the server URL it was made for, so tokens never go to another server when the
// configuration's URL changes; such a file counts as no login.

import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../host/regular-file.js';
import type { OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { sanitizeNamePart } from './tool-names.js';

/** A login file is a few KiB; anything near this is not one. */
const MAX_FILE_BYTES = 1024 * 1024;

/** The tokens with the time they expire at (ms since the epoch), known from `expires_in` when they came. */
export type SavedTokens = StoredOAuthTokens & { expires_at?: number };

export interface OAuthRecord {
  v: 1;
  /** The server URL the login was made for. */
  url: string;
  /** The client registration (dynamic client registration, or the one the server accepted). */
  client?: StoredOAuthClientInformation;
  tokens?: SavedTokens;
  /** The authorization server found at login: what a refresh needs. */
  discovery?: OAuthDiscoveryState;
  /** The RFC 8707 resource the tokens were asked for. */
  resource?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export class OAuthStore {
  /** The file of this server's login. */
  readonly file: string;

  constructor(
    /** clm's state directory. */
    stateDir: string,
    readonly server: string,
    readonly url: string,
  ) {
    // The name as a readable part and a hash of it, so two names never share a file.
    const hash = createHash('sha256').update(server).digest('hex').slice(0, 12);
    this.file = join(stateDir, 'mcp-oauth', `${sanitizeNamePart(server).slice(0, 40)}-${hash}.json`);
  }

  /** The login for this server and URL, or null (none, another URL, or not a readable regular file: a FIFO never blocks). */
  load(): OAuthRecord | null {
    let text: string;
    try {
      text = readRegularFileSync(this.file, MAX_FILE_BYTES, { noFollow: true }).toString('utf8');
    } catch {
      return null;
    }
    try {
      const r: unknown = JSON.parse(text);
      if (!isObject(r) || r.v !== 1 || r.url !== this.url) return null;
      if (r.tokens !== undefined && !(isObject(r.tokens) && typeof r.tokens.access_token === 'string')) delete r.tokens;
      if (r.client !== undefined && !(isObject(r.client) && typeof r.client.client_id === 'string')) delete r.client;
      return r as unknown as OAuthRecord;
    } catch {
      return null;
    }
  }

  /** Write the record: a new file of mode 0600 put in place by rename, so a reader never sees half of one. */
  save(record: OAuthRecord): void {
    const dir = join(this.file, '..');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const tmp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: 'wx' });
      // The mode given to open is cut by the umask; the file must be 0600 whatever it is.
      chmodSync(tmp, 0o600);
      renameSync(tmp, this.file);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
  }

  /** Forget the login. True when there was a file. */
  remove(): boolean {
    try {
      rmSync(this.file);
      return true;
    } catch {
      return false;
    }
  }
}
