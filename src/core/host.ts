// The host seam (clm_host(3)): the only way the portable core reaches the outside world.
// A host performs HTTP requests and one-shot timers; everything else is the core's business.

export interface HttpRequest {
  url: string;
  /** No body (nor bodyPieces) ⇒ GET, else POST. Text is sent as UTF-8; bytes as they are. */
  body?: string | Uint8Array;
  /**
   * The body as pieces sent one after another, instead of `body`: given only to a host whose
   * `bodyPieces` is true (a request assembled from cached parts need not be copied into one).
   */
  bodyPieces?: readonly Uint8Array[];
  /** Extra headers (provider auth, content type). Names as given. */
  headers?: Record<string, string>;
  /** User-Agent tag, e.g. the tool name for plugin requests. */
  clientSuffix?: string;
  /**
   * Fail the request with code 'EFBIG' once the response body passes this many bytes (any
   * status), instead of holding all of it. Absent ⇒ the host's own limit, if any.
   */
  maxBytes?: number;
}

export interface HttpResponse {
  /** Any HTTP status: 4xx/5xx are still a "success" of the transport. */
  status: number;
  /** Response headers, names lower-cased. */
  headers: Record<string, string>;
  /** The whole body as received (also after streaming). */
  body: Uint8Array;
}

/** A handler that throws does not throw out of the host: onData failing fails the request (onError). */
export interface HttpHandlers {
  /** Body chunks, only for a 2xx response, in order, before onResponse. */
  onData?(chunk: Uint8Array): void;
  /** Called exactly once unless onError is: the request completed with any status. */
  onResponse(res: HttpResponse): void;
  /** Called exactly once unless onResponse is: transport failure or cancel ("cancelled"). */
  onError(err: HostError): void;
}

export interface HostError {
  /** 'ECANCELED' for a cancel, otherwise a transport code such as 'ECONNREFUSED'. */
  code: string;
  message: string;
  /** false: sending the request again would fail the same way (a bad URL, a CORS rejection), so the agent reports it at once. */
  retryable?: boolean;
}

export interface Cancelable {
  cancel(): void;
}

export interface Host {
  /**
   * Start one request. Reports exactly once, possibly synchronously inside this call.
   * cancel() after the report is a no-op; cancel() before it reports onError({code:'ECANCELED'}).
   */
  http(req: HttpRequest, handlers: HttpHandlers): Cancelable;
  /** One-shot timer. Without it the core runs no timeouts, retries waits or rate-limit waits. */
  setTimer?(ms: number, cb: () => void): Cancelable;
  /** Monotonic milliseconds; defaults to performance.now()/Date.now(). */
  now?(): number;
  /** Debug log sink (CLM_DEBUG_LOG); absent ⇒ logging is free. */
  log?(line: string): void;
  /** The host sends a request's `bodyPieces`; without it the agent joins them into `body`. */
  readonly bodyPieces?: boolean;
}
