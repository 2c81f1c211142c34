import type { Knex } from 'knex';
import { realmUploadQuotaExceeded } from '../errors';
import { uploadSpaceUsed } from '../queries/attachments';
import { getUploadQuotaForUpdate } from '../queries/realms';
import type { RealmRow } from '../queries/rows';

const MIB = 1024 * 1024;

/**
 * The organization's upload quota (realms.upload_quota_mib, set with the CLI's
 * upload-quota) against a file of `bytes`. The space used is Zulip's: the sizes
 * of the organization's uploads (claimed or not), so a new upload is refused
 * once it would take that sum past the quota. Zulip checks only message
 * uploads; Parley refuses avatars and custom emoji too while the organization
 * is past its quota, since they are stored as well (they are not counted in
 * the space used, which is the figure clients show). No quota: no read at all.
 */
export function checkUploadWithinQuota(q: Knex, realm: Pick<RealmRow, 'id' | 'upload_quota_mib'>, bytes: number): Promise<void> {
  if (realm.upload_quota_mib === null) return Promise.resolve();
  return checkAgainst(q, realm.id, realm.upload_quota_mib, bytes);
}

/**
 * The same check inside the transaction that records a new upload of an
 * organization with a quota: the quota is read again there under a row lock
 * (the organization's uploads take turns), so the check and the insert see
 * the same space used. Without a quota (the request's organization row, kept
 * fresh by the caches) it costs nothing.
 */
export async function checkUploadWithinQuotaInTx(
  trx: Knex.Transaction,
  realm: Pick<RealmRow, 'id' | 'upload_quota_mib'>,
  bytes: number,
): Promise<void> {
  if (realm.upload_quota_mib === null) return;
  const realmId = realm.id;
  const quota = await getUploadQuotaForUpdate(trx, realmId);
  if (quota !== null) await checkAgainst(trx, realmId, quota, bytes);
}

async function checkAgainst(q: Knex, realmId: number, quotaMib: number, bytes: number): Promise<void> {
  if ((await uploadSpaceUsed(q, realmId)) + bytes > quotaMib * MIB) throw realmUploadQuotaExceeded();
}
