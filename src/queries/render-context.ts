import type { Knex } from 'knex';

type Q = Knex | Knex.Transaction;

type MentionCandidateRow = { id: number; full_name: string; is_bot: boolean | number };

/**
 * What the renderer needs to resolve mentions and links in one message, in
 * at most four queries: users by the names and ids the content mentions,
 * groups and channels by name.
 */
export async function getRenderLookups(
  q: Q,
  realmId: number,
  c: { userNames: string[]; userIds: number[]; groupNames: string[]; channelNames: string[] },
) {
  const lowerNames = [...new Set(c.userNames.map((n) => n.toLowerCase()))];
  const [byName, byId, groups, channels] = await Promise.all([
    lowerNames.length
      ? q('users')
          .where({ realm_id: realmId, is_active: true })
          .whereIn(q.raw('LOWER(full_name)') as never, lowerNames)
          .select('id', 'full_name', 'is_bot')
      : Promise.resolve([]),
    c.userIds.length
      ? q('users').where({ realm_id: realmId, is_active: true }).whereIn('id', c.userIds).select('id', 'full_name', 'is_bot')
      : Promise.resolve([]),
    c.groupNames.length
      ? q('user_groups')
          .where({ realm_id: realmId, deactivated: false })
          .whereNotNull('name')
          .whereIn(
            q.raw('LOWER(name)') as never,
            c.groupNames.map((n) => n.toLowerCase()),
          )
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
  ]);
  return {
    users: [...(byName as MentionCandidateRow[]), ...(byId as MentionCandidateRow[])].map((u) => ({ ...u, is_bot: Boolean(u.is_bot) })),
    groups: groups as Array<{ id: number; name: string; can_mention_group: number | null }>,
    channels: (channels as Array<Record<string, unknown>>).map((c) => ({ ...c, invite_only: Boolean(c.invite_only) })) as Array<{
      id: number;
      name: string;
      recipient_id: number;
      invite_only: boolean;
    }>,
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
