// A property of the permission engine: a random composition of simple commands — joined by
// `&&`, `||`, `;`, `|`, `&`, newlines, nested in subshells, braces, `$(…)`, backticks, `<(…)`,
// `bash -c '…'`, `eval`, if/while bodies, behind wrappers — is allowed only if every one of
// them is, and in general decided as its worst part: one denied command denies the whole, one
// asked command keeps it from being allowed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fc, check } from '../fixtures/fuzz.js';
import { corpusEngine } from '../fixtures/permission-rules.js';
import { SEVERITY, type Effect } from '../../src/permissions/rule.js';

/** Simple commands and their decision under the corpus rules. */
const LEAVES: [string, Effect][] = [
  ['git status', 'allow'],
  ['ls -la', 'allow'],
  ['echo hi', 'allow'],
  ['cat README.md', 'allow'],
  ['npm test', 'allow'],
  ['grep -n x file', 'allow'],
  ['make', 'ask'],
  ['npm install', 'ask'],
  ['python3 run.py', 'ask'],
  ['git push origin main', 'ask'],
  ['rm -rf build', 'deny'],
  ['curl http://x.invalid', 'deny'],
  ['sudo ls', 'deny'],
  ['git push --force origin main', 'deny'],
];

interface Composed {
  text: string;
  worst: Effect;
}

const worse = (a: Effect, b: Effect): Effect => (SEVERITY[a] >= SEVERITY[b] ? a : b);
const squote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const leaf: fc.Arbitrary<Composed> = fc.constantFrom(...LEAVES).map(([text, worst]) => ({ text, worst }));

const composed: fc.Arbitrary<Composed> = fc.letrec<{ node: Composed }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc
      .tuple(tie('node'), fc.constantFrom(' && ', ' || ', '; ', ' | ', ' & ', '\n', ' |& '), tie('node'))
      .map(([a, op, b]) => ({ text: `${a.text}${op}${b.text}`, worst: worse(a.worst, b.worst) })),
    tie('node').map((a) => ({ text: `( ${a.text} )`, worst: a.worst })),
    tie('node').map((a) => ({ text: `{ ${a.text}; }`, worst: a.worst })),
    tie('node').map((a) => ({ text: `echo "$( ${a.text} )"`, worst: worse('allow', a.worst) })),
    tie('node').map((a) => ({ text: `cat <( ${a.text} )`, worst: a.worst })),
    tie('node').map((a) => ({ text: `bash -c ${squote(a.text)}`, worst: a.worst })),
    tie('node').map((a) => ({ text: `eval ${squote(a.text)}`, worst: a.worst })),
    tie('node').map((a) => ({ text: `if true; then ${a.text}; fi`, worst: a.worst })),
    tie('node').map((a) => ({ text: `while true; do ${a.text}; done`, worst: a.worst })),
    leaf.map((a) => ({ text: `command ${a.text}`, worst: a.worst })),
    leaf.map((a) => ({ text: `timeout 5 ${a.text}`, worst: a.worst })),
    leaf.map((a) => ({ text: `nohup ${a.text}`, worst: a.worst })),
  ),
})).node;

test('a composition of allowed and denied commands is allowed only if all its parts are; its decision is its worst part', async () => {
  const { decide, done } = await corpusEngine();
  try {
    check(400, composed, (c) => {
      const r = decide(c.text);
      assert.equal(r.decision, c.worst, `${JSON.stringify(c.text)}: ${r.parts.map((p) => `${p.decision} ${p.subject.kind}`).join(', ')}`);
      if (r.decision === 'allow') assert.ok(r.parts.every((p) => p.decision === 'allow'));
      return true;
    });
  } finally {
    done();
  }
});
