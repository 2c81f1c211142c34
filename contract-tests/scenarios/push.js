'use strict';
/*
 * Scenarios for end-to-end encrypted push registration. run.sh starts a
 * stand-in relay, so the server has a push service and registration
 * succeeds; PUSH_SERVICE_NOT_CONFIGURED (no relay) is tested by jest
 * (test/push-register.test.ts), as are the other refusals.
 */
const { refusal, unauthenticated } = require('./core');

let counter = 0;
/** A device id no other scenario used: each run registers new devices. */
const freshDevice = () => (Date.now() % 1_000_000_000) + counter++;

const scenarios = {
  'register-push-device': {
    // The example body is a complete first registration.
    200: (req, s) => {
      req.user = s.users.member;
      req.body.device_id = freshDevice();
    },
    // Rotating the key of a device that was never registered.
    400: refusal('BAD_REQUEST', 'No push registration exists to rotate key for.', (req, s) => {
      req.user = s.users.member;
      req.body = { device_id: freshDevice(), push_key: req.body.push_key, push_key_id: req.body.push_key_id };
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
