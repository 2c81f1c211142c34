'use strict';
/* Scenarios for a user's uploads: GET /attachments and DELETE /attachments/{attachment_id}. */
/* global FormData, Blob */
const { api, refusal, unauthenticated } = require('./core');

/** Uploads a file as `user` (multipart, as clients send it); its attachment id. */
async function attachmentOf(state, user) {
  const form = new FormData();
  form.append('file', new Blob(['contract test attachment'], { type: 'text/plain' }), 'attachment.txt');
  const res = await fetch(`${state.base}/api/v1/user_uploads`, {
    method: 'POST',
    headers: { Authorization: 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64') },
    body: form,
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`upload failed: ${JSON.stringify(body)}`);
  const pathId = body.url.slice('/user_uploads/'.length);
  const list = await api(state, 'GET', '/attachments', {}, user);
  const found = list.body.attachments.find((a) => a.path_id === pathId);
  if (!found) throw new Error(`uploaded file not listed: ${JSON.stringify(list.body)}`);
  return found.id;
}

const scenarios = {
  'get-attachments': {
    200: async (req, s) => {
      req.user = s.users.member;
      await attachmentOf(s, s.users.member);
    },
    401: unauthenticated(),
  },
  'remove-attachment': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.attachment_id = await attachmentOf(s, s.users.member);
    },
    // Another user's upload is answered as a missing one, even to an administrator.
    400: refusal('BAD_REQUEST', 'Invalid attachment', async (req, s) => {
      req.user = s.users.admin;
      req.pathParams.attachment_id = await attachmentOf(s, s.users.member);
    }),
    401: unauthenticated((req) => {
      req.pathParams.attachment_id = 1;
    }),
  },
};

module.exports = { scenarios };
