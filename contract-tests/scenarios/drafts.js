'use strict';
/* Scenarios for drafts: list, create, edit, delete. */
const { api, refusal, unauthenticated } = require('./core');

/** A new draft of `user`'s; its id. */
async function draftOf(s, user) {
  const drafts = [{ type: '', to: [], topic: '', content: 'Kept by the contract tests.' }];
  const res = await api(s, 'POST', '/drafts', { drafts }, user);
  if (res.status !== 200) throw new Error(`create draft failed: ${JSON.stringify(res.body)}`);
  return res.body.ids[0];
}

/** member2 with draft synchronization off: every drafts operation is refused. */
async function syncOff(req, s) {
  const res = await api(s, 'PATCH', '/settings', { enable_drafts_synchronization: false }, s.users.member2);
  if (res.status !== 200) throw new Error(`turning draft sync off failed: ${JSON.stringify(res.body)}`);
  req.user = s.users.member2;
}

const NOT_FOUND = 'Draft does not exist';
const SYNC_OFF = 'User has disabled synchronizing drafts.';

const scenarios = {
  'get-drafts': {
    200: async (req, s) => {
      req.user = s.users.member;
      await draftOf(s, s.users.member);
    },
    400: refusal('BAD_REQUEST', SYNC_OFF, syncOff),
    401: unauthenticated(),
  },
  'create-drafts': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    400: refusal('BAD_REQUEST', 'Must specify exactly 1 channel ID for channel messages', (req, s) => {
      req.user = s.users.member;
      req.body.drafts = [{ type: 'stream', to: [], topic: 'contract', content: 'No channel.' }];
    }),
    401: unauthenticated(),
  },
  'edit-draft': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.draft_id = await draftOf(s, s.users.member);
    },
    400: refusal('BAD_REQUEST', 'Message must not be empty', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.draft_id = await draftOf(s, s.users.member);
      req.body.draft = { type: '', to: [], topic: '', content: '   ' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.draft_id = 1;
    }),
    // Another user's draft is answered as a missing one.
    404: refusal('BAD_REQUEST', NOT_FOUND, async (req, s) => {
      req.user = s.users.member;
      req.pathParams.draft_id = await draftOf(s, s.users.owner);
    }),
  },
  'delete-draft': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.draft_id = await draftOf(s, s.users.member);
    },
    400: refusal('BAD_REQUEST', SYNC_OFF, async (req, s) => {
      await syncOff(req, s);
      req.pathParams.draft_id = 1;
    }),
    401: unauthenticated((req) => {
      req.pathParams.draft_id = 1;
    }),
    404: refusal('BAD_REQUEST', NOT_FOUND, async (req, s) => {
      req.user = s.users.member;
      req.pathParams.draft_id = await draftOf(s, s.users.owner);
    }),
  },
};

module.exports = { scenarios };
