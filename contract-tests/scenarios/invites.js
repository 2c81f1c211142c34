'use strict';
/* Scenarios for email invitations and revoking reusable links. */
const { api, fresh, refusal, unauthenticated } = require('./core');

/** A new email invitation the administrator sends; its id. */
async function emailInvite(s) {
  const email = fresh('invitee');
  const sent = await api(s, 'POST', '/invites', { invitee_emails: email, stream_ids: [] }, s.users.admin);
  if (sent.status !== 200) throw new Error(`invite failed: ${JSON.stringify(sent.body)}`);
  const listed = await api(s, 'GET', '/invites', {}, s.users.admin);
  return listed.body.invites.find((i) => i.email === email).id;
}

/** A new reusable link the administrator makes; its id. */
async function inviteLink(s) {
  const made = await api(s, 'POST', '/invites/multiuse', {}, s.users.admin);
  if (made.status !== 200) throw new Error(`link failed: ${JSON.stringify(made.body)}`);
  const listed = await api(s, 'GET', '/invites', {}, s.users.admin);
  return listed.body.invites.find((i) => i.link_url === made.body.invite_link).id;
}

const NO_SUCH = 'No such invitation';

const scenarios = {
  'get-invites': {
    200: async (req, s) => {
      req.user = s.users.admin;
      await emailInvite(s);
      await inviteLink(s);
    },
    400: refusal('BAD_REQUEST', 'Not allowed for guest users', (req, s) => {
      req.user = s.users.guest;
    }),
    401: unauthenticated(),
  },
  'send-invites': {
    200: (req, s) => {
      req.user = s.users.admin;
      req.body = { invitee_emails: `${fresh('one')}, Two <${fresh('two')}>`, stream_ids: [], include_realm_default_subscriptions: true };
    },
    400: refusal('BAD_REQUEST', 'You must specify at least one email address.', (req, s) => {
      req.user = s.users.admin;
      req.body = { invitee_emails: '', stream_ids: [] };
    }),
    401: unauthenticated(),
  },
  'revoke-email-invite': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.invite_id = await emailInvite(s);
    },
    400: refusal('BAD_REQUEST', NO_SUCH, (req, s) => {
      req.user = s.users.admin;
      req.pathParams.invite_id = 999999;
    }),
    401: unauthenticated(),
  },
  'resend-email-invite': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.invite_id = await emailInvite(s);
    },
    400: refusal('BAD_REQUEST', NO_SUCH, (req, s) => {
      req.user = s.users.admin;
      req.pathParams.invite_id = 999999;
    }),
    401: unauthenticated(),
  },
  'revoke-invite-link': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.invite_id = await inviteLink(s);
    },
    400: refusal('BAD_REQUEST', NO_SUCH, (req, s) => {
      req.user = s.users.admin;
      req.pathParams.invite_id = 999999;
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
