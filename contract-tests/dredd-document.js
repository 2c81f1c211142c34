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

/*
 * dredd itself needs only the transactions: each operation's parameters, media
 * types and statuses. The hooks (hooks.js) build every request body from the
 * contract's examples and check every response body against the contract's
 * schema, both read from dist/openapi.dereferenced.json, so the schemas and
 * examples dredd would parse are left out: parsing the whole dereferenced
 * document (2 MB) took dredd about 170 s before its first request, this one a
 * few seconds.
 */
const bare = (content) => {
  for (const media of Object.values(content || {})) {
    media.schema = {};
    delete media.example;
    delete media.examples;
    delete media.encoding;
  }
};
/*
 * A required parameter sent as JSON (`content: application/json`, such as
 * matches_narrow's msg_ids) has its example inside the media type, where
 * dredd does not look: it wants an example beside a schema. The scenario sets
 * the real value; dredd only needs one to accept the operation.
 */
const plainJsonParameter = (param) => {
  const media = param.content && param.content['application/json'];
  if (!param.required || !media) return;
  delete param.content;
  param.schema = { type: 'string' };
  param.example = JSON.stringify(media.example !== undefined ? media.example : []);
};
for (const item of Object.values(spec.paths)) {
  for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
    if (!item[method]) continue;
    for (const param of item[method].parameters || []) plainJsonParameter(param);
    for (const response of Object.values(item[method].responses)) bare(response.content);
    if (item[method].requestBody) bare(item[method].requestBody.content);
  }
}
spec.components = { securitySchemes: spec.components.securitySchemes };
fs.writeFileSync(process.argv[2], JSON.stringify(spec));
