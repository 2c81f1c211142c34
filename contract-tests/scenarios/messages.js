'use strict';
/* Scenarios for the messages family: send, fetch, flags, reactions, edit history, reports. */
const { api, refusal, unauthenticated } = require('./core');

/** A fresh message in #general from the owner, visible to the member. */
async function freshMessage(s, content = 'contract test message') {
  const res = await api(s, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'contract', content }, s.users.owner);
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

const scenarios = {
  'get-messages': {
    200: (req, s) => {
      req.user = s.users.member;
      req.query = { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'channel', operand: 'general' }] };
    },
    400: refusal('BAD_REQUEST', 'Invalid anchor', (req, s) => {
      req.user = s.users.member;
      req.query = { anchor: 'sideways', num_before: 1, num_after: 0 };
    }),
    401: unauthenticated((req) => {
      req.query = { anchor: 'newest', num_before: 1, num_after: 0 };
    }),
  },
  'send-message': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { type: 'channel', to: 'general', topic: 'contract', content: 'hello :wave:' };
    },
    400: refusal(
      'STREAM_DOES_NOT_EXIST',
      "Channel 'no-such-channel' does not exist",
      (req, s) => {
        req.user = s.users.member;
        req.body = { type: 'channel', to: 'no-such-channel', topic: 'x', content: 'x' };
      },
      { stream: 'no-such-channel' },
    ),
    401: unauthenticated(),
  },
  'get-message': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.query = {};
    },
    400: refusal('BAD_REQUEST', 'Invalid message(s)', (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = 999999999;
      req.query = {};
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
      req.query = {};
    }),
  },
  'update-message-flags': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = { messages: [await freshMessage(s)], op: 'add', flag: 'starred' };
    },
    400: refusal('BAD_REQUEST', "Flag not editable: 'mentioned'", async (req, s) => {
      req.user = s.users.member;
      req.body = { messages: [await freshMessage(s)], op: 'add', flag: 'mentioned' };
    }),
    401: unauthenticated(),
  },
  'update-message-flags-for-narrow': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = {
        anchor: 'newest',
        num_before: 50,
        num_after: 0,
        narrow: [{ operator: 'channel', operand: 'general' }],
        op: 'add',
        flag: 'read',
      };
    },
    400: refusal('BAD_REQUEST', "Invalid message flag operation: 'toggle'", (req, s) => {
      req.user = s.users.member;
      req.body = { anchor: 'newest', num_before: 1, num_after: 0, narrow: [], op: 'toggle', flag: 'read' };
    }),
    401: unauthenticated(),
  },
  'add-reaction': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'octopus' };
    },
    400: refusal('BAD_REQUEST', "Emoji 'no_such_emoji_name' does not exist", async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'no_such_emoji_name' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
  'remove-reaction': {
    200: async (req, s) => {
      req.user = s.users.member;
      const id = await freshMessage(s);
      await api(s, 'POST', `/messages/${id}/reactions`, { emoji_name: 'tada' }, s.users.member);
      req.pathParams.message_id = id;
      req.body = { emoji_name: 'tada' };
    },
    400: refusal('REACTION_DOES_NOT_EXIST', "Reaction doesn't exist.", async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'tada' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
  'update-message': {
    200: async (req, s) => {
      req.user = s.users.member;
      const res = await api(
        s,
        'POST',
        '/messages',
        { type: 'channel', to: 'general', topic: 'contract', content: 'to be edited' },
        s.users.member,
      );
      if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
      req.pathParams.message_id = res.body.id;
      req.body = { content: 'edited by the contract test', topic: 'contract edited' };
    },
    400: refusal('BAD_REQUEST', "You don't have permission to edit this message", async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { content: "not the sender's to edit" };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
  'get-message-history': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s, 'history of a contract test message');
      req.query = { allow_empty_topic_name: true };
    },
    400: refusal('BAD_REQUEST', 'Invalid message(s)', (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = 999999999;
      req.query = {};
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
      req.query = {};
    }),
  },
  'report-message': {
    // The demo organization sends reports to #leadership (its moderation request channel).
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s, 'a contract test message to report');
      req.body = { report_type: 'spam', description: 'Unsolicited advertising.' };
    },
    400: refusal('BAD_REQUEST', 'An explanation is required.', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { report_type: 'other' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
};

module.exports = { scenarios };
