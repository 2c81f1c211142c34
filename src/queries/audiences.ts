import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import type { ChannelRow } from './channels';
import { mapBools } from './rows';
import { RecipientType } from '../domain/recipients';

/**
 * Reads behind the audiences of events about a user's account
 * (deactivation and reactivation: src/actions/user-activation-events.ts)
 * and about channel membership (src/actions/channel-events.ts).
 */
type Q = Knex | Knex.Transaction;

/** The channels the user is subscribed to (active subscriptions), archived ones left out. */
export async function listSubscribedChannels(q: Q, userId: number): Promise<ChannelRow[]> {
  const rows = await q('subscriptions as s')
    .join('channels as c', 'c.recipient_id', 's.recipient_id')
    .where({ 's.user_id': userId, 's.active': true, 'c.deactivated': false })
    .orderBy('c.id')
    .select('c.*');
  return rows.map((r: TableRow<'channels'>) => mapBools<ChannelRow>(r));
}

/** Active users subscribed to a channel the user is subscribed to (the user left out). */
export async function listChannelPeerIds(q: Q, userId: number): Promise<number[]> {
  const ids: number[] = await q('subscriptions as other')
    .join('subscriptions as mine', 'mine.recipient_id', 'other.recipient_id')
    .join('recipients as r', 'r.id', 'other.recipient_id')
    .where({
      'mine.user_id': userId,
      'mine.active': true,
      'r.type': RecipientType.CHANNEL,
      'other.active': true,
      'other.is_user_active': true,
    })
    .whereNot('other.user_id', userId)
    .distinct('other.user_id')
    .pluck('other.user_id');
  return ids.map(Number);
}

/** The named and system groups the user is a direct member of (anonymous setting groups left out). */
export async function listDirectNamedGroupIds(q: Q, userId: number): Promise<number[]> {
  const ids: number[] = await q('group_members as gm')
    .join('user_groups as g', 'g.id', 'gm.group_id')
    .where('gm.user_id', userId)
    .whereNotNull('g.name')
    .orderBy('g.id')
    .pluck('g.id');
  return ids.map(Number);
}

/** An active user and their role code (src/domain/roles.ts). */
export interface ActiveUserRole {
  id: number;
  role: number;
}

/** Every active user of the organization with their role. */
export async function listActiveUserRoles(q: Q, realmId: number): Promise<ActiveUserRole[]> {
  return q('users').where({ realm_id: realmId, is_active: true }).orderBy('id').select('id', 'role');
}

/** Users with an active subscription, by recipient. */
export async function listSubscriberIdsByRecipient(q: Q, recipientIds: number[]): Promise<Map<number, Set<number>>> {
  const out = new Map<number, Set<number>>();
  if (recipientIds.length === 0) return out;
  const rows: Array<{ recipient_id: number; user_id: number }> = await q('subscriptions')
    .whereIn('recipient_id', recipientIds)
    .where('active', true)
    .select('recipient_id', 'user_id');
  for (const r of rows) {
    const set = out.get(r.recipient_id) ?? new Set<number>();
    set.add(Number(r.user_id));
    out.set(r.recipient_id, set);
  }
  return out;
}
