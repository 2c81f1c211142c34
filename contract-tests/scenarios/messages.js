'use strict';
/* Scenarios for the messages family: send, fetch, flags, reactions. */
const { api } = require('./core');

/** A fresh message in #general from the owner, visible to the member. */
async function freshMessage(s, content = 'contract test message') {
  const res = await api(s, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'contract', content }, s.users.owner);
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

const noAuth = (req) => { req.user = null; };

const scenarios = {
  'get-messages': {
    200: (req, s) => {
      req.user = s.users.member;
      req.query = { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'channel', operand: 'general' }] };
    },
    400: (req, s) => { req.user = s.users.member; req.query = { anchor: 'sideways', num_before: 1, num_after: 0 }; },
    401: (req) => { noAuth(req); req.query = { anchor: 'newest', num_before: 1, num_after: 0 }; },
  },
  'send-message': {
    200: (req, s) => { req.user = s.users.member; req.body = { type: 'channel', to: 'general', topic: 'contract', content: 'hello :wave:' }; },
    400: (req, s) => { req.user = s.users.member; req.body = { type: 'channel', to: 'no-such-channel', topic: 'x', content: 'x' }; },
    401: noAuth,
  },
  'get-message': {
    200: async (req, s) => { req.user = s.users.member; req.pathParams.message_id = await freshMessage(s); req.query = {}; },
    400: (req, s) => { req.user = s.users.member; req.pathParams.message_id = 999999999; req.query = {}; },
    401: (req) => { noAuth(req); req.pathParams.message_id = 1; req.query = {}; },
  },
  'update-message-flags': {
    200: async (req, s) => { req.user = s.users.member; req.body = { messages: [await freshMessage(s)], op: 'add', flag: 'starred' }; },
    400: async (req, s) => { req.user = s.users.member; req.body = { messages: [await freshMessage(s)], op: 'add', flag: 'mentioned' }; },
    401: noAuth,
  },
  'update-message-flags-for-narrow': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'channel', operand: 'general' }], op: 'add', flag: 'read' };
    },
    400: (req, s) => {
      req.user = s.users.member;
      req.body = { anchor: 'newest', num_before: 1, num_after: 0, narrow: [], op: 'toggle', flag: 'read' };
    },
    401: noAuth,
  },
  'add-reaction': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'octopus' };
    },
    400: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'no_such_emoji_name' };
    },
    401: (req) => { noAuth(req); req.pathParams.message_id = 1; },
  },
  'remove-reaction': {
    200: async (req, s) => {
      req.user = s.users.member;
      const id = await freshMessage(s);
      await api(s, 'POST', `/messages/${id}/reactions`, { emoji_name: 'tada' }, s.users.member);
      req.pathParams.message_id = id;
      req.body = { emoji_name: 'tada' };
    },
    400: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'tada' };
    },
    401: (req) => { noAuth(req); req.pathParams.message_id = 1; },
  },
};

module.exports = { scenarios };
