'use strict';
/* Scenarios for muting users (POST and DELETE /users/me/muted_users/{muted_user_id}). */
const { api, refusal, unauthenticated } = require('./core');

const scenarios = {
  'mute-user': {
    // Unmuted first (whatever the answer), so the scenario holds however often it runs.
    200: async (req, s) => {
      await api(s, 'DELETE', `/users/me/muted_users/${s.users.guest.id}`, {}, s.users.member2);
      req.user = s.users.member2;
      req.pathParams.muted_user_id = s.users.guest.id;
    },
    400: refusal('BAD_REQUEST', 'Cannot mute self', (req, s) => {
      req.user = s.users.member2;
      req.pathParams.muted_user_id = s.users.member2.id;
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.muted_user_id = s.users.member.id;
    }),
  },
  'unmute-user': {
    200: async (req, s) => {
      await api(s, 'POST', `/users/me/muted_users/${s.users.moderator.id}`, {}, s.users.member2);
      req.user = s.users.member2;
      req.pathParams.muted_user_id = s.users.moderator.id;
    },
    // Nobody can have muted themselves.
    400: refusal('BAD_REQUEST', 'User is not muted', (req, s) => {
      req.user = s.users.member2;
      req.pathParams.muted_user_id = s.users.member2.id;
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.muted_user_id = s.users.member.id;
    }),
  },
};

module.exports = { scenarios };
