'use strict';
/* Scenarios for the organization's settings (PATCH /realm), its domains (/realm/domains) its icon (/realm/icon) and logos (/realm/logo). */
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

/** A 1x1 PNG, sent as bytes (hooks.js setBody). */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const png = (filename) => ({ __file: true, filename, content: PNG, contentType: 'image/png' });

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
  'get-realm-icon': {
    302: (req, s) => {
      req.user = s.users.member;
    },
    401: unauthenticated(),
  },
  'get-realm-logo': {
    302: (req, s) => {
      req.user = s.users.member;
      req.query = { night: true };
    },
    400: refusal('BAD_REQUEST', 'night is not a boolean', (req, s) => {
      req.user = s.users.member;
      req.query = { night: 'yes' };
    }),
    401: unauthenticated((req) => {
      req.query = { night: false };
    }),
  },
  'upload-realm-icon': {
    200: (req, s) => {
      req.user = s.users.admin;
      req.body = { file: png('icon.png') };
    },
    // The example's `filename` is a text field: a body without a file part.
    400: refusal('BAD_REQUEST', 'You must upload exactly one icon.', (req, s) => {
      req.user = s.users.admin;
      req.body = { filename: 'icon.png' };
    }),
    401: unauthenticated((req) => {
      req.body = { file: png('icon.png') };
    }),
  },
  'delete-realm-icon': {
    200: (req, s) => {
      req.user = s.users.admin;
    },
    400: notAdministrator(),
    401: unauthenticated(),
  },
  // `night` beside the file, as the Zulip web app sends it.
  'upload-realm-logo': {
    200: (req, s) => {
      req.user = s.users.admin;
      req.body = { night: false, file: png('logo.png') };
    },
    400: refusal('BAD_REQUEST', 'You must upload exactly one logo.', (req, s) => {
      req.user = s.users.admin;
      req.body = { night: true, filename: 'logo.png' };
    }),
    401: unauthenticated((req) => {
      req.body = { night: false, file: png('logo.png') };
    }),
  },
  'delete-realm-logo': {
    200: (req, s) => {
      req.user = s.users.admin;
      req.body = { night: true };
    },
    400: notAdministrator((req) => {
      req.body = { night: false };
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
