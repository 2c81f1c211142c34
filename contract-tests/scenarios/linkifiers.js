'use strict';
/* Scenarios for linkifiers and code playgrounds. */
const { api, refusal, unauthenticated } = require('./core');

const NOT_ADMIN = 'Must be an organization administrator';
let serial = 0;

/** A new linkifier of the organization, with a pattern no other scenario uses; its id. */
async function linkifier(s) {
  serial += 1;
  const res = await api(
    s,
    'POST',
    '/realm/filters',
    { pattern: `CT${serial}-(?P<id>[0-9]+)`, url_template: 'https://ct.example/{id}' },
    s.users.owner,
  );
  if (res.status !== 200) throw new Error(`add linkifier failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function linkifierIds(s) {
  const res = await api(s, 'GET', '/realm/linkifiers', {}, s.users.owner);
  return res.body.linkifiers.map((l) => l.id);
}

/** A new playground of the organization; its id. */
async function playground(s) {
  serial += 1;
  const res = await api(
    s,
    'POST',
    '/realm/playgrounds',
    { name: `Contract ${serial}`, pygments_language: 'Python', url_template: 'https://py.example/?c={code}' },
    s.users.owner,
  );
  if (res.status !== 200) throw new Error(`add playground failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

const fresh = (req) => {
  serial += 1;
  req.body.pattern = `CT-fresh${serial}-(?P<id>[0-9]+)`;
};

const scenarios = {
  'get-linkifiers': {
    200: async (req, s) => {
      req.user = s.users.member;
      await linkifier(s);
    },
    401: unauthenticated(),
  },
  'add-linkifier': {
    200: (req, s) => {
      req.user = s.users.admin;
      fresh(req);
    },
    400: refusal(
      'BAD_REQUEST',
      'Invalid URL template.',
      (req, s) => {
        req.user = s.users.admin;
        fresh(req);
        req.body.url_template = 'https://ct.example/{id';
      },
      { errors: { url_template: ['Invalid URL template.'] } },
    ),
    401: unauthenticated(),
  },
  'update-linkifier': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.filter_id = await linkifier(s);
      fresh(req);
    },
    400: refusal('BAD_REQUEST', 'Linkifier not found.', (req, s) => {
      req.user = s.users.admin;
      req.pathParams.filter_id = 2000000000;
      fresh(req);
    }),
    401: unauthenticated((req) => {
      req.pathParams.filter_id = 1;
    }),
  },
  'remove-linkifier': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.filter_id = await linkifier(s);
    },
    400: refusal('UNAUTHORIZED_PRINCIPAL', NOT_ADMIN, async (req, s) => {
      req.user = s.users.member;
      req.pathParams.filter_id = await linkifier(s);
    }),
    401: unauthenticated((req) => {
      req.pathParams.filter_id = 1;
    }),
  },
  'reorder-linkifiers': {
    200: async (req, s) => {
      req.user = s.users.admin;
      await linkifier(s);
      req.body.ordered_linkifier_ids = (await linkifierIds(s)).reverse();
    },
    400: refusal('BAD_REQUEST', 'The ordered list must not contain duplicated linkifiers', (req, s) => {
      req.user = s.users.admin;
      req.body.ordered_linkifier_ids = [1, 1];
    }),
    401: unauthenticated(),
  },
  'add-code-playground': {
    200: (req, s) => {
      req.user = s.users.admin;
      serial += 1;
      req.body.name = `Contract fresh ${serial}`;
    },
    400: refusal('BAD_REQUEST', 'Invalid characters in pygments language', (req, s) => {
      req.user = s.users.admin;
      req.body.pygments_language = 'py<thon>';
    }),
    401: unauthenticated(),
  },
  'remove-code-playground': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.playground_id = await playground(s);
    },
    400: refusal('BAD_REQUEST', 'Invalid playground', (req, s) => {
      req.user = s.users.admin;
      req.pathParams.playground_id = 2000000000;
    }),
    401: unauthenticated((req) => {
      req.pathParams.playground_id = 1;
    }),
  },
};

module.exports = { scenarios };
