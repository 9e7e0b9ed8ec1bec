// The portable core's public API but for createAgent and what holds every dialect at once: clm
// (src/index.ts) adds those; clm/browser (src/browser.ts) adds a createAgent that takes the
// dialects the page names, so a page's bundler keeps only those adapters. No Node imports here.

export { Agent, DEFAULT_MODEL, DEFAULT_AUTOCOMPACT_PCT, UNKNOWN_CTX_THRESHOLD, TOOLS_UNSUPPORTED_NOTICE } from './core/agent.js';
export type { TurnResult, ConnectionResult, AgentOptions, Endpoint } from './core/agent.js';
export { messageToJson, messageFromJson, parseMessageJson } from './core/message-json.js';
export type { MessageJson } from './core/message-json.js';
export { providerFromStr } from './core/providers/dialects.js';
export type { DialectList } from './core/providers/dialects.js';
export { modelsUrl, propsUrl } from './core/providers/endpoint-urls.js';
export { openaiAdapter, ollamaAdapter } from './core/providers/openai.js';
export { anthropicAdapter } from './core/providers/anthropic.js';
export { responsesAdapter } from './core/providers/responses.js';
export { repairToolCalls } from './core/providers/tool-call-repair.js';
export type {
  ProviderAdapter,
  ToolSchema,
  ParsedReply,
  StreamDelta,
  StreamDecoder,
  BuildRequestOptions,
} from './core/providers/adapter.js';
export {
  ClmError,
  statusName,
  ECANCELED,
  EIO,
  E2BIG,
  EAGAIN,
  ENOMEM,
  EBUSY,
  EINVAL,
  EALREADY,
  EEXIST,
  ENOENT,
  ETIMEDOUT,
} from './core/errors.js';
export type { ClmErrorCode } from './core/errors.js';
export { parseProps, parseModelsList } from './core/server-info.js';
export { foldHistory, supersede, DEFAULT_SYSTEM_PROMPT, SUMMARY_PROMPT } from './core/history.js';
export { fnmatch } from './core/fnmatch.js';
export { CallAborted } from './core/tool-batch.js';
export { cancelledReplyText, CANCELLED_REPLY_MARK } from './core/cancelled-reply.js';
export { forTerminal } from './core/terminal-text.js';
export type * from './core/types.js';
export type * from './core/agent-config.js';
export type * from './core/providers/repair-seam.js';
export type * from './core/events.js';
export type { Host, HttpRequest, HttpResponse, HttpHandlers, HostError, Cancelable } from './core/host.js';
