// The escape corpus as this user, in each mode (escape-judge.ts).

import { corpusTests } from './escape-judge.js';

corpusTests(false);
