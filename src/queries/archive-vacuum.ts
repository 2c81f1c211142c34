import type { Knex } from 'knex';
import { ARCHIVE_CHUNK, ARCHIVED_CHILD_TABLES } from './archive';

type Q = Knex | Knex.Transaction;

/**
 * The archive's grace period (Zulip's clean_archived_data): what the
 * archiver's vacuum (src/actions/archive-vacuum.ts) reads and deletes.
 * An archive transaction older than ARCHIVED_DATA_VACUUM_DAYS goes with
 * everything archived under it: its archived messages (which carry their
 * recipients' rows as JSON), and their archived reactions, edit history,
 * submessages and upload links. The uploads themselves stay; the
 * unclaimed-upload sweep takes those no message links any more.
 */

/** The archive tables keyed by message id, emptied before archived_messages. */
const ARCHIVED_CHILDREN = ARCHIVED_CHILD_TABLES.map((t) => t.archived);

/** Every organization, by id: each may have archive transactions. */
export async function listVacuumRealmIds(q: Q): Promise<number[]> {
  const ids: unknown[] = await q('realms').orderBy('id').pluck('id');
  return ids.map(Number);
}

/**
 * The organization's archive transactions of one type made before `before`
 * (UNIX seconds), restored ones included, oldest first, at most `limit`:
 * read along the (realm_id, type, timestamp) index.
 */
export async function listExpiredArchiveTransactions(
  q: Q,
  realmId: number,
  type: number,
  before: number,
  limit: number,
): Promise<number[]> {
  const ids: unknown[] = await q('archive_transactions')
    .where({ realm_id: realmId, type })
    .where('timestamp', '<', before)
    .orderBy([{ column: 'timestamp' }, { column: 'id' }])
    .limit(limit)
    .pluck('id');
  return ids.map(Number);
}

/** Up to `limit` messages still archived under these archive transactions, by id. */
export async function listArchivedIdsOfTransactions(q: Q, transactionIds: readonly number[], limit: number): Promise<number[]> {
  if (transactionIds.length === 0 || limit <= 0) return [];
  const ids: unknown[] = await q('archived_messages')
    .whereIn('archive_transaction_id', [...transactionIds])
    .orderBy('id')
    .limit(limit)
    .pluck('id');
  return ids.map(Number);
}

/**
 * Up to `limit` messages archived before `before` with no archive
 * transaction (archived before migration 030), by id: read along the
 * archive_transaction_id index, where they are the NULLs.
 */
export async function listExpiredArchivedIdsWithoutTransaction(q: Q, before: number, limit: number): Promise<number[]> {
  if (limit <= 0) return [];
  const ids: unknown[] = await q('archived_messages')
    .whereNull('archive_transaction_id')
    .where('archived_at', '<', before)
    .orderBy('id')
    .limit(limit)
    .pluck('id');
  return ids.map(Number);
}

/** Deletes these archived messages with what was archived with them; returns how many messages went. */
export async function deleteArchivedMessages(q: Q, ids: readonly number[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += ARCHIVE_CHUNK) {
    const slice = ids.slice(i, i + ARCHIVE_CHUNK);
    for (const table of ARCHIVED_CHILDREN) await q(table).whereIn('message_id', slice).del();
    deleted += await q('archived_messages').whereIn('id', slice).del();
  }
  return deleted;
}

/** Deletes those of these archive transactions that hold no archived message any more; returns how many went. */
export async function deleteEmptyArchiveTransactions(q: Q, transactionIds: readonly number[]): Promise<number> {
  if (transactionIds.length === 0) return 0;
  return q('archive_transactions')
    .whereIn('id', [...transactionIds])
    .whereNotExists(q('archived_messages as am').whereRaw('am.archive_transaction_id = archive_transactions.id').select(q.raw('1')))
    .del();
}

/** Whether this archived message is gone (a vacuum batch's witness). */
export async function archivedMessageGone(q: Q, id: number): Promise<boolean> {
  return (await q('archived_messages').where({ id }).first('id')) === undefined;
}

/** Whether this archive transaction is gone (a vacuum batch's witness). */
export async function archiveTransactionGone(q: Q, id: number): Promise<boolean> {
  return (await q('archive_transactions').where({ id }).first('id')) === undefined;
}
