import type { Knex } from 'knex';
import type { ChannelRow } from './channels';
import { listActiveEmojiByNames, type ActiveEmojiRow } from './custom-emoji';
import { mapBools } from './rows';

type Q = Knex | Knex.Transaction;

/** A user a mention may name: active, in the organization. */
export interface MentionCandidateRow {
  id: number;
  full_name: string;
  is_bot: boolean;
}

/** A user group a mention may name (named groups only). */
export interface MentionGroupRow {
  id: number;
  name: string;
  /** NULL only for groups made before their settings were filled. */
  can_mention_group: number | null;
}

/** A channel a link may name, with the columns deciding whether the sender may know it (canSeeChannel). */
export type LinkChannelRow = Pick<
  ChannelRow,
  | 'id'
  | 'name'
  | 'recipient_id'
  | 'invite_only'
  | 'history_public_to_subscribers'
  | 'can_administer_channel_group'
  | 'can_subscribe_group'
  | 'can_add_subscribers_group'
>;

/** `expr IN (?, …)` for a computed expression, which knex's whereIn (columns only) cannot name. */
const inList = (expr: string, values: readonly string[]) => [`${expr} IN (${values.map(() => '?').join(', ')})`, values] as const;

/**
 * What the renderer needs to resolve mentions and links in one message, in
 * at most five queries: users by the names and ids the content mentions,
 * groups and channels by name, active custom emoji by the names in `:name:`.
 */
export async function getRenderLookups(
  q: Q,
  realmId: number,
  c: { userNames: string[]; userIds: number[]; groupNames: string[]; channelNames: string[]; emojiNames: string[] },
): Promise<{ users: MentionCandidateRow[]; groups: MentionGroupRow[]; channels: LinkChannelRow[]; emoji: ActiveEmojiRow[] }> {
  const lowerNames = [...new Set(c.userNames.map((n) => n.toLowerCase()))];
  const lowerGroupNames = c.groupNames.map((n) => n.toLowerCase());
  const [byName, byId, groups, channels, emoji] = await Promise.all([
    lowerNames.length
      ? q('users')
          .where({ realm_id: realmId, is_active: true })
          .whereRaw(...inList('LOWER(full_name)', lowerNames))
          .select('id', 'full_name', 'is_bot')
      : Promise.resolve([]),
    c.userIds.length
      ? q('users').where({ realm_id: realmId, is_active: true }).whereIn('id', c.userIds).select('id', 'full_name', 'is_bot')
      : Promise.resolve([]),
    lowerGroupNames.length
      ? q('user_groups')
          .where({ realm_id: realmId, deactivated: false })
          .whereNotNull('name')
          .whereRaw(...inList('LOWER(name)', lowerGroupNames))
          .select('id', 'name', 'can_mention_group')
      : Promise.resolve([]),
    c.channelNames.length
      ? q('channels')
          .where({ realm_id: realmId })
          .whereIn(
            'name_key',
            c.channelNames.map((n) => n.trim().toLowerCase()),
          )
          .select(
            'id',
            'name',
            'recipient_id',
            'invite_only',
            'history_public_to_subscribers',
            'can_administer_channel_group',
            'can_subscribe_group',
            'can_add_subscribers_group',
          )
      : Promise.resolve([]),
    listActiveEmojiByNames(q, realmId, c.emojiNames),
  ]);
  return {
    users: [...byName, ...byId].map((u) => mapBools<MentionCandidateRow>(u)),
    // whereNotNull('name'): named groups only.
    groups: groups as MentionGroupRow[],
    channels: channels.map((r) => mapBools<LinkChannelRow>(r)),
    emoji,
  };
}

/** Distinct senders of a topic (its participants, for topic wildcard mentions). */
export async function getTopicParticipantIds(q: Q, recipientId: number, topicKey: string): Promise<number[]> {
  return q('messages').where({ recipient_id: recipientId, topic_key: topicKey }).distinct().pluck('sender_id');
}

export async function topicExists(q: Q, recipientId: number, topicKey: string): Promise<boolean> {
  const row = await q('messages').where({ recipient_id: recipientId, topic_key: topicKey }).first('id');
  return row !== undefined;
}
