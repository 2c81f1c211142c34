/*
 * Writes the contract dredd runs against: dist/openapi.dereferenced.json
 * without the 429 (RateLimited) and 503 (Unavailable) responses every
 * operation documents.
 *
 * dredd's server runs with RATE_LIMITS=off (dredd alone sends far more than
 * 200 requests a minute as one user), so no scenario could provoke that
 * answer: a 429 transaction could only fail or be skipped. The response is
 * covered by jest instead, against servers with the limits on:
 * test/rate-limits.test.ts provokes each limit (per user, per address, per
 * username) over real HTTP and checks every 429 body against the contract
 * (test/support/contract.ts), its headers, and the limits of two server
 * processes sharing one database.
 *
 * A 503 needs the database gone mid-request; test/transaction.test.ts
 * provokes it against real databases (a connection killed before and
 * during COMMIT).
 *
 *   node contract-tests/dredd-document.js <output.json>
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const spec = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'dist', 'openapi.dereferenced.json'), 'utf8'));
let removed = 0;
for (const item of Object.values(spec.paths)) {
  for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
    if (item[method] && item[method].responses['429']) {
      delete item[method].responses['429'];
      removed++;
    }
    // get-health keeps its own 503 (a failed check), which scenarios/health.js provokes.
    if (item[method] && item[method].operationId !== 'get-health') delete item[method].responses['503'];
  }
}
if (!removed) throw new Error('no 429 response found: is the contract dredd-document.js expects still the one in openapi/?');
fs.writeFileSync(process.argv[2], JSON.stringify(spec));
