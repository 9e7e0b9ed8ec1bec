// The mutants scripts/mutants.mjs tries: { id, file, from, to, what, tests }. `from` must occur
// exactly once in `file`; `tests` are the test files that should notice the change.

const ENGINE = ['test/fuzz/tool-dispatch.test.ts', 'test/fuzz/messages-sessions.test.ts', 'test/core/agent-openai.test.ts', 'test/core/agent-reentrancy.test.ts', 'test/core/agent-tool-batch.test.ts', 'test/core/pure-parts.test.ts', 'test/core/history.test.ts', 'test/core/llm-call.test.ts'];
const PROVIDERS = [
  'test/core/providers/openai.test.ts', 'test/core/providers/anthropic.test.ts', 'test/core/providers/responses.test.ts',
  'test/core/providers/pairing.test.ts', 'test/core/providers/dialects-e2e.test.ts', 'test/core/providers/dialects-bad-input-e2e.test.ts',
  'test/core/providers/dialects-compaction-e2e.test.ts',
];
const SSE = ['test/core/pure-parts.test.ts', 'test/core/llm-call.test.ts', 'test/fuzz/sse.test.ts', 'test/fuzz/stream-decoders.test.ts', ...PROVIDERS, 'test/core/agent-openai.test.ts'];
const LUA = ['test/lua/sandbox.test.ts', 'test/lua/http.test.ts', 'test/lua/tasks.test.ts', 'test/lua/json.test.ts', 'test/lua/sandbox-corpus.test.ts', 'test/fuzz/lua-json.test.ts'];
const REDACT = ['test/host/debug-log.test.ts', 'test/host/node-host.test.ts'];

const m = (id, file, from, to, what, tests) => ({ id, file, from, to, what, tests });

export const MUTANTS = [
  // ---- one model request (src/core/llm-call.ts)
  m('llm-ignore-retry-after', 'src/core/llm-call.ts', 'afterMs ?? backoffMs(this.attempt, o.retryBaseMs)', 'backoffMs(this.attempt, o.retryBaseMs)', 'Retry-After ignored: backoff only', ENGINE),
  m('llm-no-wait-cap', 'src/core/llm-call.ts', 'Math.min(MAX_RETRY_WAIT_MS, afterMs ?? backoffMs', '(afterMs ?? backoffMs', 'no ceiling on a retry wait', ENGINE),
  m('llm-retry-4xx', 'src/core/llm-call.ts', '(res.status === 429 || res.status >= 500)', '(res.status >= 400)', 'every 4xx retried', ENGINE),
  m('llm-retry-after-data', 'src/core/llm-call.ts', 'if (!gotData && err.code', 'if (err.code', 'a stream cut after data is retried (duplicated text)', ENGINE),
  m('llm-accept-truncated', 'src/core/llm-call.ts', "      if (!asm.done && !asm.finish) {\n        this.fail", "      if (false) {\n        this.fail", 'a stream without its end is accepted', ENGINE),
  m('llm-flush-after-finish', 'src/core/llm-call.ts', 'if (asm.done || asm.finish) { this.streamed(asm); return; }', '', 'a cut trailing usage chunk fails a finished reply', ENGINE),
  m('llm-last-id-wins', 'src/core/llm-call.ts', 'if (tc.id && !acc.id) acc.id = tc.id;', 'if (tc.id) acc.id = tc.id;', 'a later fragment replaces the tool-call id', [...ENGINE, ...PROVIDERS]),
  m('llm-backoff-exponent', 'src/core/llm-call.ts', 'base * 2 ** (attempt - 1)', 'base * 2 ** attempt', 'backoff starts at twice the base', ENGINE),
  m('llm-past-date-negative', 'src/core/llm-call.ts', 'Math.max(0, t - now)', 't - now', 'a past Retry-After date is a negative wait', ENGINE),
  m('llm-no-timeout-exemption', 'src/core/llm-call.ts', "err.code !== 'ETIMEDOUT' && err.retryable !== false && this.retry", 'err.retryable !== false && this.retry', 'a silent server is retried', ENGINE),

  // ---- SSE framing (src/core/sse.ts)
  m('sse-no-final-flush', 'src/core/sse.ts', "this.parser.feed('\\n\\n');", '', 'a last event without its blank line is lost', SSE),
  m('sse-utf8-not-streamed', 'src/core/sse.ts', 'this.decoder.decode(chunk, { stream: true })', 'new TextDecoder().decode(chunk)', 'a character split over two chunks is garbled', SSE),
  m('sse-event-name-dropped', 'src/core/sse.ts', "onEvent(ev.event ?? '', ev.data)", "onEvent('', ev.data)", 'SSE event names dropped', SSE),
  m('sse-tail-bytes-dropped', 'src/core/sse.ts', 'if (rest) this.parser.feed(rest);', '', 'undecoded bytes at the end are dropped', SSE),

  // ---- dialects (src/core/providers/*)
  m('openai-done-ignored', 'src/core/providers/openai.ts', "if (data.trim() === '[DONE]') return { done: true };", '', '[DONE] does not end the stream', SSE),
  m('openai-index-ignored', 'src/core/providers/openai.ts', 'index: streamIndex(tc?.index, i),', 'index: i,', 'stream tool-call index ignored', SSE),
  m('openai-raw-bad-args', 'src/core/providers/openai.ts', "arguments: validJsonOr(c.args, '{}')", 'arguments: c.args', 'malformed arguments sent to the server as they are', [...PROVIDERS, ...ENGINE]),
  m('openai-stream-error-ignored', 'src/core/providers/openai.ts', "if (o?.error) return { error: openaiErrorMessage(data) ?? 'server reported an error in the stream' };", '', 'an error event in the stream is ignored', SSE),
  m('openai-parallel-flag-dropped', 'src/core/providers/openai.ts', `if (o.disableParallelToolCalls) s += ',"parallel_tool_calls":false';`, '', 'parallel_tool_calls:false never sent', PROVIDERS),
  m('openai-total-ignored', 'src/core/providers/openai.ts', 'totalTokens: count(u.total_tokens) || total(p, c)', 'totalTokens: total(p, c)', "the server's total_tokens ignored", PROVIDERS),
  m('openai-empty-id', 'src/core/providers/openai.ts', "id: typeof tc?.id === 'string' && tc.id ? tc.id : `call_${i + 1}`,", "id: typeof tc?.id === 'string' ? tc.id : '',", 'a call without id keeps an empty id', PROVIDERS),
  m('anthropic-no-merge', 'src/core/providers/anthropic.ts', 'if (last && last.role === role) last.blocks.push(block);', 'if (false) last.blocks.push(block);', 'same-role messages not merged', PROVIDERS),
  m('anthropic-no-leading-user', 'src/core/providers/anthropic.ts', "if (turns.length === 0 || turns[0]!.role !== 'user') turns.unshift", 'if (false) turns.unshift', 'history may start with an assistant turn', PROVIDERS),
  m('anthropic-no-result-first', 'src/core/providers/anthropic.ts', "if (t.role === 'user') t.blocks = [", "if (false) t.blocks = [", 'text before tool_result blocks', PROVIDERS),
  m('anthropic-empty-result', 'src/core/providers/anthropic.ts', 'const content = hasText(m.content) ? m.content : EMPTY_RESULT;', "const content = m.content ?? '';", 'empty tool_result content sent', PROVIDERS),
  m('anthropic-delta-input-ignored', 'src/core/providers/anthropic.ts', "if (typeof u.input_tokens === 'number') this.counts.input = count(u.input_tokens);", '', 'message_delta input counts ignored', SSE),
  m('anthropic-cache-not-counted', 'src/core/providers/anthropic.ts', 'const prompt = total(c.input, c.cacheRead ?? 0, c.cacheCreation ?? 0);', 'const prompt = c.input;', 'cached tokens left out of the context in use', PROVIDERS),
  m('anthropic-stop-ignored', 'src/core/providers/anthropic.ts', "return parts.length ? { done: true, reasoningParts: parts } : { done: true };", "return null;", 'message_stop does not end the stream', SSE),
  m('anthropic-delta-index-0', 'src/core/providers/anthropic.ts', "{ toolCalls: [{ index: streamIndex(o.index), args: d.partial_json }] }", '{ toolCalls: [{ index: 0, args: d.partial_json }] }', 'input_json_delta always goes to the first call', SSE),
  m('anthropic-raw-ids', 'src/core/providers/anthropic.ts', "wireId: (id) => id.replace(/[^A-Za-z0-9_-]/g, '_')", 'wireId: (id) => id', 'tool_use ids not made valid', PROVIDERS),
  m('responses-args-twice', 'src/core/providers/responses.ts', "if (this.argsSent.has(index) || typeof o.arguments !== 'string'", "if (typeof o.arguments !== 'string'", 'arguments streamed and then repeated whole', SSE),
  m('responses-completed-stop', 'src/core/providers/responses.ts', "const d = this.end(hasCall ? 'tool_calls' : 'stop', resp.usage);", "const d = this.end('stop', resp.usage);", 'a completed response with calls finishes as stop', SSE),
  m('responses-failed-ignored', 'src/core/providers/responses.ts', "return { error: errorText(resp.error) ?? errorText(o.error) ?? 'response failed' };", 'return null;', 'response.failed ignored', SSE),
  m('pairing-no-standin', 'src/core/providers/pairing.ts', 'export function pairToolCalls(messages: readonly Message[], policy: PairingPolicy): readonly Message[] {\n  return needsRepair(messages, policy) ? repairPairing(messages, policy) : messages;', 'export function pairToolCalls(messages: readonly Message[], policy: PairingPolicy): readonly Message[] {\n  return messages;', 'broken histories sent unrepaired', PROVIDERS),

  m('usage-count-raw', 'src/core/providers/util.ts', "return typeof n === 'number' && n >= 0 ? Math.min(Number.MAX_SAFE_INTEGER, Math.floor(n)) : 0;", "return typeof n === 'number' ? n : 0;", 'usage counts taken as they are (negative, fractional, huge)', SSE),
  m('stream-index-raw', 'src/core/providers/util.ts', 'return Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fallback;', "return typeof v === 'number' ? v : fallback;", 'stream indices taken as they are', SSE),
  m('limits-fraction-zero', 'src/core/tool-registry.ts', 'outputCap = Math.max(1, Math.floor(a.output_cap));', 'outputCap = Math.floor(a.output_cap);', 'a fractional output_cap becomes 0', ['test/fuzz/tool-dispatch.test.ts', ...ENGINE]),

  // ---- the tool batch (src/core/tool-batch.ts)
  m('batch-no-dispatch-hold', 'src/core/tool-batch.ts', 'this.remaining = calls.length + 1;', 'this.remaining = calls.length;', 'a synchronous completion ends the batch during dispatch', ENGINE),
  m('batch-double-respond', 'src/core/tool-batch.ts', 'if (s.asking !== asking || s.done || this.detached) return;', 'if (s.done || this.detached) return;', 'a permission answered twice runs the tool twice', ENGINE),
  m('batch-allow-always-forgotten', 'src/core/tool-batch.ts', "if (d === 'allow_always') t.remembered = 'allow';", '', 'allow_always not remembered', ENGINE),
  m('batch-deny-always-forgotten', 'src/core/tool-batch.ts', "if (d === 'deny_always') t.remembered = 'deny';", '', 'deny_always not remembered', ENGINE),
  m('batch-no-gate', 'src/core/tool-batch.ts', "if (t.def.noPrompt || t.remembered === 'allow') { this.run(s); return; }", '{ this.run(s); return; }', 'gated tools run without asking', ENGINE),
  m('batch-no-policy-runs', 'src/core/tool-batch.ts', "if (!ask) { s.fail('denied: no permission policy'); return; }", 'if (!ask) { this.run(s); return; }', 'no permission callback: gated tools run', ENGINE),
  m('batch-timeout-ok', 'src/core/tool-batch.ts', "this.batch.finish(this, clampOutput(text, this.outputCap), this.timedOut ? 'timedout' : 'ok');", "this.batch.finish(this, clampOutput(text, this.outputCap), 'ok');", 'output after a timeout counts as success', ['test/core/agent-builtins.test.ts', ...ENGINE]),
  m('batch-cancel-no-abort', 'src/core/tool-batch.ts', "      this.finish(s, `[tool failed: ${reason}]`, 'failed');\n      s.controller.abort(new Error(reason));", "      this.finish(s, `[tool failed: ${reason}]`, 'failed');", 'cancel does not abort running tools', ENGINE),
  m('batch-async-throw-lost', 'src/core/tool-batch.ts', '(r as Promise<void>).then(undefined, (e: unknown) => s.fail(errorText(e)));', '', 'a rejected async invoke is never reported', ENGINE),
  m('batch-no-timeout', 'src/core/tool-batch.ts', 'if (s.timeoutMs > 0 && this.ctx.host.setTimer) {', 'if (false) {', 'tool timeouts never armed', ENGINE),
  m('batch-limiter-ignored', 'src/core/tool-batch.ts', 'if (wait > 0 && this.ctx.host.setTimer) {\n        const t', 'if (false) {\n        const t', 'the tool limiter never delays a call', ENGINE),

  // ---- the engine (src/core/agent.ts, src/core/turn.ts)
  m('agent-notify-first-only', 'src/core/agent.ts', "const text = this.notifyQueue.join('\\n\\n');", 'const text = this.notifyQueue[0]!;', 'queued notifications after the first are lost', ENGINE),
  m('agent-notify-before-done', 'src/core/agent.ts', "    this.emit(end.status !== 0 && this.err ? { type: 'turn_done', status: end.status, error: this.err } : { type: 'turn_done', status: end.status });\n    this.afterTurn(turn.origin, end.status);", "    this.afterTurn(turn.origin, end.status);\n    this.emit(end.status !== 0 && this.err ? { type: 'turn_done', status: end.status, error: this.err } : { type: 'turn_done', status: end.status });", 'notifications start before onTurnDone', ENGINE),
  m('agent-max-iter-off-by-one', 'src/core/turn.ts', 'if (maxIterations > 0 && ++rounds >= maxIterations)', 'if (maxIterations > 0 && ++rounds > maxIterations)', 'one request more than maxIterations', ENGINE),
  m('agent-no-supersede', 'src/core/turn.ts', 'if (matchesAny(ctx.conn.cfg.volatileTools, call.name)) supersede(ctx.history, call.name);', '', 'volatile results never superseded', ENGINE),
  m('turn-emit-goes-on', 'src/core/turn.ts', 'return (e) => { ctx.emit(e); signal.throwIfAborted(); };', 'return (e) => { ctx.emit(e); };', 'a turn cancelled from a callback goes on', [...ENGINE, 'test/core/agent-events.test.ts']),
  m('turn-cancel-leaves-calls', 'src/core/turn.ts', "    else batch.cancel('cancelled by user');", '    else batch.detach();', 'a cancel leaves tool calls without results', [...ENGINE, 'test/core/agent-events.test.ts']),
  m('turn-autocompact-failed', 'src/core/agent.ts', '(status === 0 || status === ECANCELED) && this.overAutocompactThreshold()', 'this.overAutocompactThreshold()', 'a failed turn is compacted at its end', ['test/core/agent-events.test.ts']),
  m('batch-permission-not-withdrawn', 'src/core/tool-batch.ts', '      s.stopAsking(reason);\n', '', 'a cancelled permission request is not told why', ['test/core/agent-events.test.ts']),
  m('llm-tps-not-measured', 'src/core/llm-call.ts', 'return n > 1 && ms > 0 ? ((n - 1) * 1000) / ms : 0;', 'return 0;', 'no tokens per second from the stream', ['test/core/agent-events.test.ts']),

  // ---- redaction (src/host/redact.ts)
  m('redact-no-cut-secret', 'src/host/redact.ts', 'if (out.endsWith(s.slice(0, n))) {', 'if (false) {', 'a secret cut at the end of a log line is kept', REDACT),
  m('redact-cut-min-length', 'src/host/redact.ts', 'for (let n = s.length - 1; n >= MIN_SECRET_LENGTH; n--) {', 'for (let n = s.length - 1; n > MIN_SECRET_LENGTH; n--) {', 'a 4-character cut start is kept', REDACT),
  m('redact-shortest-first', 'src/host/redact.ts', '.sort((a, b) => b.length - a.length);', '.sort((a, b) => a.length - b.length);', 'a secret containing another is masked in part', REDACT),

  // ---- the Lua runtime (src/lua/*)
  m('lua-deadline-10x', 'src/lua/scheduler.ts', 'if (co.owner.budget.used + elapsed > co.owner.budget.limit) {', 'if (co.owner.budget.used + elapsed > co.owner.budget.limit * 10) {', 'the CPU deadline is ten times the budget', LUA),
  m('lua-deadline-tenth', 'src/lua/scheduler.ts', 'if (co.owner.budget.used + elapsed > co.owner.budget.limit) {', 'if (co.owner.budget.used + elapsed > co.owner.budget.limit / 10) {', 'the CPU deadline is a tenth of the budget', LUA),
  m('lua-budget-not-summed', 'src/lua/scheduler.ts', 'co.owner.budget.used += performance.now() - start;', '', 'CPU time is not summed across resumes', LUA),
  m('lua-no-slices', 'src/lua/scheduler.ts', 'if (elapsed > SLICE_MS && m._lua_isyieldable(L)) {', 'if (false) {', 'no time slices: one call starves the others', LUA),
  m('lua-no-step-hook', 'src/lua/scheduler.ts', 'm._lua_sethook(L, this.sb.hookPtr, LUA_MASKCOUNT, 1);', '', 'a deadline raised in a comparator can be caught by pcall', LUA),
  m('lua-http-any-scheme', 'src/lua/api-http.ts', "if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') return", 'if (false) return', 'http.get takes file:/data: URLs', LUA),
  m('lua-http-no-per-call-limit', 'src/lua/api-http.ts', 'if (inv.httpTotal >= HTTP_MAX_PER_CALL) return', 'if (false) return', 'no limit on requests per call', LUA),
  m('lua-http-no-in-flight-limit', 'src/lua/api-http.ts', 'if (p.httpInFlight >= HTTP_MAX_IN_FLIGHT) return', 'if (false) return', 'no limit on requests in flight', LUA),
  m('lua-spawn-after-complete', 'src/lua/api-tasks.ts', "if (inv.reported) throw new LuaError('clm.spawn: the tool call has already completed');", '', 'tasks may start after the call completed', LUA),
  m('lua-json-object-for-array', 'src/lua/json.ts', 'if (sequence && maxInt === entries.length) {', 'if (false) {', 'json.encode never makes arrays', LUA),
  m('lua-json-unsorted', 'src/lua/json.ts', '  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));\n', '', 'json.encode object keys in table order', LUA),
  m('lua-json-null-nil', 'src/lua/json.ts', 'if (v === null) { m._lua_pushlightuserdata(L, sb.nullPtr); return; }', 'if (v === null) { m._lua_pushnil(L); return; }', 'JSON null decodes to nil', LUA),
  m('lua-json-ints-as-floats', 'src/lua/json.ts', 'if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) m._lua_pushinteger(L, BigInt(v));\n      else m._lua_pushnumber(L, v);', 'm._lua_pushnumber(L, v);', 'integers decode to floats', LUA),
  m('lua-json-no-size-limit', 'src/lua/json.ts', 'if (bytes.length > JSON_DECODE_LIMIT) {', 'if (false) {', 'json.decode takes any size', LUA),
  m('lua-json-no-encode-budget', 'src/lua/json.ts', "  if (budget.left < 0) throw new LuaError('not enough memory');\n", '', 'json.encode may build text past the memory cap', LUA),
];
