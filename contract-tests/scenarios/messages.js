'use strict';
/* Scenarios for the messages family: send, fetch, flags, reactions, edit history, reports, deletion. */
const { api, refusal, unauthenticated } = require('./core');
const { runSql } = require('./database');

/** A fresh message in #general from the owner, visible to the member. */
async function freshMessage(s, content = 'contract test message') {
  const res = await api(s, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'contract', content }, s.users.owner);
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

const scenarios = {
  'get-messages': {
    200: (req, s) => {
      req.user = s.users.member;
      req.query = { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'channel', operand: 'general' }] };
    },
    400: refusal('BAD_REQUEST', 'Invalid anchor', (req, s) => {
      req.user = s.users.member;
      req.query = { anchor: 'sideways', num_before: 1, num_after: 0 };
    }),
    401: unauthenticated((req) => {
      req.query = { anchor: 'newest', num_before: 1, num_after: 0 };
    }),
  },
  'check-messages-match-narrow': {
    200: (req, s) => {
      req.user = s.users.member;
      req.query = { msg_ids: [1, 2, 3], narrow: [{ operator: 'channel', operand: 'general' }] };
    },
    400: refusal(
      'REQUEST_VARIABLE_MISSING',
      "Missing 'narrow' argument",
      (req, s) => {
        req.user = s.users.member;
        req.query = { msg_ids: [1] };
      },
      { var_name: 'narrow' },
    ),
    401: unauthenticated((req) => {
      req.query = { msg_ids: [1], narrow: [] };
    }),
  },
  'send-message': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { type: 'channel', to: 'general', topic: 'contract', content: 'hello :wave:' };
    },
    400: refusal(
      'STREAM_DOES_NOT_EXIST',
      "Channel 'no-such-channel' does not exist",
      (req, s) => {
        req.user = s.users.member;
        req.body = { type: 'channel', to: 'no-such-channel', topic: 'x', content: 'x' };
      },
      { stream: 'no-such-channel' },
    ),
    401: unauthenticated(),
  },
  'get-message': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.query = {};
    },
    400: refusal('BAD_REQUEST', 'Invalid message(s)', (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = 999999999;
      req.query = {};
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
      req.query = {};
    }),
  },
  'update-message-flags': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = { messages: [await freshMessage(s)], op: 'add', flag: 'starred' };
    },
    400: refusal('BAD_REQUEST', "Flag not editable: 'mentioned'", async (req, s) => {
      req.user = s.users.member;
      req.body = { messages: [await freshMessage(s)], op: 'add', flag: 'mentioned' };
    }),
    401: unauthenticated(),
  },
  'update-message-flags-for-narrow': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = {
        anchor: 'newest',
        num_before: 50,
        num_after: 0,
        narrow: [{ operator: 'channel', operand: 'general' }],
        op: 'add',
        flag: 'read',
      };
    },
    400: refusal('BAD_REQUEST', "Invalid message flag operation: 'toggle'", (req, s) => {
      req.user = s.users.member;
      req.body = { anchor: 'newest', num_before: 1, num_after: 0, narrow: [], op: 'toggle', flag: 'read' };
    }),
    401: unauthenticated(),
  },
  'add-reaction': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'octopus' };
    },
    400: refusal('BAD_REQUEST', "Emoji 'no_such_emoji_name' does not exist", async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'no_such_emoji_name' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
  'remove-reaction': {
    200: async (req, s) => {
      req.user = s.users.member;
      const id = await freshMessage(s);
      await api(s, 'POST', `/messages/${id}/reactions`, { emoji_name: 'tada' }, s.users.member);
      req.pathParams.message_id = id;
      req.body = { emoji_name: 'tada' };
    },
    400: refusal('REACTION_DOES_NOT_EXIST', "Reaction doesn't exist.", async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { emoji_name: 'tada' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
  'update-message': {
    200: async (req, s) => {
      req.user = s.users.member;
      const res = await api(
        s,
        'POST',
        '/messages',
        { type: 'channel', to: 'general', topic: 'contract', content: 'to be edited' },
        s.users.member,
      );
      if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
      req.pathParams.message_id = res.body.id;
      req.body = { content: 'edited by the contract test', topic: 'contract edited' };
    },
    400: refusal('BAD_REQUEST', "You don't have permission to edit this message", async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { content: "not the sender's to edit" };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
  'get-message-history': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s, 'history of a contract test message');
      req.query = { allow_empty_topic_name: true };
    },
    400: refusal('BAD_REQUEST', 'Invalid message(s)', (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = 999999999;
      req.query = {};
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
      req.query = {};
    }),
  },
  'report-message': {
    // The demo organization sends reports to #leadership (its moderation request channel).
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s, 'a contract test message to report');
      req.body = { report_type: 'spam', description: 'Unsolicited advertising.' };
    },
    400: refusal('BAD_REQUEST', 'An explanation is required.', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s);
      req.body = { report_type: 'other' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
  'add-submessage': {
    200: async (req, s) => {
      req.user = s.users.member;
      const poll = await freshMessage(s, '/poll Contract?\nYes\nNo');
      req.body = { message_id: poll, msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }) };
    },
    400: refusal('BAD_REQUEST', 'You cannot attach a submessage to this message.', async (req, s) => {
      req.user = s.users.member;
      req.body = { message_id: await freshMessage(s), msg_type: 'widget', content: '{"type":"vote","key":"k","vote":1}' };
    }),
    401: unauthenticated(),
  },
  'render-message': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { content: '**bold** @**Adam Admin** #**general**' };
    },
    400: refusal(
      'REQUEST_VARIABLE_MISSING',
      "Missing 'content' argument",
      (req, s) => {
        req.user = s.users.member;
        req.body = {};
      },
      { var_name: 'content' },
    ),
    401: unauthenticated(),
  },
};

module.exports = { scenarios };

/** Fails the scenario unless the request answers this Zulip error (for the errors beyond the one a status's transaction checks). */
async function expectRefusal(s, method, apiPath, fields, user, code, msg) {
  const res = await api(s, method, apiPath, fields, user);
  if (res.status !== 400 || res.body.code !== code || res.body.msg !== msg) {
    throw new Error(`${method} ${apiPath}: expected ${code} "${msg}", got ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** The id of #general (from a message sent there). */
async function generalId(s) {
  const id = await freshMessage(s);
  const res = await api(s, 'GET', `/messages/${id}`, {}, s.users.owner);
  return res.body.message.stream_id;
}

Object.assign(scenarios, {
  'delete-message': {
    200: async (req, s) => {
      req.user = s.users.member;
      const res = await api(
        s,
        'POST',
        '/messages',
        { type: 'channel', to: 'general', topic: 'contract', content: 'mine to delete' },
        s.users.member,
      );
      req.pathParams.message_id = res.body.id;
    },
    // The transaction checks a member deleting someone else's message; the other documented errors are checked here.
    400: refusal('BAD_REQUEST', "You don't have permission to delete this message", async (req, s) => {
      await expectRefusal(s, 'DELETE', '/messages/999999999', {}, s.users.member, 'BAD_REQUEST', 'Invalid message(s)');
      const gone = await freshMessage(s, 'deleted twice');
      await api(s, 'DELETE', `/messages/${gone}`, {}, s.users.owner);
      await expectRefusal(s, 'DELETE', `/messages/${gone}`, {}, s.users.owner, 'BAD_REQUEST', 'Invalid message(s)');
      const old = await api(
        s,
        'POST',
        '/messages',
        { type: 'channel', to: 'general', topic: 'contract', content: 'too old' },
        s.users.member,
      );
      await runSql('UPDATE messages SET date_sent = date_sent - 7200 WHERE id = ?', [old.body.id]);
      await runSql('UPDATE realms SET message_content_delete_limit_seconds = 3600');
      try {
        await expectRefusal(
          s,
          'DELETE',
          `/messages/${old.body.id}`,
          {},
          s.users.member,
          'BAD_REQUEST',
          'The time limit for deleting this message has passed',
        );
      } finally {
        await runSql('UPDATE realms SET message_content_delete_limit_seconds = NULL');
      }
      req.user = s.users.member;
      req.pathParams.message_id = await freshMessage(s, 'not the member’s');
    }),
    401: unauthenticated((req) => {
      req.pathParams.message_id = 1;
    }),
  },
  'delete-topic': {
    200: async (req, s) => {
      req.user = s.users.admin;
      const streamId = await generalId(s);
      for (const content of ['one', 'two']) {
        await api(s, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'contract deletion', content }, s.users.member);
      }
      req.pathParams.stream_id = streamId;
      req.body = { topic_name: 'contract deletion' };
    },
    // The transaction checks a member; the other documented errors are checked here.
    400: refusal('UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator', async (req, s) => {
      const streamId = await generalId(s);
      await expectRefusal(
        s,
        'POST',
        '/streams/999999999/delete_topic',
        { topic_name: 'x' },
        s.users.admin,
        'BAD_REQUEST',
        'Invalid channel ID',
      );
      await expectRefusal(
        s,
        'POST',
        `/streams/${streamId}/delete_topic`,
        {},
        s.users.admin,
        'REQUEST_VARIABLE_MISSING',
        "Missing 'topic_name' argument",
      );
      req.user = s.users.member;
      req.pathParams.stream_id = streamId;
      req.body = { topic_name: 'contract' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.stream_id = 1;
    }),
  },
});
