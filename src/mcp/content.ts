// tools/call results as the text the model sees. Every content item is kept: text as is, everything else as a one-line summary, all joined
// with "\n". A part the MCP schema does not accept (a type no version has, a part without its
// fields) becomes a text part describing it before the SDK sees the result (withKnownParts):
// the SDK refuses a whole result for one such part.

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Decoded size of base64 data, without decoding it. */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const s = data.replace(/[\s]/g, '');
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((s.length * 3) / 4) - pad);
}

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' && v !== '' ? v : fallback;
}

function size(n: number): string {
  if (n >= 1024 * 1024) return `${+(n / (1024 * 1024)).toFixed(1)} MiB`;
  return n >= 1024 ? `${+(n / 1024).toFixed(1)} KiB` : `${n} bytes`;
}

/** Whether the MCP schema accepts a content part as it is. */
function wellFormed(p: Record<string, unknown>): boolean {
  const isStr = (v: unknown) => typeof v === 'string';
  switch (p.type) {
    case 'text':
      return isStr(p.text);
    case 'image':
    case 'audio':
      return isStr(p.data) && isStr(p.mimeType);
    case 'resource':
      return isObject(p.resource) && isStr(p.resource.uri) && (isStr(p.resource.text) || isStr(p.resource.blob));
    case 'resource_link':
      return isStr(p.uri) && isStr(p.name);
    default:
      return false;
  }
}

/** What a part clm cannot read was: its type, media type and size. */
function unsupported(p: unknown): string {
  if (!isObject(p)) return `[unsupported content: ${p === null ? 'null' : typeof p}]`;
  const bytes = base64Bytes(p.data ?? p.blob) || (typeof p.text === 'string' ? new TextEncoder().encode(p.text).length : 0);
  const what = [str(p.type, 'no type'), typeof p.mimeType === 'string' ? p.mimeType : '', bytes ? size(bytes) : ''];
  return `[unsupported content: ${what.filter(Boolean).join(', ')}]`;
}

/** A tools/call result with each part the schema would refuse replaced by a text part describing it. */
export function withKnownParts(result: unknown): unknown {
  if (!isObject(result) || !Array.isArray(result.content)) return result;
  const content: unknown[] = result.content;
  if (content.every((p) => isObject(p) && wellFormed(p))) return result;
  return { ...result, content: content.map((p) => (isObject(p) && wellFormed(p) ? p : { type: 'text', text: unsupported(p) })) };
}

/** One content block as text. */
export function contentItemToText(item: unknown): string {
  if (!isObject(item)) return '[unknown content]';
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? item.text : '';
    case 'image':
    case 'audio':
      return `[${item.type}: ${str(item.mimeType, 'unknown type')}, ${base64Bytes(item.data)} bytes]`;
    case 'resource': {
      // An embedded resource: its text is useful to the model; a blob is summarised.
      const r = isObject(item.resource) ? item.resource : {};
      const uri = str(r.uri, '?');
      if (typeof r.text === 'string') return `[resource: ${uri}]\n${r.text}`;
      const mime = typeof r.mimeType === 'string' ? `${r.mimeType}, ` : '';
      return `[resource: ${uri}, ${mime}${base64Bytes(r.blob)} bytes]`;
    }
    case 'resource_link': {
      const uri = str(item.uri, '?');
      const name = typeof item.name === 'string' && item.name !== uri ? ` (${item.name})` : '';
      return `[resource link: ${uri}${name}]`;
    }
    default:
      return `[${str(item.type, 'unknown')} content]`;
  }
}

/** The whole result. With no content items, structuredContent (if any) is shown as JSON. */
export function callResultToText(result: unknown): string {
  if (!isObject(result)) return '';
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length) return content.map(contentItemToText).join('\n');
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  // Pre-2025 servers may answer with `toolResult`.
  if (result.toolResult !== undefined) return typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult);
  return '';
}
