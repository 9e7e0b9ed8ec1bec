// The terminal toolkit: a line-diff renderer with full-screen and inline modes, terminals, keys,
// a line editor, display width and wrapping, markdown. It knows nothing of the agent. See README.md.

export * from './escapes.js';
export * from './style.js';
export * from './width.js';
export * from './spans.js';
export * from './wrap.js';
export * from './sanitize.js';
export * from './keys.js';
export * from './terminal.js';
export * from './transcript.js';
export * from './renderer.js';
export * from './search.js';
export * from './history.js';
export * from './editor.js';
export * from './markdown.js';
export * from './markdown-stream.js';
export * from './highlight.js';
export * from './emoji.js';
export * from './capabilities.js';
export * from './components.js';
export { parseRow, diffRows, type Row, type RowChange } from './row.js';
