// Every limit of the plugin runtime in one place (the values clm-tool(5) gives).

/** Private memory of one plugin state. */
export const MEMORY_LIMIT = 8 * 1024 * 1024;
/** A call is refused when less than this is left under the cap. */
export const LOW_MEMORY_RESERVE = 256 * 1024;
/** Plugin files larger than this are refused (parsing is not covered by the count hook). */
export const MAX_PLUGIN_BYTES = 1024 * 1024;
/** CPU time for a plugin's top-level code. */
export const LOAD_BUDGET_MS = 500;
/** CPU time of one tool call (its main coroutine and tasks) when timeout_ms is not given. */
export const DEFAULT_CALL_BUDGET_MS = 30_000;
/** VM instructions between two checks of the deadline / time slice. */
export const HOOK_COUNT = 10_000;
/** Longest stretch of Lua code between two chances for other work to run. */
export const SLICE_MS = 20;
/** A single resume running this long cannot be Lua code (that is sliced): it is a runaway C call. */
export const DEFAULT_WATCHDOG_MS = 1000;
/** A plugin whose calls run away this many times is not reloaded again. */
export const MAX_RUNAWAYS = 3;
export const HTTP_MAX_IN_FLIGHT = 8;
export const HTTP_MAX_PER_CALL = 128;
/** One http.* request, from sending to the last byte of its body (a tool's call deadline may end it sooner). */
export const HTTP_TIMEOUT_MS = 20_000;
/** Response bodies above this fail the request (a state could not hold much more anyway). */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
export const WAIT_ANY_MAX = 128;
export const SLEEP_MAX_MS = 30_000;
export const JSON_DECODE_LIMIT = 2 * 1024 * 1024;
