import type { Knex } from 'knex';
import type { TableInsert } from '../../generated/tables';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

/** A rendered mail, as the queue (migration 041) stores it. */
export type NewOutgoingEmail = TableInsert<'outgoing_emails'>;

export async function insertOutgoingEmail(q: Q, row: NewOutgoingEmail): Promise<number> {
  return insertOne(q, 'outgoing_emails', row);
}
