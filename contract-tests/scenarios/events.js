'use strict';
/* Scenarios for real-time events: register, get and delete queues; typing notifications. */
const { api, refusal, unauthenticated } = require('./core');

const badQueue = (provoke) => refusal('BAD_EVENT_QUEUE_ID', 'Bad event queue ID: no-such-queue', provoke, { queue_id: 'no-such-queue' });

/** A fresh queue of `user` that takes every event type. */
async function freshQueue(s, user) {
  const res = await api(s, 'POST', '/register', { event_types: ['message', 'typing'], fetch_event_types: [] }, user);
  if (res.status !== 200) throw new Error(`register failed: ${JSON.stringify(res.body)}`);
  return res.body.queue_id;
}

/** A fresh channel message sent by `user`, so that user may say they are editing it. */
async function ownMessage(s, user) {
  const res = await api(s, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'contract', content: 'about to be edited' }, user);
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

const scenarios = {
  'register-queue': {
    // The example asks for the realm, users, subscriptions and unread state: a full, real payload.
    200: (req, s) => {
      req.user = s.users.member;
    },
    400: refusal('BAD_REQUEST', 'User not authorized for this query', (req, s) => {
      req.user = s.users.guest;
      req.body = { all_public_streams: true };
    }),
    401: unauthenticated(),
  },
  'get-events': {
    // The queue already holds an event (a message to the member), so the answer is not empty.
    200: async (req, s) => {
      const queueId = await freshQueue(s, s.users.member);
      await api(
        s,
        'POST',
        '/messages',
        { type: 'direct', to: [s.users.member.id], content: 'an event for the contract test' },
        s.users.member2,
      );
      req.user = s.users.member;
      req.query = { queue_id: queueId, last_event_id: -1, dont_block: true };
    },
    400: badQueue((req, s) => {
      req.user = s.users.member;
      req.query = { queue_id: 'no-such-queue', last_event_id: -1, dont_block: true };
    }),
    401: unauthenticated((req) => {
      req.query = { queue_id: 'no-such-queue', last_event_id: -1, dont_block: true };
    }),
  },
  'delete-queue': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = { queue_id: await freshQueue(s, s.users.member) };
    },
    400: badQueue((req, s) => {
      req.user = s.users.member;
      req.body = { queue_id: 'no-such-queue' };
    }),
    401: unauthenticated(),
  },
  'set-typing-status': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { type: 'direct', op: 'start', to: [s.users.member2.id] };
    },
    400: refusal('BAD_REQUEST', "Empty 'to' list", (req, s) => {
      req.user = s.users.member;
      req.body = { type: 'direct', op: 'start', to: [] };
    }),
    401: unauthenticated(),
  },
  'set-typing-status-for-message-edit': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await ownMessage(s, s.users.member);
      req.body = { op: 'start' };
    },
    400: refusal('BAD_REQUEST', "You don't have permission to edit this message", async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await ownMessage(s, s.users.owner);
      req.body = { op: 'start' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
};

module.exports = { scenarios };
