import type { Knex } from 'knex';
import type { AuditEntry } from '../domain/audit';
import { insertRows, nowSeconds } from './ids';

type Q = Knex | Knex.Transaction;

/**
 * Writes audit rows, all stamped with the current time (in slices of
 * MAX_ROWS_PER_INSERT). Actions call it with their transaction, so a change
 * and its audit rows commit or roll back together.
 */
export async function insertAuditLog(q: Q, entries: AuditEntry | AuditEntry[]): Promise<void> {
  const list = Array.isArray(entries) ? entries : [entries];
  const now = nowSeconds();
  await insertRows(
    q,
    'audit_log',
    list.map((e) => ({
      realm_id: e.realmId,
      acting_user_id: e.actorId,
      modified_user_id: e.userId ?? null,
      modified_channel_id: e.channelId ?? null,
      modified_group_id: e.groupId ?? null,
      event_type: e.eventType,
      event_time: now,
      extra_data: e.extra == null ? null : JSON.stringify(e.extra),
    })),
  );
}

/** An audit row with the names of the users, channel and group it refers to. */
export interface AuditLogRow {
  id: number;
  event_type: number;
  event_time: number;
  acting_user_id: number | null;
  acting_email: string | null;
  modified_user_id: number | null;
  modified_email: string | null;
  modified_channel_id: number | null;
  channel_name: string | null;
  modified_group_id: number | null;
  group_name: string | null;
  extra_data: string | null;
}

/**
 * An organization's audit rows, newest first, at most `limit`; with `userId`,
 * only the rows made by or about that user. Emails are delivery addresses:
 * the log is for administrators.
 */
export async function listAuditLog(q: Q, realmId: number, opts: { userId?: number; limit: number }): Promise<AuditLogRow[]> {
  const query = q('audit_log as a')
    .leftJoin('users as au', 'au.id', 'a.acting_user_id')
    .leftJoin('users as mu', 'mu.id', 'a.modified_user_id')
    .leftJoin('channels as c', 'c.id', 'a.modified_channel_id')
    .leftJoin('user_groups as g', 'g.id', 'a.modified_group_id')
    .where('a.realm_id', realmId)
    .orderBy([
      { column: 'a.event_time', order: 'desc' },
      { column: 'a.id', order: 'desc' },
    ])
    .limit(opts.limit)
    .select(
      'a.id',
      'a.event_type',
      'a.event_time',
      'a.extra_data',
      'a.acting_user_id',
      'au.delivery_email as acting_email',
      'a.modified_user_id',
      'mu.delivery_email as modified_email',
      'a.modified_channel_id',
      'c.name as channel_name',
      'a.modified_group_id',
      'g.name as group_name',
    );
  if (opts.userId !== undefined) {
    const id = opts.userId;
    query.andWhere((w) => w.where('a.modified_user_id', id).orWhere('a.acting_user_id', id));
  }
  return query;
}
