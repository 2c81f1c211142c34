'use strict';
/*
 * Scenarios for users and organization defaults. Anything
 * that changes a user acts on a user made for it, never on the demo cast.
 */
const { api, fresh, refusal, unauthenticated } = require('./core');

const notOwner = (provoke) => refusal('UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner', provoke);

/** A new member, made by the owner (who may create users). */
async function freshUserId(s) {
  const res = await api(
    s,
    'POST',
    '/users',
    { email: fresh('scenario'), password: 'scenario-password-1', full_name: 'Scenario Person' },
    s.users.owner,
  );
  if (res.status !== 200) throw new Error(`create-user failed: ${JSON.stringify(res.body)}`);
  return res.body.user_id;
}

/** A new member who can act for themselves: their address, API key and ID. */
async function freshUser(s) {
  const email = fresh('scenario');
  const made = await api(s, 'POST', '/users', { email, password: 'scenario-password-1', full_name: 'Scenario Person' }, s.users.owner);
  if (made.status !== 200) throw new Error(`create-user failed: ${JSON.stringify(made.body)}`);
  const key = await api(s, 'POST', '/fetch_api_key', { username: email, password: 'scenario-password-1' });
  if (key.status !== 200) throw new Error(`fetch-api-key failed: ${JSON.stringify(key.body)}`);
  return { email, api_key: key.body.api_key, id: made.body.user_id };
}

const scenarios = {
  'get-users': {
    200: (req, s) => {
      req.user = s.users.member;
      req.query = { client_gravatar: false, include_custom_profile_fields: true };
    },
    400: refusal('BAD_REQUEST', 'client_gravatar is not a boolean', (req, s) => {
      req.user = s.users.member;
      req.query = { client_gravatar: 'maybe' };
    }),
    401: unauthenticated((req) => {
      req.query = {};
    }),
  },
  'get-user': {
    200: (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_id = s.users.admin.id;
      req.query = { include_custom_profile_fields: true };
    },
    400: refusal('BAD_REQUEST', 'No such user', (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_id = 999999;
      req.query = {};
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.user_id = s.users.admin.id;
      req.query = {};
    }),
  },
  'get-user-by-email': {
    200: (req, s) => {
      req.user = s.users.member;
      req.pathParams.email = s.users.admin.email;
      req.query = { include_custom_profile_fields: true };
    },
    400: refusal('BAD_REQUEST', 'No such user', (req, s) => {
      req.user = s.users.member;
      req.pathParams.email = 'nobody@nowhere.example';
      req.query = {};
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.email = s.users.admin.email;
      req.query = {};
    }),
  },
  'update-user-by-email': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.email = (await freshUser(s)).email;
      req.body = { full_name: 'Renamed By Email' };
    },
    400: refusal('UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator', (req, s) => {
      req.user = s.users.member;
      req.pathParams.email = s.users.admin.email;
      req.body = { full_name: 'Renamed By Email' };
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.email = s.users.member.email;
    }),
  },
  'deactivate-own-user': {
    200: async (req, s) => {
      req.user = await freshUser(s);
    },
    400: refusal(
      'CANNOT_DEACTIVATE_LAST_USER',
      'Cannot deactivate the only organization owner.',
      (req, s) => {
        req.user = s.users.owner;
      },
      { is_last_owner: true, entity: 'organization owner' },
    ),
    401: unauthenticated(() => {}),
  },
  'update-user': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.user_id = await freshUserId(s);
      req.body = { full_name: 'Renamed Person', role: 300 };
    },
    400: notOwner((req, s) => {
      req.user = s.users.admin;
      req.pathParams.user_id = s.users.member.id;
      req.body = { role: 100 };
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.user_id = s.users.member.id;
    }),
  },
  'deactivate-user': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.user_id = await freshUserId(s);
      req.body = {};
    },
    400: notOwner((req, s) => {
      req.user = s.users.admin;
      req.pathParams.user_id = s.users.owner.id;
      req.body = {};
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.user_id = s.users.member.id;
    }),
  },
  'reactivate-user': {
    200: async (req, s) => {
      const id = await freshUserId(s);
      const res = await api(s, 'DELETE', `/users/${id}`, {}, s.users.admin);
      if (res.status !== 200) throw new Error(`deactivate-user failed: ${JSON.stringify(res.body)}`);
      req.user = s.users.admin;
      req.pathParams.user_id = id;
    },
    400: refusal('BAD_REQUEST', 'User is already active', (req, s) => {
      req.user = s.users.admin;
      req.pathParams.user_id = s.users.member.id;
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.user_id = s.users.member.id;
    }),
  },
  'update-realm-user-settings-defaults': {
    200: (req, s) => {
      req.user = s.users.admin;
    },
    400: refusal('BAD_REQUEST', 'Invalid emojiset', (req, s) => {
      req.user = s.users.admin;
      req.body = { emojiset: 'apple' };
    }),
    401: unauthenticated(),
  },
  'get-alert-words': {
    200: (req, s) => {
      req.user = s.users.member2;
    },
    401: unauthenticated(),
  },
  'add-alert-words': {
    200: (req, s) => {
      req.user = s.users.member2;
    },
    400: refusal('BAD_REQUEST', 'alert_words[0] is too long (limit: 100 characters)', (req, s) => {
      req.user = s.users.member2;
      req.body = { alert_words: ['x'.repeat(101)] };
    }),
    401: unauthenticated(),
  },
  'remove-alert-words': {
    200: (req, s) => {
      req.user = s.users.member2;
    },
    400: refusal(
      'REQUEST_VARIABLE_MISSING',
      "Missing 'alert_words' argument",
      (req, s) => {
        req.user = s.users.member2;
        req.body = {};
      },
      { var_name: 'alert_words' },
    ),
    401: unauthenticated(),
  },
  'update-settings': {
    200: (req, s) => {
      req.user = s.users.member2;
    },
    400: refusal('BAD_REQUEST', 'timezone is not a recognized time zone', (req, s) => {
      req.user = s.users.member2;
      req.body = { timezone: 'Mars/Olympus_Mons' };
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
