// Agent profile over the top level, as clm-config(5) documents. Every key except `agent` is taken from the profile when it sets it:
// - tables with named keys (providers, tools, providers.x.models, ...) are merged key by key,
//   recursively, so a profile can change one provider's url or add one plugin's config;
// - lists (volatile_tools, mcp_servers, a stdio command) and plain values replace the top-level
//   value whole; an empty table {} in a profile therefore clears a list but leaves a table as is.

import { isTable, setKey, type Table } from './validate.js';

function deepMerge(base: Table, over: Table): Table {
  const out: Table = {};
  for (const k of Object.keys(base)) setKey(out, k, base[k]);
  for (const k of Object.keys(over)) {
    const b = out[k];
    const o = over[k];
    const bothTables = isTable(b) && isTable(o) && Object.hasOwn(out, k);
    setKey(out, k, bothTables ? deepMerge(b, o) : o);
  }
  return out;
}

/** The effective table: `top` with `profile` merged over it (the profile's `agent` key is ignored). */
export function mergeProfile(top: Table, profile: Table): Table {
  const p: Table = {};
  for (const k of Object.keys(profile)) if (k !== 'agent') setKey(p, k, profile[k]);
  return deepMerge(top, p);
}
