'use strict';
/* Scenarios for channels, subscriptions and invitation links. */
const { api, channelId, fresh, refusal, unauthenticated } = require('./core');

let counter = 0;
const uniqueName = (prefix) => `${prefix}-${Date.now().toString(36)}-${counter++}`;

/** A new public channel `user` creates (and so administers); its id. */
async function newChannel(s, user) {
  const res = await api(s, 'POST', '/channels/create', { name: uniqueName('admin'), subscribers: [user.id] }, user);
  if (res.status !== 200) throw new Error(`create failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function inviteKey(s) {
  const res = await api(s, 'POST', '/invites/multiuse', {}, s.users.admin);
  if (res.status !== 200) throw new Error(`invite failed: ${JSON.stringify(res.body)}`);
  return /\/join\/([a-z0-9]+)\/$/.exec(res.body.invite_link)[1];
}

const scenarios = {
  'get-subscriptions': {
    200: (req, s) => {
      req.user = s.users.member;
      req.query = { include_subscribers: 'partial' };
    },
    400: refusal('BAD_REQUEST', 'Invalid include_subscribers', (req, s) => {
      req.user = s.users.member;
      req.query = { include_subscribers: 'sometimes' };
    }),
    401: unauthenticated((req) => {
      req.query = {};
    }),
  },
  'create-channel': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { name: uniqueName('contract'), subscribers: [s.users.member.id], description: 'made by the contract tests' };
    },
    400: refusal('BAD_REQUEST', 'Not allowed for guest users', (req, s) => {
      req.user = s.users.guest;
      req.body = { name: uniqueName('guest'), subscribers: [s.users.guest.id] };
    }),
    401: unauthenticated(),
    409: refusal('CHANNEL_ALREADY_EXISTS', "Channel 'general' already exists", (req, s) => {
      req.user = s.users.member;
      req.body = { name: 'general', subscribers: [s.users.member.id] };
    }),
  },
  subscribe: {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { subscriptions: [{ name: 'general' }, { name: uniqueName('joined') }] };
    },
    400: refusal('BAD_REQUEST', 'Unable to access channel (hr).', (req, s) => {
      req.user = s.users.member;
      req.body = { subscriptions: [{ name: 'hr' }] };
    }),
    401: unauthenticated(),
  },
  unsubscribe: {
    200: async (req, s) => {
      const name = uniqueName('leave');
      await api(s, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }] }, s.users.member);
      req.user = s.users.member;
      req.body = { subscriptions: [name] };
    },
    400: refusal('BAD_REQUEST', 'Channel(s) (no-such-channel) do not exist', (req, s) => {
      req.user = s.users.member;
      req.body = { subscriptions: ['no-such-channel'] };
    }),
    401: unauthenticated(),
  },
  'update-subscription-property': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
      req.body = { property: 'pin_to_top', value: true };
    },
    400: refusal('BAD_REQUEST', 'Unknown subscription property: sparkle', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
      req.body = { property: 'sparkle', value: true };
    }),
    401: unauthenticated((req) => {
      req.pathParams.stream_id = 1;
    }),
  },
  'update-subscription-settings': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.body = { subscription_data: [{ stream_id: await channelId(s, 'general'), property: 'color', value: '#76ce90' }] };
    },
    400: refusal('BAD_REQUEST', 'color is not a valid hex color code', async (req, s) => {
      req.user = s.users.member;
      req.body = { subscription_data: [{ stream_id: await channelId(s, 'general'), property: 'color', value: 'green' }] };
    }),
    401: unauthenticated(),
  },
  'create-invite-link': {
    200: (req, s) => {
      req.user = s.users.admin;
      req.body = { invite_as: 400, include_realm_default_subscriptions: true };
    },
    400: refusal('BAD_REQUEST', 'Insufficient permission', (req, s) => {
      req.user = s.users.member;
      req.body = {};
    }),
    401: unauthenticated(),
  },
  'accept-invite-link': {
    200: async (req, s) => {
      req.user = null;
      req.pathParams.invite_key = await inviteKey(s);
      req.body = { email: fresh('joined'), password: 'a-good-password', full_name: 'Con Tract' };
    },
    400: refusal('INVALID_INVITATION', 'The invitation link has expired or is not valid.', (req) => {
      req.user = null;
      req.pathParams.invite_key = 'nosuchkeyatall';
      req.body = { email: fresh('nobody'), password: 'a-good-password', full_name: 'No Body' };
    }),
  },
  'get-streams': {
    200: (req, s) => {
      req.user = s.users.member;
      req.query = { include_default: true, exclude_archived: false };
    },
    401: unauthenticated(),
  },
  'get-stream-by-id': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
    },
    400: refusal('BAD_REQUEST', 'Invalid channel ID', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'hr');
    }),
    401: unauthenticated(async (req, s) => {
      req.pathParams.stream_id = await channelId(s, 'general');
    }),
  },
  'get-stream-id': {
    200: (req, s) => {
      req.user = s.users.member;
      req.query = { stream: 'General' };
    },
    400: refusal('BAD_REQUEST', "Invalid channel name 'hr'", (req, s) => {
      req.user = s.users.member;
      req.query = { stream: 'hr' };
    }),
    401: unauthenticated((req) => {
      req.query = { stream: 'general' };
    }),
  },
  'get-stream-topics': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
      req.query = { allow_empty_topic_name: true };
    },
    400: refusal('BAD_REQUEST', 'Invalid channel ID', async (req, s) => {
      req.user = s.users.guest;
      req.pathParams.stream_id = await channelId(s, 'hr');
    }),
    401: unauthenticated(async (req, s) => {
      req.pathParams.stream_id = await channelId(s, 'general');
    }),
  },

  // Channel administration.
  'update-subscriptions': {
    200: async (req, s) => {
      const name = uniqueName('bulk');
      await api(s, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }] }, s.users.member);
      req.user = s.users.member;
      req.body = { add: [{ name: 'general' }], delete: [name] };
    },
    400: refusal('BAD_REQUEST', 'Nothing to do. Specify at least one of "add" or "delete".', (req, s) => {
      req.user = s.users.member;
      req.body = { add: [] };
    }),
    401: unauthenticated(),
  },
  'update-stream': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await newChannel(s, s.users.member);
      req.body = { description: 'Changed by the contract tests', new_name: uniqueName('renamed') };
    },
    400: refusal('CANNOT_ADMINISTER_CHANNEL', 'You do not have permission to administer this channel.', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
      req.body = { description: 'not mine' };
    }),
    401: unauthenticated(async (req, s) => {
      req.pathParams.stream_id = await channelId(s, 'general');
      req.body = { description: 'nobody' };
    }),
  },
  'archive-stream': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await newChannel(s, s.users.member);
    },
    400: refusal('CANNOT_ADMINISTER_CHANNEL', 'You do not have permission to administer this channel.', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
    }),
    401: unauthenticated(async (req, s) => {
      req.pathParams.stream_id = await channelId(s, 'general');
    }),
  },
  'get-subscribers': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
    },
    400: refusal('BAD_REQUEST', 'Invalid channel ID', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'hr');
    }),
    401: unauthenticated(async (req, s) => {
      req.pathParams.stream_id = await channelId(s, 'general');
    }),
  },
  'get-stream-email-address': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
    },
    400: refusal('BAD_REQUEST', 'No such bot', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.stream_id = await channelId(s, 'general');
      req.query = { sender_id: s.users.admin.id };
    }),
    401: unauthenticated(async (req, s) => {
      req.pathParams.stream_id = await channelId(s, 'general');
    }),
  },
  'get-subscription-status': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_id = s.users.member.id;
      req.pathParams.stream_id = await channelId(s, 'general');
    },
    400: refusal('BAD_REQUEST', 'No such user', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_id = 2147483000;
      req.pathParams.stream_id = await channelId(s, 'general');
    }),
    401: unauthenticated(async (req, s) => {
      req.pathParams.user_id = s.users.member.id;
      req.pathParams.stream_id = await channelId(s, 'general');
    }),
  },
  'add-default-stream': {
    200: async (req, s) => {
      req.user = s.users.admin;
      req.body = { stream_id: await newChannel(s, s.users.admin) };
    },
    400: refusal('UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator', async (req, s) => {
      req.user = s.users.member;
      req.body = { stream_id: await channelId(s, 'general') };
    }),
    401: unauthenticated(async (req, s) => {
      req.body = { stream_id: await channelId(s, 'general') };
    }),
  },
  'remove-default-stream': {
    200: async (req, s) => {
      req.user = s.users.admin;
      const id = await newChannel(s, s.users.admin);
      await api(s, 'POST', '/default_streams', { stream_id: id }, s.users.admin);
      req.body = { stream_id: id };
    },
    400: refusal('BAD_REQUEST', 'Invalid channel ID', (req, s) => {
      req.user = s.users.admin;
      req.body = { stream_id: 2147483000 };
    }),
    401: unauthenticated(async (req, s) => {
      req.body = { stream_id: await channelId(s, 'general') };
    }),
  },
};

module.exports = { scenarios };
