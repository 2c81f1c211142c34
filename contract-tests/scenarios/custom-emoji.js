'use strict';
/* Scenarios for custom emoji: GET /realm/emoji, POST and DELETE /realm/emoji/{emoji_name}. */
/* global FormData, Blob */
const { refusal, unauthenticated } = require('./core');

/** An 8×8 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAYAAADED76LAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEklEQVQYlWMwXlX+Hx9mGBkKAHJclMFBAOu5AAAAAElFTkSuQmCC',
  'base64',
);
/** A file part for hooks.js setBody (binary content is sent base64-encoded). */
const image = (content = PNG, contentType = 'image/png') => ({ __file: true, filename: 'emoji.png', content, contentType });

let unique = 0;
const freshName = (prefix) => `${prefix}_${Date.now().toString(36)}${unique++}`;

/** Uploads a custom emoji as `user` (multipart, as clients send it); returns its name. */
async function uploadedEmoji(state, user, prefix) {
  const name = freshName(prefix);
  const form = new FormData();
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'emoji.png');
  const res = await fetch(`${state.base}/api/v1/realm/emoji/${name}`, {
    method: 'POST',
    headers: { Authorization: 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64') },
    body: form,
  });
  if (res.status !== 200) throw new Error(`emoji upload failed: ${await res.text()}`);
  return name;
}

const scenarios = {
  'get-custom-emoji': {
    200: async (req, s) => {
      req.user = s.users.member;
      // Something to list: one active emoji.
      await uploadedEmoji(s, s.users.member, 'listed');
    },
    401: unauthenticated(),
  },
  'upload-custom-emoji': {
    200: (req, s) => {
      req.user = s.users.member;
      req.pathParams = { emoji_name: freshName('contract') };
      req.body = { file: image() };
    },
    400: refusal('BAD_IMAGE', 'Invalid image format', (req, s) => {
      req.user = s.users.member;
      req.pathParams = { emoji_name: freshName('text') };
      // A declared type that is not an image's (a part declared text/plain, or none, would be read by its name).
      req.body = { file: image(Buffer.from('%PDF-1.4'), 'application/pdf') };
    }),
    401: unauthenticated((req) => {
      req.pathParams = { emoji_name: freshName('anonymous') };
      req.body = { file: image() };
    }),
  },
  'deactivate-custom-emoji': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams = { emoji_name: await uploadedEmoji(s, s.users.member, 'doomed') };
    },
    // Neither an administrator nor the author.
    400: refusal('BAD_REQUEST', 'Must be an organization administrator or emoji author', async (req, s) => {
      req.user = s.users.member2;
      req.pathParams = { emoji_name: await uploadedEmoji(s, s.users.member, 'kept') };
    }),
    401: unauthenticated((req) => {
      req.pathParams = { emoji_name: 'anything' };
    }),
  },
};

module.exports = { scenarios };
