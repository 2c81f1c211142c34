'use strict';
/* Scenarios for scheduled messages: list, create, edit, delete. */
const { api, refusal, unauthenticated } = require('./core');

/** The id of the demo organization's #general, by the `get_stream_id` lookup. */
async function generalId(s, user) {
  const res = await api(s, 'GET', '/get_stream_id', { stream: 'general' }, user);
  if (res.status !== 200) throw new Error(`get_stream_id failed: ${JSON.stringify(res.body)}`);
  return res.body.stream_id;
}

/** An hour from now, in seconds. */
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

/** A new scheduled message of `user`'s in #general; its id. */
async function scheduledOf(s, user) {
  const res = await api(
    s,
    'POST',
    '/scheduled_messages',
    {
      type: 'stream',
      to: await generalId(s, user),
      topic: 'contract',
      content: 'Scheduled by the contract tests.',
      scheduled_delivery_timestamp: inAnHour(),
    },
    user,
  );
  if (res.status !== 200) throw new Error(`schedule failed: ${JSON.stringify(res.body)}`);
  return res.body.scheduled_message_id;
}

const NOT_FOUND = 'Scheduled message does not exist';

const scenarios = {
  'get-scheduled-messages': {
    200: async (req, s) => {
      req.user = s.users.member;
      await scheduledOf(s, s.users.member);
    },
    401: unauthenticated(),
  },
  'create-scheduled-message': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = {
        type: 'stream',
        to: await generalId(s, s.users.member),
        topic: 'contract',
        content: 'Later.',
        scheduled_delivery_timestamp: inAnHour(),
      };
    },
    400: refusal('BAD_REQUEST', 'Scheduled delivery time must be in the future.', async (req, s) => {
      req.user = s.users.member;
      req.body = {
        type: 'stream',
        to: await generalId(s, s.users.member),
        topic: 'contract',
        content: 'Too late.',
        scheduled_delivery_timestamp: 1000,
      };
    }),
    401: unauthenticated(),
  },
  'update-scheduled-message': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.scheduled_message_id = await scheduledOf(s, s.users.member);
    },
    400: refusal('BAD_REQUEST', 'Nothing to change', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.scheduled_message_id = await scheduledOf(s, s.users.member);
      req.body = {};
    }),
    401: unauthenticated((req) => {
      req.pathParams.scheduled_message_id = 1;
    }),
    // Another user's scheduled message is answered as a missing one.
    404: refusal('BAD_REQUEST', NOT_FOUND, async (req, s) => {
      req.user = s.users.member;
      req.pathParams.scheduled_message_id = await scheduledOf(s, s.users.owner);
    }),
  },
  'delete-scheduled-message': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.scheduled_message_id = await scheduledOf(s, s.users.member);
    },
    401: unauthenticated((req) => {
      req.pathParams.scheduled_message_id = 1;
    }),
    404: refusal('BAD_REQUEST', NOT_FOUND, async (req, s) => {
      req.user = s.users.member;
      req.pathParams.scheduled_message_id = await scheduledOf(s, s.users.owner);
    }),
  },
};

module.exports = { scenarios };
