// tools/call results as the text the model sees. Every content item is kept: text as is, everything else as a one-line summary, all joined
// with "\n".

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
