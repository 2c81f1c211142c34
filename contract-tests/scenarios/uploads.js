'use strict';
/* Scenarios for uploaded files: POST /user_uploads and the temporary URL of one. */
/* global FormData, Blob */
const { refusal, unauthenticated } = require('./core');

/** A file part for hooks.js setBody. */
const file = (filename, content, contentType = 'text/plain') => ({ __file: true, filename, content, contentType });

/** Uploads a file as `user` (multipart, as clients send it) and returns its path id's four segments. */
async function uploaded(state, user, name) {
  const form = new FormData();
  form.append('file', new Blob(['contract test file'], { type: 'text/plain' }), name);
  const res = await fetch(`${state.base}/api/v1/user_uploads`, {
    method: 'POST',
    headers: { Authorization: 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64') },
    body: form,
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`upload failed: ${JSON.stringify(body)}`);
  const [realm_id_str, bucket, token, filename] = body.url.slice('/user_uploads/'.length).split('/');
  return { realm_id_str, bucket, token, filename };
}

const scenarios = {
  'upload-file': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { file: file('notes.txt', 'hello from the contract tests') };
    },
    // The example's `filename` is a text field: a body without a file part.
    400: refusal('BAD_REQUEST', 'You must specify a file to upload', (req, s) => {
      req.user = s.users.member;
      req.body = { filename: 'notes.txt' };
    }),
    401: unauthenticated((req) => {
      req.body = { file: file('notes.txt', 'unauthenticated') };
    }),
  },
  'get-file-temporary-url': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams = await uploaded(s, s.users.member, 'temporary.txt');
    },
    // Another user's file that no message links: answered as a missing one.
    404: refusal('BAD_REQUEST', 'File not found.', async (req, s) => {
      req.user = s.users.member2;
      req.pathParams = await uploaded(s, s.users.member, 'private.txt');
    }),
    401: unauthenticated((req) => {
      req.pathParams = { realm_id_str: '1', bucket: 'ab', token: 'AAAAAAAAAAAAAAAAAAAAAAAA', filename: 'none.txt' };
    }),
  },
};

module.exports = { scenarios };
