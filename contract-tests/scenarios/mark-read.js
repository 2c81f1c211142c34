'use strict';
/* Scenarios for the legacy bulk mark-as-read operations. */
const { api, channelId, refusal, unauthenticated } = require('./core');

/** A message from the owner to `general` in this topic, so the member has one there. */
async function messageIn(s, topic) {
  const res = await api(
    s,
    'POST',
    '/messages',
    { type: 'stream', to: 'general', topic, content: 'For the contract tests.' },
    s.users.owner,
  );
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
}

const scenarios = {
  'mark-all-as-read': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    401: unauthenticated(),
  },
  'mark-stream-as-read': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body.stream_id = await channelId(s, 'general');
    },
    400: refusal('BAD_REQUEST', 'Invalid channel ID', (req, s) => {
      req.user = s.users.member;
      req.body.stream_id = 99999999;
    }),
    401: unauthenticated(),
  },
  'mark-topic-as-read': {
    200: async (req, s) => {
      req.user = s.users.member;
      await messageIn(s, 'contract mark read');
      req.body = { stream_id: await channelId(s, 'general'), topic_name: 'contract mark read' };
    },
    400: refusal('BAD_REQUEST', "No such topic 'no such contract topic'", async (req, s) => {
      req.user = s.users.member;
      req.body = { stream_id: await channelId(s, 'general'), topic_name: 'no such contract topic' };
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
