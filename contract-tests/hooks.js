/*
 * dredd hooks: make every transaction a real request against a server seeded
 * with the demo organization, and check every response body against the
 * contract's JSON schema (dredd alone checks neither; see docs/ARCHITECTURE.md).
 *
 * - Each transaction maps to an operation (path + method) of openapi/.
 * - Operations still pending (src/http/routes.ts) are skipped, and reported.
 * - Every other transaction needs a scenario in ./scenarios/ for its status;
 *   a missing scenario fails the run, so no operation can go unexercised.
 * - A scenario for an error status names the Zulip error it provokes (code,
 *   message, any extra fields: scenarios/core.js `refusal`); after the
 *   request the response body must carry exactly those values, so an error
 *   scenario cannot pass on some other documented error.
 * - Every error response's code must be one its operation declares at that
 *   status (generated/errors.ts, built into dist/; ADR 0036): the schema
 *   alone admits any code where it says CodedError.
 * - Form bodies come from the media type's example (JSON-encoding non-string
 *   fields as Zulip clients do), sent urlencoded or multipart as the
 *   transaction's media type says; scenarios then adjust them.
 */
'use strict';
const hooks = require('hooks');
const path = require('node:path');
const spec = require(path.join(__dirname, '..', 'dist', 'openapi.dereferenced.json'));
const { PENDING_OPERATIONS } = require(path.join(__dirname, '..', 'dist', 'src', 'http', 'routes.js'));
const { OPERATION_ERRORS } = require(path.join(__dirname, '..', 'dist', 'generated', 'errors.js'));
const { scenarios, setup } = require('./scenarios/index');
const { toJsonSchema } = require('./json-schema');

const BASE = process.env.DREDD_SERVER; // http://127.0.0.1:PORT
const state = { base: BASE, users: {} };
const skipped = new Set();

function operationOf(t) {
  const template = t.name.split(' > ')[0];
  const item = spec.paths[template];
  const op = item && item[t.request.method.toLowerCase()];
  if (!op) throw new Error(`no operation for transaction ${t.name}`);
  return { template, op };
}

function encode(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Sets the request body from a plain object of fields, in the transaction's media type. */
function setBody(t, fields) {
  const type = (t.request.headers['Content-Type'] || '').split(';')[0];
  if (type === 'multipart/form-data') {
    const boundary = '----parleydredd' + Math.random().toString(16).slice(2);
    let body = '';
    // A file part whose content is a Buffer (an image) makes the body binary: sent base64-encoded to dredd.
    const chunks = [];
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) continue;
      if (v && typeof v === 'object' && v.__file && Buffer.isBuffer(v.content)) {
        chunks.push(
          Buffer.from(body),
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${k}"; filename="${v.filename}"\r\nContent-Type: ${v.contentType}\r\n\r\n`,
          ),
          v.content,
        );
        body = '\r\n';
      } else if (v && typeof v === 'object' && v.__file) {
        body += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"; filename="${v.filename}"\r\nContent-Type: ${v.contentType}\r\n\r\n${v.content}\r\n`;
      } else {
        body += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${encode(v)}\r\n`;
      }
    }
    body += `--${boundary}--\r\n`;
    t.request.headers['Content-Type'] = `multipart/form-data; boundary=${boundary}`;
    if (chunks.length) {
      t.request.body = Buffer.concat([...chunks, Buffer.from(body)]).toString('base64');
      t.request.bodyEncoding = 'base64';
    } else {
      t.request.body = body;
    }
  } else {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) params.append(k, encode(v));
    t.request.headers['Content-Type'] = 'application/x-www-form-urlencoded';
    t.request.body = params.toString();
  }
}

function setQuery(t, query) {
  const [p] = t.fullPath.split('?');
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.append(k, encode(v));
  const s = qs.toString();
  t.fullPath = s ? `${p}?${s}` : p;
  t.request.uri = t.fullPath;
}

function authAs(t, user) {
  if (user === null) delete t.request.headers.Authorization;
  else t.request.headers.Authorization = 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64');
}

hooks.beforeAll(async (transactions, done) => {
  try {
    await setup(state);
    done();
  } catch (err) {
    hooks.log(`setup failed: ${err.stack}`);
    process.exit(1);
  }
});

hooks.beforeEach((t, done) => {
  const { template, op } = operationOf(t);
  if (PENDING_OPERATIONS.includes(op.operationId)) {
    t.skip = true;
    skipped.add(op.operationId);
    return done();
  }
  const status = t.expected.statusCode;
  const transport = transportScenario(op, status);
  const scenario = (scenarios[op.operationId] && scenarios[op.operationId][status]) || transport;
  if (!scenario) {
    t.fail = `no scenario for ${op.operationId} ${status}: add one under contract-tests/scenarios/`;
    return done();
  }
  if (Number(status) >= 400 && scenario !== transport && !scenario.expected) {
    t.fail = `the scenario for ${op.operationId} ${status} names no error: make it with refusal() (contract-tests/scenarios/core.js)`;
    return done();
  }
  t.expectedError = scenario.expected;
  t.scenarioAfter = scenario.after;
  const media = op.requestBody && op.requestBody.content;
  const type = (t.request.headers['Content-Type'] || '').split(';')[0];
  const example = (media && media[type] && media[type].example) || {};
  const req = {
    op,
    template,
    body: { ...example },
    query: {},
    pathParams: {},
    user: state.users.owner,
  };
  Promise.resolve(scenario(req, state))
    .then(() => {
      let p = template;
      for (const [k, v] of Object.entries(req.pathParams)) p = p.replace(`{${k}}`, encodeURIComponent(v));
      // A parameter no scenario set (the shared transport ones set none) takes
      // the contract's example: a literal {user_id} would be routed as an email
      // beside the sibling template /users/{email}.
      for (const param of op.parameters || []) {
        const example = param.example !== undefined ? param.example : param.schema && param.schema.example;
        if (param.in === 'path' && example !== undefined) p = p.replace(`{${param.name}}`, encodeURIComponent(example));
      }
      t.fullPath = '/api/v1' + p;
      t.request.uri = t.fullPath;
      if (req.rawBody !== undefined) {
        // A service's own body (incoming webhooks): sent as is, in its own media type.
        t.request.headers['Content-Type'] = req.contentType || 'application/json';
        t.request.body = req.rawBody;
      } else if (media) setBody(t, req.body);
      setQuery(t, req.query);
      authAs(t, req.user);
      if (scenario === transport) t.expectedError = transport.apply(t);
      done();
    })
    .catch((err) => {
      t.fail = `scenario ${op.operationId} ${status} failed: ${err.message}`;
      done();
    });
});

/**
 * Responses every operation shares because the body parser gives them before
 * any handler runs (openapi/components/common.yaml#/responses): 413, 415, and
 * the 400 of operations whose only 400 is an unreadable body. One scenario
 * each, whatever the operation.
 */
function transportScenario(op, status) {
  const response = op.responses[status];
  const shared = /^(The request body could not be read|The request body is larger|The body's Content-Encoding)/;
  if (!response || !shared.test(response.description || '')) return null;
  const scenario = () => undefined;
  scenario.apply = (t) => {
    const multipart = /^multipart\//.test(t.request.headers['Content-Type'] || '');
    const error = (msg) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
    if (status === '413') {
      const fields = {};
      for (let i = 0; i <= 1000; i++) fields[`f${i}`] = '1';
      setBody(t, fields);
      return error('Request body is too large');
    }
    if (status === '415') {
      if (multipart) {
        t.request.headers['Content-Encoding'] = 'zstd';
        return error('Content-Encoding is not supported for multipart bodies');
      }
      t.request.headers['Content-Type'] = 'application/x-www-form-urlencoded; charset=ebcdic';
      t.request.body = 'a=1';
      return error('Unsupported charset: ebcdic');
    }
    t.request.headers['Content-Type'] = 'multipart/form-data';
    t.request.body = 'not multipart';
    return error('Malformed multipart body');
  };
  return scenario;
}

hooks.beforeEachValidation((t, done) => {
  const ct = t.real && t.real.headers && t.real.headers['content-type'];
  if (ct) t.real.headers['content-type'] = ct.split(';')[0];
  if (t.skip) return done();
  const { op } = operationOf(t);
  const response = op.responses[t.expected.statusCode];
  const schema = response && response.content && response.content['application/json'] && response.content['application/json'].schema;
  if (schema) t.expected.bodySchema = toJsonSchema(schema);
  done();
});

/** A scenario's `after` undoes what it changed to provoke its response (scenarios/health.js). */
hooks.afterEach((t, done) => {
  if (!t.scenarioAfter) return done();
  Promise.resolve(t.scenarioAfter())
    .then(() => done())
    .catch((err) => {
      t.fail = `after ${t.name}: ${err.message}`;
      done();
    });
});

/** An error scenario's response carries the error it names: each expected field, value for value. */
hooks.afterEach((t, done) => {
  if (t.skip || t.fail || !t.expectedError || !t.real) return done();
  let body;
  try {
    body = JSON.parse(t.real.body);
  } catch {
    body = null;
  }
  const wrong = Object.entries(t.expectedError).filter(([k, v]) => !body || JSON.stringify(body[k]) !== JSON.stringify(v));
  if (wrong.length) {
    const { operationId } = operationOf(t).op;
    t.fail = `${operationId} ${t.expected.statusCode}: expected ${JSON.stringify(t.expectedError)}, got ${t.real.body}`;
  }
  done();
});

/** An error response carries a code its operation declares at that status. */
hooks.afterEach((t, done) => {
  if (t.skip || t.fail || !t.real || t.real.statusCode < 400) return done();
  let code;
  try {
    code = JSON.parse(t.real.body).code;
  } catch {
    code = undefined;
  }
  const { operationId } = operationOf(t).op;
  const declared = (OPERATION_ERRORS[operationId] || {})[t.real.statusCode] || [];
  if (!declared.includes(code)) {
    t.fail = `${operationId} ${t.real.statusCode}: code ${code} is not one the operation declares (${declared.join(', ') || 'none'})`;
  }
  done();
});

hooks.afterAll((transactions, done) => {
  if (skipped.size) hooks.log(`pending operations skipped: ${[...skipped].sort().join(', ')}`);
  done();
});
