'use strict';
/* Scenarios for browser sessions (Parley's own operations): list and end. */
const path = require('node:path');
const { api, refusal, unauthenticated } = require('./core');
const { DEMO_PASSWORD } = require(path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'demo.js'));

/** A browser login of `user` on the login page; the new session's id, as the user's list shows it. */
async function sessionOf(s, user) {
  const form = new URLSearchParams({ username: user.email, password: DEMO_PASSWORD });
  const res = await fetch(`${s.base}/login/`, { method: 'POST', body: form, redirect: 'manual' });
  if (res.status !== 302) throw new Error(`login page refused ${user.email}: ${res.status}`);
  const list = await api(s, 'GET', '/users/me/sessions', {}, user);
  if (list.status !== 200 || !list.body.sessions.length) throw new Error(`no session listed: ${JSON.stringify(list.body)}`);
  // The newest first: the one just made.
  return list.body.sessions[0].id;
}

const scenarios = {
  'get-sessions': {
    200: async (req, s) => {
      req.user = s.users.member;
      await sessionOf(s, s.users.member);
    },
    401: unauthenticated(),
  },
  'delete-session': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.session_id = await sessionOf(s, s.users.member);
    },
    // Another user's session is answered as a missing one.
    400: refusal('BAD_REQUEST', 'Invalid session ID', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.session_id = await sessionOf(s, s.users.owner);
    }),
    401: unauthenticated((req) => {
      req.pathParams.session_id = 1;
    }),
  },
};

module.exports = { scenarios };
