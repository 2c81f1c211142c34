'use strict';
/* Scenarios for custom profile fields: the organization's fields and users' own values. */
const { api, refusal, unauthenticated } = require('./core');

let unique = 0;
const label = (prefix) => `${prefix} ${Date.now().toString(36)}${unique++}`.slice(0, 40);

/** A new short text field, made by the demo administrator; its id. */
async function fieldOf(s, extra = {}) {
  const res = await api(s, 'POST', '/realm/profile_fields', { name: label('Contract field'), field_type: 1, ...extra }, s.users.admin);
  if (res.status !== 200) throw new Error(`create profile field failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Every field of the demo organization, in display order. */
async function fieldIds(s) {
  const res = await api(s, 'GET', '/realm/profile_fields', {}, s.users.admin);
  return res.body.custom_fields.map((f) => f.id);
}

const NOT_ADMIN = ['UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'];

const scenarios = {
  'get-custom-profile-fields': {
    200: async (req, s) => {
      req.user = s.users.guest;
      await fieldOf(s);
    },
    401: unauthenticated(),
  },
  'create-custom-profile-field': {
    200: (req, s) => {
      req.user = s.users.admin;
      req.body = { name: label('Created'), hint: 'Anything', field_type: 3, field_data: { a: { text: 'A', order: '1' } } };
    },
    400: refusal(...NOT_ADMIN, (req, s) => {
      req.user = s.users.member;
      req.body = { name: label('Refused'), field_type: 1 };
    }),
    401: unauthenticated(),
  },
  'reorder-custom-profile-fields': {
    200: async (req, s) => {
      req.user = s.users.owner;
      await fieldOf(s);
      req.body = { order: (await fieldIds(s)).reverse() };
    },
    400: refusal('BAD_REQUEST', 'Invalid order mapping.', async (req, s) => {
      req.user = s.users.admin;
      await fieldOf(s);
      req.body = { order: (await fieldIds(s)).slice(1) };
    }),
    401: unauthenticated(),
  },
  'update-custom-profile-field': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.field_id = await fieldOf(s);
      req.body = { hint: 'Changed', editable_by_user: false };
    },
    400: refusal('BAD_REQUEST', 'Label cannot be blank.', async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.field_id = await fieldOf(s);
      req.body = { name: '  ' };
    }),
    401: unauthenticated(async (req) => {
      req.pathParams.field_id = 1;
    }),
  },
  'delete-custom-profile-field': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.field_id = await fieldOf(s);
    },
    400: refusal('BAD_REQUEST', 'Field id 2147483646 not found.', (req, s) => {
      req.user = s.users.admin;
      req.pathParams.field_id = 2147483646;
    }),
    401: unauthenticated((req) => {
      req.pathParams.field_id = 1;
    }),
  },
  'update-own-profile-data': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = { data: [{ id: await fieldOf(s), value: 'Set by the contract tests' }] };
    },
    400: refusal('BAD_REQUEST', 'You are not allowed to change this field. Contact an administrator to update it.', async (req, s) => {
      req.user = s.users.member;
      req.body = { data: [{ id: await fieldOf(s, { editable_by_user: false }), value: 'x' }] };
    }),
    401: unauthenticated(),
  },
  'remove-own-profile-data': {
    200: async (req, s) => {
      req.user = s.users.member;
      const id = await fieldOf(s);
      await api(s, 'PATCH', '/users/me/profile_data', { data: [{ id, value: 'To be removed' }] }, s.users.member);
      req.body = { data: [id] };
    },
    400: refusal('BAD_REQUEST', 'Field id 2147483646 not found.', (req, s) => {
      req.user = s.users.member;
      req.body = { data: [2147483646] };
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
