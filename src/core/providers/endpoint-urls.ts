// The URLs an endpoint implies besides itself: its models list and llama.cpp's /props. They are
// derived from the endpoint's own path, so a relative endpoint and a proxy's prefix are kept.

/** What precedes the path (scheme://authority, or '' for a relative endpoint) and the path, without query or fragment. */
function splitEndpoint(endpoint: string): { origin: string; path: string } {
  const q = endpoint.replace(/[?#].*$/s, '');
  const origin = /^([a-z][a-z0-9+.-]*:)?\/\/[^/]*/i.exec(q)?.[0] ?? '';
  return { origin, path: q.slice(origin.length) };
}

/** The endpoint's folder: …/v1/chat/completions → …/v1, …/v1/messages → …/v1; null without a path. */
function endpointDir(path: string): string | null {
  if (path.endsWith('/chat/completions')) return path.slice(0, -'/chat/completions'.length);
  const slash = path.lastIndexOf('/');
  return slash < 0 ? null : path.slice(0, slash);
}

/** …/chat/completions → …/models; otherwise the last path segment is replaced (…/v1/messages → …/v1/models). */
export function modelsUrl(endpoint: string): string {
  const { origin, path } = splitEndpoint(endpoint);
  const dir = endpointDir(path);
  return dir === null ? origin + path : `${origin}${dir}/models`;
}

/**
 * llama.cpp serves /props beside its v1 folder: http://h:8080/v1/chat/completions →
 * http://h:8080/props. A path before it (a proxy's prefix) is kept: /llm/v1/… → /llm/props.
 */
export function propsUrl(endpoint: string): string {
  const { origin, path } = splitEndpoint(endpoint);
  const dir = (endpointDir(path) ?? '').replace(/\/v1$/i, '');
  return `${origin}${dir}/props`;
}
