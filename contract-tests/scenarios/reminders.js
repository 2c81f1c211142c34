'use strict';
/* Scenarios for message reminders: list, create, delete. */
const { api, refusal, unauthenticated } = require('./core');

/** The newest message in #general `user` can read. */
async function someMessage(s, user) {
  const res = await api(
    s,
    'GET',
    '/messages',
    { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: 'general' }] },
    user,
  );
  if (res.status !== 200 || !res.body.messages.length) throw new Error('no message in general');
  return res.body.messages[0].id;
}

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

/** A new reminder of `user`'s; its id. */
async function reminderOf(s, user) {
  const res = await api(
    s,
    'POST',
    '/reminders',
    { message_id: await someMessage(s, user), scheduled_delivery_timestamp: inAnHour() },
    user,
  );
  if (res.status !== 200) throw new Error(`reminder failed: ${JSON.stringify(res.body)}`);
  return res.body.reminder_id;
}

const scenarios = {
  'get-reminders': {
    200: async (req, s) => {
      req.user = s.users.member;
      await reminderOf(s, s.users.member);
    },
    401: unauthenticated(),
  },
  'create-message-reminder': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = { message_id: await someMessage(s, s.users.member), scheduled_delivery_timestamp: inAnHour() };
    },
    400: refusal('BAD_REQUEST', 'Invalid message(s)', (req, s) => {
      req.user = s.users.member;
      req.body = { message_id: 2147483000, scheduled_delivery_timestamp: inAnHour() };
    }),
    401: unauthenticated(),
  },
  'delete-reminder': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.reminder_id = await reminderOf(s, s.users.member);
    },
    401: unauthenticated((req) => {
      req.pathParams.reminder_id = 1;
    }),
    // Another user's reminder is answered as a missing one.
    404: refusal('BAD_REQUEST', 'Reminder does not exist', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.reminder_id = await reminderOf(s, s.users.owner);
    }),
  },
};

module.exports = { scenarios };
