// The escape corpus as an unprivileged user (nobody, uid 65534, through setpriv), in each mode
// (escape-judge.ts). It needs root to change user: CI runs as root; elsewhere it is skipped.

import { corpusTests } from './escape-judge.js';

corpusTests(true);
