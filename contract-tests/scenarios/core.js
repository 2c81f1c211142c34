'use strict';
/*
 * One scenario per (operationId, status): how to provoke that response from
 * the demo organization. A scenario edits `req` ({body, query, pathParams,
 * user}); `state.users` holds the demo cast with their API keys. A scenario
 * for an error status is made with `refusal`, which names the Zulip error it
 * provokes: hooks.js checks the response's code and message against it.
 */
const path = require('node:path');
const { DEMO_PASSWORD } = require(path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'demo.js'));

const CAST = {
  owner: 'olivia@example.com',
  admin: 'adam@example.com',
  moderator: 'mona@example.com',
  member: 'max@example.com',
  member2: 'mia@example.com',
  guest: 'gus@example.com',
};

async function api(state, method, apiPath, fields, user) {
  const headers = {};
  if (user) headers.Authorization = 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64');
  let url = `${state.base}/api/v1${apiPath}`;
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields || {})) form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  const init = { method, headers };
  if (method === 'GET') url += `?${form}`;
  else init.body = form;
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

async function setup(state) {
  for (const [role, email] of Object.entries(CAST)) {
    const res = await api(state, 'POST', '/fetch_api_key', { username: email, password: DEMO_PASSWORD });
    if (res.status !== 200) throw new Error(`cannot log in as ${email}: ${JSON.stringify(res.body)}`);
    state.users[role] = { email, api_key: res.body.api_key, id: res.body.user_id };
  }
}

/**
 * An error scenario: `provoke` edits the request as any scenario does; the
 * response must then be a Zulip error with this code and message, and the
 * `extra` fields with these values (hooks.js compares them after the request).
 */
function refusal(code, msg, provoke, extra = {}) {
  const scenario = (req, state) => provoke(req, state);
  scenario.expected = { result: 'error', msg, code, ...extra };
  return scenario;
}

/** The 401 of a request without credentials; `provoke` may set what the operation needs besides. */
const unauthenticated = (provoke = () => undefined) =>
  refusal('UNAUTHORIZED', 'Not logged in: API authentication or user session required', (req, state) => {
    req.user = null;
    return provoke(req, state);
  });

/** The id of a demo channel, from its newest message (as the owner reads it). */
async function channelId(state, name) {
  const res = await api(
    state,
    'GET',
    '/messages',
    { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: name }] },
    state.users.owner,
  );
  if (res.status !== 200 || !res.body.messages.length) throw new Error(`no message in ${name}`);
  return res.body.messages[0].stream_id;
}

let unique = 0;
const fresh = (prefix) => `${prefix}-${Date.now().toString(36)}-${unique++}@example.com`;

const scenarios = {
  'get-server-settings': {
    200: (req) => {
      req.user = null;
    },
  },
  'get-own-user': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    401: unauthenticated(),
  },
  'create-user': {
    200: (req) => {
      req.body.email = fresh('created');
    },
    400: refusal('BAD_REQUEST', `Email '${CAST.member}' already in use`, (req, s) => {
      req.body.email = s.users.member.email;
    }),
    401: unauthenticated(),
  },
  'fetch-api-key': {
    200: (req, s) => {
      req.user = null;
      req.body = { username: s.users.member.email, password: DEMO_PASSWORD };
    },
    400: refusal('BAD_REQUEST', 'Enter a valid email address.', (req) => {
      req.user = null;
      req.body = { username: 'not-an-email', password: 'whatever' };
    }),
    401: refusal('AUTHENTICATION_FAILED', 'Your username or password is incorrect', (req, s) => {
      req.user = null;
      req.body = { username: s.users.guest.email, password: 'wrong-password' };
    }),
  },
};

module.exports = { scenarios, setup, api, CAST, channelId, fresh, refusal, unauthenticated };
