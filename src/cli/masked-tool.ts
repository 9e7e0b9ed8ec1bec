// What a tool returns goes into the conversation: to the model's provider, into the session file
// and onto the screen. A tool that reads secrets.lua or config.lua, prints the environment, or
// echoes a request back would hand the run's secrets (every provider's API key, every
// clm.secrets value) to a third party. Each tool is wrapped so its output, failure text and
// notifications have those values masked before the engine sees them. Bytes are masked as bytes,
// so binary detection and the output cap still see what the tool wrote.

import type { ToolDef, ToolInvocation } from '../core/types.js';
import type { Secrets } from '../host/redact.js';

/** The tool with every secret of the run's list masked in what it reports (the list as it is at each report). */
export function maskedTool(def: ToolDef, secrets: Secrets): ToolDef {
  return {
    ...def,
    // Without a secret to mask (no keys configured), the call goes through as it is.
    invoke: (inv) => def.invoke(secrets.empty ? inv : maskedInvocation(inv, secrets)),
  };
}

function maskedInvocation(inv: ToolInvocation, secrets: Secrets): ToolInvocation {
  return {
    get id() {
      return inv.id;
    },
    get name() {
      return inv.name;
    },
    get args() {
      return inv.args;
    },
    get outputCap() {
      return inv.outputCap;
    },
    get timeoutMs() {
      return inv.timeoutMs;
    },
    get signal() {
      return inv.signal;
    },
    get done() {
      return inv.done;
    },
    complete: (output) => inv.complete(typeof output === 'string' ? secrets.mask(output) : secrets.maskBytes(output)),
    fail: (message) => inv.fail(secrets.mask(message)),
    notify: (t) => inv.notify(secrets.mask(t)),
    progress: (t) => inv.progress?.(secrets.mask(t)),
  };
}
