'use strict';
/* Scenarios for muting users (POST and DELETE /users/me/muted_users/{muted_user_id}). */
const { api, refusal, unauthenticated } = require('./core');

/** member2's request about `role` of the cast. */
const member2About = (role) => (req, s) => {
  req.user = s.users.member2;
  req.pathParams.muted_user_id = s.users[role].id;
};

/**
 * The scenarios of one of the two operations, both made as member2: the 200
 * first sends `undo` (the other operation) about `target`, whatever the
 * answer, so that it holds however often it runs; the 400 names member2
 * themselves, refused with `selfRefusal`.
 */
function muting(undo, target, selfRefusal) {
  return {
    200: async (req, s) => {
      await api(s, undo, `/users/me/muted_users/${s.users[target].id}`, {}, s.users.member2);
      member2About(target)(req, s);
    },
    400: refusal('BAD_REQUEST', selfRefusal, member2About('member2')),
    401: unauthenticated((req, s) => {
      req.pathParams.muted_user_id = s.users.member.id;
    }),
  };
}

const scenarios = {
  // Unmuted first.
  'mute-user': muting('DELETE', 'guest', 'Cannot mute self'),
  // Muted first; nobody can have muted themselves.
  'unmute-user': muting('POST', 'moderator', 'User is not muted'),
};

module.exports = { scenarios };
