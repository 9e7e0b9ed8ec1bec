// What a tool returns goes into the conversation: to the model's provider, into the session file
// and onto the screen. A tool that reads secrets.lua or config.lua, prints the environment, or
// echoes a request back would hand the run's secrets (every provider's API key, every
// clm.secrets value) to a third party. Each tool is wrapped so its output, failure text and
// notifications have those values masked before the engine sees them. Bytes are masked as bytes,
// so binary detection and the output cap still see what the tool wrote.

import type { ToolDef, ToolInvocation } from '../core/types.js';
import { MASK, maskSecrets, usableSecrets } from '../host/redact.js';

const MASK_BYTES = Buffer.from(MASK);

/** The tool with every secret masked in what it reports; `secrets` is read at each call (and at each later notification). */
export function maskedTool(def: ToolDef, secrets: () => readonly string[]): ToolDef {
  return {
    ...def,
    // Without a secret to mask (no keys configured), the call goes through as it is.
    invoke: (inv) => def.invoke(usableSecrets(secrets()).length ? maskedInvocation(inv, secrets) : inv),
  };
}

function maskedInvocation(inv: ToolInvocation, secrets: () => readonly string[]): ToolInvocation {
  const text = (s: string) => maskSecrets(s, secrets());
  return {
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
    complete: (output) => inv.complete(typeof output === 'string' ? text(output) : maskBytes(output, secrets())),
    fail: (message) => inv.fail(text(message)),
    notify: (t) => inv.notify(text(t)),
  };
}

/** maskSecrets on bytes, for output that may not be text: every secret's UTF-8 bytes are replaced. */
export function maskBytes(b: Uint8Array, secrets: readonly string[]): Uint8Array {
  let buf: Buffer | null = null;
  for (const s of usableSecrets(secrets)) {
    const needle = Buffer.from(s);
    const view = buf ?? Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    let at = view.indexOf(needle);
    if (at < 0) continue;
    buf = view;
    const parts: Buffer[] = [];
    let from = 0;
    while (at >= 0) {
      parts.push(buf.subarray(from, at), MASK_BYTES);
      from = at + needle.length;
      at = buf.indexOf(needle, from);
    }
    parts.push(buf.subarray(from));
    buf = Buffer.concat(parts);
  }
  // Nothing masked: the tool's own bytes.
  return buf ?? b;
}
