'use strict';
/* Scenarios for the legacy push tokens: APNs (iOS) and FCM (Android). */
const { api, refusal, unauthenticated } = require('./core');

let counter = 0;
/** A hex token no other scenario uses. */
const freshToken = () => (Date.now().toString(16) + (counter++).toString(16).padStart(4, '0')).padStart(64, '0').slice(-64);

const scenarios = {
  'add-apns-token': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body.token = freshToken();
    },
    400: refusal('BAD_REQUEST', 'Invalid APNS token', (req, s) => {
      req.user = s.users.member;
      req.body.token = 'not-hex';
    }),
    401: unauthenticated(),
  },
  'remove-apns-token': {
    200: async (req, s) => {
      req.user = s.users.member;
      const token = freshToken();
      const res = await api(s, 'POST', '/users/me/apns_device_token', { token, appid: 'org.example.parley' }, s.users.member);
      if (res.status !== 200) throw new Error(`add token failed: ${JSON.stringify(res.body)}`);
      req.body.token = token;
    },
    // The token exists, but it is another user's.
    400: refusal('BAD_REQUEST', 'Token does not exist', async (req, s) => {
      const token = freshToken();
      await api(s, 'POST', '/users/me/apns_device_token', { token, appid: 'org.example.parley' }, s.users.owner);
      req.user = s.users.member;
      req.body.token = token;
    }),
    401: unauthenticated(),
  },
  'add-fcm-token': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body.token = `fcm-${freshToken()}`;
    },
    400: refusal('BAD_REQUEST', 'Empty or invalid length token', (req, s) => {
      req.user = s.users.member;
      req.body.token = '';
    }),
    401: unauthenticated(),
  },
  'remove-fcm-token': {
    200: async (req, s) => {
      req.user = s.users.member;
      const token = `fcm-${freshToken()}`;
      const res = await api(s, 'POST', '/users/me/android_gcm_reg_id', { token }, s.users.member);
      if (res.status !== 200) throw new Error(`add token failed: ${JSON.stringify(res.body)}`);
      req.body.token = token;
    },
    400: refusal('BAD_REQUEST', 'Token does not exist', (req, s) => {
      req.user = s.users.member;
      req.body.token = `fcm-${freshToken()}`;
    }),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
