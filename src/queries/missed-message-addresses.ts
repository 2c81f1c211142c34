import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

/** A missed-message email's reply address (migration 045). */
export type MissedMessageAddressRow = TableRow<'missed_message_addresses'>;

/**
 * Records the Reply-To token of a missed-message email: a reply to it is
 * posted where `message_id` was, as `user_id` (the gateway,
 * src/gateway/process.ts). `email_token` is "mm" and 32 hexadecimal digits
 * (src/domain/email-gateway.ts newMissedMessageToken); `created_at` in
 * seconds since the epoch. Returns the row's id.
 */
export async function insertMissedMessageAddress(
  q: Q,
  row: { user_id: number; message_id: number; email_token: string; created_at: number },
): Promise<number> {
  return insertOne(q, 'missed_message_addresses', row);
}

export async function getMissedMessageAddressByToken(q: Q, token: string): Promise<MissedMessageAddressRow | undefined> {
  return q('missed_message_addresses').where({ email_token: token }).first();
}

/** One more reply through the address (Zulip's increment_times_used). */
export async function incrementMissedMessageAddressUse(q: Q, id: number): Promise<void> {
  await q('missed_message_addresses').where({ id }).increment('times_used', 1);
}
