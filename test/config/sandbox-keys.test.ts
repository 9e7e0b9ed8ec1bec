// The sandbox keys of config.lua: `sandbox`, `sandbox_writable`, `sandbox_network`, `sandbox_unreadable`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, validateValues } from '../../src/config/index.js';

const ctx = { label: 'config.lua', prefix: '' };
const bad = (raw: Record<string, unknown>, message: string) =>
  assert.throws(
    () => validateValues(raw, ctx),
    (e: unknown) => e instanceof ConfigError && e.message === message,
  );

test('the sandbox keys are read, typed', () => {
  const v = validateValues(
    { sandbox: 'read-only', sandbox_writable: ['~/out', '/data'], sandbox_network: 'true', sandbox_unreadable: ['~/.vault/'] },
    ctx,
  );
  assert.equal(v.sandbox, 'read-only');
  assert.deepEqual(v.sandboxWritable, ['~/out', '/data']);
  assert.equal(v.sandboxNetwork, true);
  assert.deepEqual(v.sandboxUnreadable, ['~/.vault/']);
  assert.equal(validateValues({}, ctx).sandbox, undefined);
  assert.deepEqual(validateValues({ sandbox_writable: {} }, ctx).sandboxWritable, []);
});

test('wrong values name the key', () => {
  bad({ sandbox: 'open' }, 'config.lua: sandbox must be one of "read-only", "workspace-write", "full" (got "open")');
  bad({ sandbox: true }, 'config.lua: sandbox must be a string (got true)');
  bad({ sandbox_writable: '/tmp' }, 'config.lua: sandbox_writable must be a list of paths (got "/tmp")');
  bad({ sandbox_writable: [1] }, 'config.lua: sandbox_writable[1] must be a string (got 1)');
  bad({ sandbox_network: 'yes' }, 'config.lua: sandbox_network must be true or false (got "yes")');
});
