'use strict';
/*
 * Scenarios for the device registry and end-to-end encrypted push
 * registration. run.sh starts a stand-in relay, so the server has a push
 * service and registration succeeds; PUSH_SERVICE_NOT_CONFIGURED (no relay)
 * is tested by jest (test/push-register.test.ts), as are the other refusals.
 */
const { api, refusal, unauthenticated } = require('./core');
const { runSql } = require('./database');

/** A new device of the user (POST /register_client_device): each scenario registers its own. */
async function newDevice(s, user) {
  const res = await api(s, 'POST', '/register_client_device', {}, user);
  if (res.status !== 200) throw new Error(`register_client_device failed: ${JSON.stringify(res.body)}`);
  return res.body.device_id;
}

const scenarios = {
  'register-client-device': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    // Fixture: the guest has 1,000 devices already (a user who never logs out).
    400: refusal('BAD_REQUEST', 'Too many devices registered (the limit is 1000); remove one first.', async (req, s) => {
      req.user = s.users.guest;
      await runSql(
        'INSERT INTO client_devices (user_id, date_created) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) SELECT ?, 0 FROM n',
        [s.users.guest.id],
      );
    }),
    401: unauthenticated(),
  },
  'remove-client-device': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body.device_id = await newDevice(s, s.users.member);
    },
    // The device exists, but it is another user's.
    400: refusal('BAD_REQUEST', 'Invalid `device_id`', async (req, s) => {
      req.user = s.users.member;
      req.body.device_id = await newDevice(s, s.users.owner);
    }),
    401: unauthenticated(),
  },
  'register-push-device': {
    // The example body is a complete first registration.
    200: async (req, s) => {
      req.user = s.users.member;
      req.body.device_id = await newDevice(s, s.users.member);
    },
    // Rotating the key of a device that was never registered for push.
    400: refusal('BAD_REQUEST', 'No push registration exists to rotate key for.', async (req, s) => {
      req.user = s.users.member;
      req.body = { device_id: await newDevice(s, s.users.member), push_key: req.body.push_key, push_key_id: req.body.push_key_id };
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
