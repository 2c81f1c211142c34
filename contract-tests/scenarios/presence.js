'use strict';
/* Scenarios for presence and user status. */
const { api, refusal, unauthenticated } = require('./core');

/** `user` reports being active, so that they have presence data. */
async function reportActive(s, user) {
  const res = await api(s, 'POST', '/users/me/presence', { status: 'active', ping_only: true }, user);
  if (res.status !== 200) throw new Error(`presence report failed: ${JSON.stringify(res.body)}`);
}

const scenarios = {
  'update-presence': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    400: refusal('BAD_REQUEST', 'Invalid status: away', (req, s) => {
      req.user = s.users.member;
      req.body.status = 'away';
    }),
    401: unauthenticated(),
  },
  'get-user-presence': {
    200: async (req, s) => {
      req.user = s.users.owner;
      await reportActive(s, s.users.member);
      req.pathParams.user_id_or_email = s.users.member.email;
    },
    400: refusal('BAD_REQUEST', 'No such user', (req, s) => {
      req.user = s.users.owner;
      req.pathParams.user_id_or_email = 'nobody@example.com';
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.user_id_or_email = s.users.member.email;
    }),
  },
  'get-presence': {
    200: async (req, s) => {
      req.user = s.users.owner;
      await reportActive(s, s.users.member);
    },
    401: unauthenticated(),
  },
  'update-status': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    400: refusal('BAD_REQUEST', 'status_text is too long (limit: 60 characters)', (req, s) => {
      req.user = s.users.member;
      req.body = { status_text: 'x'.repeat(61) };
    }),
    401: unauthenticated(),
  },
  'get-user-status': {
    200: async (req, s) => {
      req.user = s.users.owner;
      const res = await api(s, 'POST', '/users/me/status', { status_text: 'In the contract tests', emoji_name: 'car' }, s.users.member);
      if (res.status !== 200) throw new Error(`status failed: ${JSON.stringify(res.body)}`);
      req.pathParams.user_id = s.users.member.id;
    },
    400: refusal('BAD_REQUEST', 'No such user', (req, s) => {
      req.user = s.users.owner;
      req.pathParams.user_id = 999999;
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.user_id = s.users.member.id;
    }),
  },
};

module.exports = { scenarios };
