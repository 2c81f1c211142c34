import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { mapBools } from './rows';

type Q = Knex | Knex.Transaction;

export interface TypingAudienceRow {
  id: number;
  settings: string;
  long_term_idle: boolean;
}

/** Active users subscribed to a recipient (channel or conversation), with what typing delivery needs. */
export async function listTypingAudience(q: Q, recipientId: number): Promise<TypingAudienceRow[]> {
  const rows: Array<Pick<TableRow<'users'>, 'id' | 'settings' | 'long_term_idle'>> = await q('subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 's.recipient_id': recipientId, 's.active': true, 'u.is_active': true })
    .orderBy('u.id')
    .select('u.id', 'u.settings', 'u.long_term_idle');
  return rows.map((r) => mapBools<TypingAudienceRow>(r));
}
