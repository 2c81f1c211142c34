import { accessChannelIdByName, getChannel, getSubscriptionStatus, listChannelMembers, listChannels, listTopics } from '../access/channels';
import { subscriberListMode } from '../access/subscriber-lists';
import { getSubscriptions } from '../access/subscriptions';
import { doArchiveChannel } from '../actions/archive-channel';
import { doGetChannelEmailAddress } from '../actions/channel-email';
import { doCreateChannel } from '../actions/create-channel';
import { doAddDefaultChannel, doRemoveDefaultChannel } from '../actions/default-channels';
import { doUpdateChannel } from '../actions/update-channel';
import { doAcceptMultiuseInvite, doCreateMultiuseInvite } from '../actions/invites';
import { doUpdateSubscriptionProperties } from '../actions/subscription-properties';
import { doSubscribe, doUnsubscribe, doUpdateSubscriptions } from '../actions/subscriptions';
import { caller, HandlerTable } from '../http/handler';

export const channelHandlers: HandlerTable = {
  'get-subscriptions': async (call) => {
    const viewer = caller(call);
    return { subscriptions: await getSubscriptions(call.ctx.db, viewer, subscriberListMode(call.params.include_subscribers)) };
  },

  'create-channel': async (call) => {
    const viewer = caller(call);
    return doCreateChannel(call.ctx, viewer, call.params);
  },

  subscribe: async (call) => {
    const viewer = caller(call);
    return doSubscribe(call.ctx, viewer, call.params);
  },

  unsubscribe: async (call) => {
    const viewer = caller(call);
    return doUnsubscribe(call.ctx, viewer, call.params);
  },

  'update-subscription-property': async (call) => {
    const viewer = caller(call);
    await doUpdateSubscriptionProperties(call.ctx, viewer, [call.params]);
    return {};
  },

  'update-subscription-settings': async (call) => {
    const viewer = caller(call);
    await doUpdateSubscriptionProperties(call.ctx, viewer, call.params.subscription_data);
    return {};
  },

  'create-invite-link': async (call) => {
    const viewer = caller(call);
    return { invite_link: await doCreateMultiuseInvite(call.ctx, viewer, call.params, call.sent) };
  },

  'accept-invite-link': async (call) => {
    const user = await doAcceptMultiuseInvite(call.ctx, call.params.invite_key, call.params);
    return { user_id: user.id, email: user.email, api_key: user.api_key };
  },

  'get-streams': async (call) => {
    const viewer = caller(call);
    return { streams: await listChannels(call.ctx.db, viewer, call.params) };
  },

  'get-stream-by-id': async (call) => {
    const viewer = caller(call);
    return { stream: await getChannel(call.ctx.db, viewer, call.params.stream_id) };
  },

  'get-stream-id': async (call) => {
    const viewer = caller(call);
    return { stream_id: await accessChannelIdByName(call.ctx.db, viewer, call.params.stream) };
  },

  'get-stream-topics': async (call) => {
    const viewer = caller(call);
    return {
      topics: await listTopics(call.ctx.db, call.ctx.caches, viewer, call.params.stream_id, call.params.allow_empty_topic_name ?? false),
    };
  },

  'update-subscriptions': async (call) => {
    const viewer = caller(call);
    return doUpdateSubscriptions(call.ctx, viewer, call.params);
  },

  'update-stream': async (call) => {
    const viewer = caller(call);
    await doUpdateChannel(call.ctx, viewer, call.params);
    return {};
  },

  'archive-stream': async (call) => {
    const viewer = caller(call);
    await doArchiveChannel(call.ctx, viewer, call.params.stream_id);
    return {};
  },

  'get-subscribers': async (call) => {
    const viewer = caller(call);
    return { subscribers: await listChannelMembers(call.ctx.db, viewer, call.params.stream_id) };
  },

  'get-stream-email-address': async (call) => {
    const viewer = caller(call);
    return doGetChannelEmailAddress(call.ctx, viewer, call.params.stream_id, call.params.sender_id);
  },

  'get-subscription-status': async (call) => {
    const viewer = caller(call);
    return { is_subscribed: await getSubscriptionStatus(call.ctx.db, viewer, call.params.user_id, call.params.stream_id) };
  },

  'add-default-stream': async (call) => {
    const viewer = caller(call);
    await doAddDefaultChannel(call.ctx, viewer, call.params.stream_id);
    return {};
  },

  'remove-default-stream': async (call) => {
    const viewer = caller(call);
    await doRemoveDefaultChannel(call.ctx, viewer, call.params.stream_id);
    return {};
  },
};
