'use strict';
/* Scenarios for saved snippets: list, create, edit, delete. */
const { api, refusal, unauthenticated } = require('./core');

/** A new snippet of `user`'s; its id. */
async function snippetOf(s, user, title = 'Contract snippet') {
  const res = await api(s, 'POST', '/saved_snippets', { title, content: 'Saved by the contract tests.' }, user);
  if (res.status !== 200) throw new Error(`create snippet failed: ${JSON.stringify(res.body)}`);
  return res.body.saved_snippet_id;
}

const NOT_FOUND = 'Saved snippet does not exist.';

const scenarios = {
  'get-saved-snippets': {
    200: async (req, s) => {
      req.user = s.users.member;
      await snippetOf(s, s.users.member);
    },
    401: unauthenticated(),
  },
  'create-saved-snippet': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    400: refusal('BAD_REQUEST', 'title cannot be blank', (req, s) => {
      req.user = s.users.member;
      req.body.title = '   ';
    }),
    401: unauthenticated(),
  },
  'edit-saved-snippet': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.saved_snippet_id = await snippetOf(s, s.users.member);
    },
    400: refusal('BAD_REQUEST', 'title is too long (limit: 60 characters)', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.saved_snippet_id = await snippetOf(s, s.users.member);
      req.body.title = 'x'.repeat(61);
    }),
    401: unauthenticated((req) => {
      req.pathParams.saved_snippet_id = 1;
    }),
    // Another user's snippet is answered as a missing one.
    404: refusal('BAD_REQUEST', NOT_FOUND, async (req, s) => {
      req.user = s.users.member;
      req.pathParams.saved_snippet_id = await snippetOf(s, s.users.owner);
    }),
  },
  'delete-saved-snippet': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.saved_snippet_id = await snippetOf(s, s.users.member);
    },
    401: unauthenticated((req) => {
      req.pathParams.saved_snippet_id = 1;
    }),
    404: refusal('BAD_REQUEST', NOT_FOUND, async (req, s) => {
      req.user = s.users.member;
      req.pathParams.saved_snippet_id = await snippetOf(s, s.users.owner);
    }),
  },
};

module.exports = { scenarios };
