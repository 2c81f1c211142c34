import type { Knex } from 'knex';
import { insertOne } from './ids';
import { listRowsOfMessage } from './message-receivers';
import type { ReactionRow } from './messages';
import { mapBools } from './rows';

type Q = Knex | Knex.Transaction;

export async function findReaction(q: Q, messageId: number, userId: number, type: string, code: string): Promise<ReactionRow | undefined> {
  const row = await q('reactions').where({ message_id: messageId, user_id: userId, reaction_type: type, emoji_code: code }).first();
  // reaction_type is written only from the contract's namespaces (ReactionRow).
  return row as ReactionRow | undefined;
}

export async function insertReaction(q: Q, row: Omit<ReactionRow, 'id'>): Promise<number> {
  return insertOne(q, 'reactions', row);
}

export async function deleteReaction(q: Q, id: number): Promise<void> {
  await q('reactions').where({ id }).delete();
}

export interface RealmEmojiRow {
  id: number;
  name: string;
  deactivated: boolean;
}

export async function getActiveRealmEmojiByName(q: Q, realmId: number, name: string): Promise<RealmEmojiRow | undefined> {
  const row = await q('realm_emoji').where({ realm_id: realmId, name, deactivated: false }).first('id', 'name', 'deactivated');
  return row ? mapBools<RealmEmojiRow>(row) : undefined;
}

export async function getRealmEmojiById(q: Q, realmId: number, id: number): Promise<RealmEmojiRow | undefined> {
  const row = await q('realm_emoji').where({ realm_id: realmId, id }).first('id', 'name', 'deactivated');
  return row ? mapBools<RealmEmojiRow>(row) : undefined;
}

/**
 * Who sees changes to a message (reactions): everyone holding a row for it,
 * plus — as Zulip's notify_reaction_update — current subscribers of a
 * channel whose history they may read (public, or shared history), who
 * subscribed after it was sent.
 */
export async function getMessageAudience(q: Q, messageId: number): Promise<number[]> {
  const [holders, subscribers] = await Promise.all([
    listRowsOfMessage(q, messageId).then((rows) => rows.map((r) => r.user_id)),
    q('messages as m')
      .join('channels as c', 'c.recipient_id', 'm.recipient_id')
      .join('subscriptions as s', 's.recipient_id', 'm.recipient_id')
      .where({ 'm.id': messageId, 's.active': true })
      .andWhere((b) => b.where('c.invite_only', false).orWhere('c.history_public_to_subscribers', true))
      .pluck('s.user_id'),
  ]);
  return [...new Set<number>([...holders, ...subscribers])];
}
