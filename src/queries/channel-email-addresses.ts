import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';

type Q = Knex | Knex.Transaction;

/** A channel's email address for one creator and sender (migration 045). */
export type ChannelEmailAddressRow = TableRow<'channel_email_addresses'>;

/**
 * The address of (channel, creator, sender), made with `email_token` when
 * there is none yet (Zulip's get_or_create): asking twice gives the same
 * address, and two callers racing both read the row the first one wrote.
 */
export async function getOrCreateChannelEmailAddress(
  q: Q,
  row: { realm_id: number; channel_id: number; creator_id: number; sender_id: number; email_token: string; created_at: number },
): Promise<ChannelEmailAddressRow> {
  const key = { channel_id: row.channel_id, creator_id: row.creator_id, sender_id: row.sender_id };
  const existing: ChannelEmailAddressRow | undefined = await q('channel_email_addresses').where(key).first();
  if (existing) return existing;
  await q('channel_email_addresses').insert(row).onConflict(['channel_id', 'creator_id', 'sender_id']).ignore();
  return (await q('channel_email_addresses').where(key).first()) as ChannelEmailAddressRow;
}

export async function getChannelEmailAddressByToken(q: Q, token: string): Promise<ChannelEmailAddressRow | undefined> {
  return q('channel_email_addresses').where({ email_token: token }).first();
}
