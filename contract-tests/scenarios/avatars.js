'use strict';
/* Scenarios for avatars: POST and DELETE /users/me/avatar, GET /avatar/{user_id_or_email} and its /medium form. */
const { refusal, unauthenticated } = require('./core');

/** A 1x1 PNG, sent as bytes (hooks.js setBody). */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const png = (filename) => ({ __file: true, filename, content: PNG, contentType: 'image/png' });

const scenarios = {
  'upload-avatar': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { file: png('avatar.png') };
    },
    // The example's `filename` is a text field: a body without a file part.
    400: refusal('BAD_REQUEST', 'You must upload exactly one avatar.', (req, s) => {
      req.user = s.users.member;
      req.body = { filename: 'avatar.png' };
    }),
    401: unauthenticated((req) => {
      req.body = { file: png('avatar.png') };
    }),
  },
  'delete-avatar': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    401: unauthenticated(),
  },
  'get-avatar': {
    302: (req, s) => {
      req.user = s.users.member;
      req.pathParams = { user_id_or_email: String(s.users.owner.id) };
    },
    401: unauthenticated(),
  },
  'get-avatar-medium': {
    302: (req, s) => {
      req.user = s.users.member;
      req.pathParams = { user_id_or_email: String(s.users.owner.id) };
    },
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
