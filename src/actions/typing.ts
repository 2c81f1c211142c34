import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { accessMessage } from '../access/messages';
import { inGroup, Caller } from '../access/viewer';
import { isGuestRole } from '../domain/roles';
import { normalizeTopic } from '../domain/topics';
import { parseSettings } from '../domain/user-settings';
import { checkCanAccessUsers } from '../access/user-access';
import { ApiError, invalidChannelId } from '../errors';
import type { PublishedEvent } from '../events/shape';
import { getChannelById } from '../queries/channels';
import { nowSeconds } from '../queries/ids';
import { getDmParticipants } from '../queries/messages';
import { getMessageAudience } from '../queries/reactions';
import type { UserRow } from '../queries/rows';
import { listTypingAudience, TypingAudienceRow } from '../queries/typing';
import { RecipientType } from '../domain/recipients';

/**
 * Typing notifications change nothing stored: they go straight to the bus
 * (Zulip's send_event_rollback_unsafe). They reach the conversation's
 * other participants, or the channel's subscribers, whose
 * receives_typing_notifications is on, never the typist (Zulip also
 * notifies the typist's own other clients, which ignore it).
 */

/** Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS: larger channels get no typing notifications at all. */
export const MAX_CHANNEL_SIZE_FOR_TYPING = 100;

const person = (u: Pick<UserRow, 'id' | 'email'>): Schema<'EventPerson'> => ({ user_id: u.id, email: u.email });
const receivesTyping = (settings: string) => parseSettings(settings).receives_typing_notifications;
const dmDisabled = () => new ApiError('User has disabled typing notifications for direct messages');
const channelDisabled = () => new ApiError('User has disabled typing notifications for channel messages');

/** POST /typing, in Zulip's order of checks (zerver/views/typing.py). */
export async function doSetTypingStatus(
  ctx: AppContext,
  viewer: Caller,
  p: Params<'set-typing-status'>,
): Promise<Data<'set-typing-status'>> {
  const sender = viewer.user;
  const settings = parseSettings(sender.settings);
  if (p.type === 'stream' || p.type === 'channel') {
    if (p.stream_id === undefined) throw new ApiError("Missing 'stream_id' argument");
    if (p.topic === undefined) throw new ApiError('Missing topic');
    if (!settings.send_stream_typing_notifications) throw channelDisabled();
    const channel = await getChannelById(ctx.db, sender.realm_id, p.stream_id);
    const subscribed = channel !== undefined && viewer.subscribedRecipients.has(channel.recipient_id);
    if (!channel || !(subscribed || (!channel.invite_only && !isGuestRole(sender.role)))) throw invalidChannelId();
    if (channel.deactivated) throw new ApiError(`Not authorized to send to channel '${channel.name}'`);
    if (!inGroup(viewer, channel.can_send_message_group)) throw new ApiError('You do not have permission to post in this channel.');
    const audience = await channelTypingAudience(ctx, sender.id, channel.recipient_id);
    const event: PublishedEvent<Schema<'TypingEvent'>> = {
      type: 'typing',
      op: p.op,
      message_type: 'stream',
      sender: person(sender),
      stream_id: channel.id,
      topic: normalizeTopic(p.topic),
    };
    if (audience.length) ctx.bus.publish({ event, userIds: audience });
    return {};
  }
  if (p.to === undefined) throw new ApiError("Missing 'to' argument");
  if (p.to.length === 0) throw new ApiError("Empty 'to' list");
  if (!settings.send_private_typing_notifications) throw dmDisabled();
  // The typist is a participant too; a bad id anywhere refuses the whole request (Zulip).
  const ids = [...new Set([...p.to, sender.id])];
  const users = await ctx.caches.users.getMany(ids);
  const bad = ids.find((id) => users.get(id)?.realm_id !== sender.realm_id);
  if (bad !== undefined) throw new ApiError(`Invalid user ID ${bad}`);
  const recipients = ids.map((id) => users.get(id)!);
  await checkCanAccessUsers(ctx.db, viewer, recipients);
  const notify = recipients.filter((u) => u.id !== sender.id && u.is_active && receivesTyping(u.settings)).map((u) => u.id);
  const event: PublishedEvent<Schema<'TypingEvent'>> = {
    type: 'typing',
    op: p.op,
    message_type: 'direct',
    sender: person(sender),
    recipients: recipients.map(person),
  };
  if (notify.length) ctx.bus.publish({ event, userIds: notify });
  return {};
}

/** Subscribers to tell, or nobody in a channel above Zulip's size limit; long-idle users are skipped as Zulip does. */
async function channelTypingAudience(ctx: AppContext, senderId: number, recipientId: number): Promise<number[]> {
  const subscribers = await listTypingAudience(ctx.db, recipientId);
  if (subscribers.length > MAX_CHANNEL_SIZE_FOR_TYPING) return [];
  return audienceOf(subscribers, senderId);
}

const audienceOf = (rows: TypingAudienceRow[], senderId: number) =>
  rows.filter((u) => u.id !== senderId && !u.long_term_idle && receivesTyping(u.settings)).map((u) => u.id);

/**
 * POST /messages/{id}/typing: only someone who may edit the message may
 * say they are editing it (Zulip's validate_user_can_edit_message with no
 * grace period). Receivers are those who would see the edit: in a channel
 * whose history is protected, only subscribers who received the message.
 */
export async function doSetEditTypingStatus(
  ctx: AppContext,
  viewer: Caller,
  p: Params<'set-typing-status-for-message-edit'>,
): Promise<Data<'set-typing-status-for-message-edit'>> {
  const { message_id: messageId, op } = p;
  const sender = viewer.user;
  const { row } = await accessMessage(ctx.db, viewer, messageId);
  const realm = viewer.realm;
  if (!realm.allow_message_editing) throw new ApiError('Your organization has turned off message editing');
  if (row.sender_id !== sender.id) throw new ApiError("You don't have permission to edit this message");
  const limit = realm.message_content_edit_limit_seconds;
  if (limit !== null && nowSeconds() - row.date_sent > limit) throw new ApiError('The time limit for editing this message has passed');
  const settings = parseSettings(sender.settings);
  const base = { type: 'typing_edit_message', op, sender_id: sender.id, message_id: messageId } as const;

  if (row.recipient_type === RecipientType.CHANNEL) {
    if (!settings.send_stream_typing_notifications) throw channelDisabled();
    const channel = (await getChannelById(ctx.db, sender.realm_id, row.recipient_type_id))!;
    let audience = await channelTypingAudience(ctx, sender.id, row.recipient_id);
    if (channel.invite_only && !channel.history_public_to_subscribers) {
      const holders = new Set(await getMessageAudience(ctx.db, messageId));
      audience = audience.filter((id) => holders.has(id));
    }
    // The topic goes out as stored: Zulip does not rename "" for typing_edit_message events.
    const event: PublishedEvent<Schema<'TypingEditMessageEvent'>> = {
      ...base,
      recipient: { type: 'channel', channel_id: channel.id, topic: row.topic },
    };
    if (audience.length) ctx.bus.publish({ event, userIds: audience });
    return {};
  }
  if (!settings.send_private_typing_notifications) throw dmDisabled();
  const participants = (await getDmParticipants(ctx.db, [row.recipient_id])).get(row.recipient_id) ?? [];
  const users = await ctx.caches.users.getMany(participants);
  const notify = participants.filter((id) => {
    const u = users.get(id);
    return id !== sender.id && u !== undefined && u.is_active && receivesTyping(u.settings);
  });
  // As Zulip, the event names the users it is sent to.
  const event: PublishedEvent<Schema<'TypingEditMessageEvent'>> = { ...base, recipient: { type: 'direct', user_ids: notify } };
  if (notify.length) ctx.bus.publish({ event, userIds: notify });
  return {};
}
