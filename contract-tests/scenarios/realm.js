'use strict';
/* Scenarios for the organization's settings (PATCH /realm) and its domains (/realm/domains). */
const { api, refusal, unauthenticated } = require('./core');

let unique = 0;
const freshDomain = (prefix) => `${prefix}-${Date.now().toString(36)}${unique++}.example.org`;

/** Adds a domain to the demo organization as its administrator; returns it. */
async function addedDomain(state, prefix) {
  const domain = freshDomain(prefix);
  const res = await api(state, 'POST', '/realm/domains', { domain, allow_subdomains: false }, state.users.admin);
  if (res.status !== 200) throw new Error(`adding a domain failed: ${JSON.stringify(res.body)}`);
  return domain;
}

const notAdministrator = (provoke = () => undefined) =>
  refusal('UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator', (req, s) => {
    req.user = s.users.member;
    return provoke(req, s);
  });

const scenarios = {
  'update-realm': {
    200: (req, s) => {
      req.user = s.users.admin;
      // A change (so the answer names it): the example's value may already be the organization's.
      req.body = { message_content_delete_limit_seconds: 3600 + (unique++ % 1000) };
    },
    400: notAdministrator(),
    401: unauthenticated(),
  },
  'get-realm-domains': {
    200: async (req, s) => {
      req.user = s.users.guest;
      await addedDomain(s, 'listed');
    },
    401: unauthenticated(),
  },
  'create-realm-domain': {
    200: (req, s) => {
      req.user = s.users.admin;
      req.body = { domain: freshDomain('added'), allow_subdomains: false };
    },
    400: notAdministrator((req) => {
      req.body = { domain: freshDomain('refused'), allow_subdomains: false };
    }),
    401: unauthenticated(),
  },
  'update-realm-domain': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams = { domain: await addedDomain(s, 'changed') };
    },
    400: refusal('BAD_REQUEST', 'No entry found for domain nowhere.example.net.', (req, s) => {
      req.user = s.users.admin;
      req.pathParams = { domain: 'nowhere.example.net' };
    }),
    401: unauthenticated(),
  },
  'delete-realm-domain': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams = { domain: await addedDomain(s, 'removed') };
    },
    400: refusal('BAD_REQUEST', 'No entry found for domain nowhere.example.net.', (req, s) => {
      req.user = s.users.admin;
      req.pathParams = { domain: 'nowhere.example.net' };
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
