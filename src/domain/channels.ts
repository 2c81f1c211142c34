import { ApiError } from '../errors';
import type { SystemGroupName } from './roles';

export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;

/** Zulip's channel name rules: trimmed, non-empty, ≤ 60 characters, no control or private-use characters. */
export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw new ApiError("Channel name can't be empty.");
  const chars = [...name];
  if (chars.length > MAX_CHANNEL_NAME_LENGTH) {
    throw new ApiError(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
  }
  chars.forEach((c, i) => {
    if (/[\p{Cc}\p{Cs}\p{Co}\p{Cn}]/u.test(c)) throw new ApiError(`Invalid character in channel name, at position ${i + 1}.`);
  });
  return name;
}

export const channelNameKey = (name: string) => name.trim().toLowerCase();

/**
 * Channel permission defaults. 'channel_creator' is an anonymous group holding
 * the creator (Zulip's default for can_administer_channel_group).
 */
export const CHANNEL_GROUP_DEFAULTS: Record<string, SystemGroupName | 'channel_creator'> = {
  can_add_subscribers_group: 'role:nobody',
  can_administer_channel_group: 'channel_creator',
  can_create_topic_group: 'role:everyone',
  can_delete_any_message_group: 'role:nobody',
  can_delete_own_message_group: 'role:nobody',
  can_move_messages_out_of_channel_group: 'role:nobody',
  can_move_messages_within_channel_group: 'role:nobody',
  can_remove_subscribers_group: 'role:administrators',
  can_resolve_topics_group: 'role:nobody',
  can_send_message_group: 'role:everyone',
  can_subscribe_group: 'role:nobody',
};

/** Zulip's palette for new subscriptions' colors, handed out in turn. */
export const SUBSCRIPTION_COLORS = [
  '#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55', '#b0a5fd', '#addfe5', '#f5ce6e',
  '#c2726a', '#94c849', '#bd86e5', '#ee7e4a', '#a6dcbf', '#95a5fd', '#53a063', '#9987e1', '#e4523d',
  '#c2c2c2', '#4f8de4', '#c6a8ad', '#e7cc4d', '#c8bebf', '#a47462',
];
