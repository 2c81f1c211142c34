'use strict';
/* Scenarios for topic visibility (POST /user_topics, the legacy muted_topics endpoint) and read receipts. */
const { api, refusal, unauthenticated } = require('./core');

/** The id of a channel the member is subscribed to, by name. */
async function channelId(s, name = 'general') {
  const res = await api(s, 'GET', '/users/me/subscriptions', {}, s.users.member);
  const sub = (res.body.subscriptions || []).find((c) => c.name === name);
  if (!sub) throw new Error(`member is not subscribed to #${name}`);
  return sub.stream_id;
}

/** A new message in #general from the owner, read by the member; its id. */
async function readMessage(s) {
  const sent = await api(
    s,
    'POST',
    '/messages',
    { type: 'channel', to: 'general', topic: 'receipts', content: 'read receipts' },
    s.users.owner,
  );
  if (sent.status !== 200) throw new Error(`send failed: ${JSON.stringify(sent.body)}`);
  await api(s, 'POST', '/messages/flags', { messages: [sent.body.id], op: 'add', flag: 'read' }, s.users.member);
  return sent.body.id;
}

const scenarios = {
  'update-user-topic': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = { stream_id: await channelId(s), topic: 'contract dinner', visibility_policy: 1 };
    },
    400: refusal('BAD_REQUEST', 'Invalid channel ID', (req, s) => {
      req.user = s.users.member;
      req.body = { stream_id: 999999, topic: 'nowhere', visibility_policy: 3 };
    }),
    401: unauthenticated(),
  },
  'mute-topic': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = { stream_id: await channelId(s), topic: 'contract lunch', op: 'add' };
    },
    // With neither channel parameter Zulip names stream_id as missing, without var_name.
    400: refusal('BAD_REQUEST', "Missing 'stream_id' argument", (req, s) => {
      req.user = s.users.member;
      req.body = { topic: 'contract lunch', op: 'remove' };
    }),
    401: unauthenticated(),
  },
  'get-read-receipts': {
    200: async (req, s) => {
      req.user = s.users.owner;
      req.pathParams.message_id = await readMessage(s);
    },
    400: refusal('BAD_REQUEST', 'Invalid message(s)', (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = 999999999;
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
};

module.exports = { scenarios };
