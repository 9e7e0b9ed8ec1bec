// The permission gate of a tool batch: what decides whether each call runs. The promise form
// (callbacks.permission) decides every call itself; the clm_agent(3) callback (onPermission) gets
// this layer around it: no-prompt tools run, `allow_always` / `deny_always` are remembered per
// registration, and without a callback a gated call is denied.

import { messageOf } from './errors.js';
import type { ToolRegistry } from './tool-registry.js';
import type { AgentCallbacks, PermissionAnswer, PermissionCallInfo, PermissionDecision } from './types.js';

/** The denial of a call whose permission check failed. */
export const checkFailed = (e: unknown): PermissionAnswer => ({ allow: false, reason: `denied: permission check failed: ${messageOf(e)}` });

/** Decide `call`, calling `decided` once (at once, or later). */
export type Gate = (call: PermissionCallInfo, signal: AbortSignal, decided: (a: PermissionAnswer) => void) => void;

const ALLOW: PermissionAnswer = { allow: true };

/** The answer a decision gives; `*_always` remembered on the registration. */
function remember(t: { remembered?: 'allow' | 'deny' } | undefined, d: PermissionDecision): PermissionAnswer {
  if (t && d === 'allow_always') t.remembered = 'allow';
  if (t && d === 'deny_always') t.remembered = 'deny';
  return d === 'allow_once' || d === 'allow_always' ? ALLOW : { allow: false, reason: 'denied by user' };
}

export function gateOf(cb: AgentCallbacks, registry: ToolRegistry): Gate {
  const hook = cb.permission;
  // A hook that throws at once is the batch's to report (it calls the gate inside a try).
  if (hook) return (call, signal, decided) => void hook(call, signal).then(decided, (e) => decided(checkFailed(e)));
  const ask = cb.onPermission;
  return (call, signal, decided) => {
    const t = registry.get(call.name);
    if (!call.gated || t?.remembered === 'allow') return decided(ALLOW);
    if (t?.remembered === 'deny') return decided({ allow: false, reason: 'denied by user (remembered)' });
    if (!ask) return decided({ allow: false, reason: 'denied: no permission policy' });
    let answered = false;
    // The seed's respond() acts at once: a call allowed inside onPermission starts before it returns.
    ask({
      id: call.id,
      name: call.name,
      args: call.args,
      signal,
      respond: (d: PermissionDecision) => {
        if (answered || signal.aborted) return;
        answered = true;
        decided(remember(t, d));
      },
    });
  };
}
