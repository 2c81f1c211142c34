import type { Knex } from 'knex';
import { topicKey } from '../domain/user-topics';

type Q = Knex | Knex.Transaction;

/** What decides a push or email notification for one receiver (src/domain/push-triggers.ts). */
export interface NotificationRecipientState {
  id: number;
  isBot: boolean;
  isActive: boolean;
  /** The personal settings, as stored (JSON). */
  settings: string;
  /** The subscription to the message's channel; null for a direct message or a receiver not subscribed. */
  subscription: {
    isMuted: boolean;
    pushNotifications: boolean | null;
    emailNotifications: boolean | null;
    wildcardMentionsNotify: boolean | null;
    policy: number;
  } | null;
  /** The last time a client reported the user active (seconds), null when never. */
  lastActiveTime: number | null;
  /** The organization turned presence off: nobody counts as idle by presence then. */
  presenceDisabled: boolean;
}

const boolOrNull = (v: unknown): boolean | null => (v === null || v === undefined ? null : Boolean(Number(v)));

/**
 * The receivers' settings, their subscription to the channel with its
 * notification overrides and their policy for the topic (for a channel
 * message), and their presence. One statement for up to a slice of
 * receivers (the relay asks 200 at a time).
 */
export async function listNotificationRecipientStates(
  q: Q,
  userIds: readonly number[],
  channel: { channelId: number; recipientId: number; topic: string } | null,
): Promise<NotificationRecipientState[]> {
  if (userIds.length === 0) return [];
  const query = q('users as u')
    .join('realms as r', 'r.id', 'u.realm_id')
    .leftJoin('user_presence as p', 'p.user_id', 'u.id')
    .whereIn('u.id', userIds)
    .select('u.id', 'u.is_bot', 'u.is_active', 'u.settings', 'p.last_active_time', 'r.presence_disabled');
  if (channel) {
    query
      .leftJoin('subscriptions as s', (j) =>
        j
          .on('s.user_id', '=', 'u.id')
          .andOn('s.recipient_id', '=', q.raw('?', [channel.recipientId]))
          .andOn('s.active', '=', q.raw('?', [true])),
      )
      .leftJoin('user_topics as ut', (j) =>
        j
          .on('ut.user_id', '=', 'u.id')
          .andOn('ut.channel_id', '=', q.raw('?', [channel.channelId]))
          .andOn('ut.topic_key', '=', q.raw('?', [topicKey(channel.topic)])),
      )
      .select(
        's.id as subscription_id',
        's.is_muted',
        's.push_notifications',
        's.email_notifications',
        's.wildcard_mentions_notify',
        'ut.visibility_policy',
      );
  }
  const rows = (await query) as Array<Record<string, unknown>>;
  return rows.map((r) => ({
    id: Number(r.id),
    isBot: Boolean(Number(r.is_bot)),
    isActive: Boolean(Number(r.is_active)),
    settings: String(r.settings ?? ''),
    subscription:
      r.subscription_id == null
        ? null
        : {
            isMuted: Boolean(Number(r.is_muted)),
            pushNotifications: boolOrNull(r.push_notifications),
            emailNotifications: boolOrNull(r.email_notifications),
            wildcardMentionsNotify: boolOrNull(r.wildcard_mentions_notify),
            policy: r.visibility_policy == null ? 0 : Number(r.visibility_policy),
          },
    lastActiveTime: r.last_active_time == null ? null : Number(r.last_active_time),
    presenceDisabled: Boolean(Number(r.presence_disabled)),
  }));
}
