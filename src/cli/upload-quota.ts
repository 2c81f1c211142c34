import type { Knex } from 'knex';
import { ApiError } from '../errors';
import { uploadSpaceUsed } from '../queries/attachments';
import { updateRealm } from '../queries/realms';
import type { RealmRow } from '../queries/rows';

const MIB = 1024 * 1024;

/**
 * upload-quota: an organization's upload quota (realms.upload_quota_mib) and
 * the space its uploads use; --mib N sets the quota (a whole number of MiB,
 * at least 1), --none removes it. The running servers hear of the change
 * through the CLI's invalidations and advertise it at the next register.
 */
export async function uploadQuotaCommand(db: Knex, realm: RealmRow, values: { mib?: string; none?: boolean }): Promise<string> {
  if (values.mib !== undefined && values.none) throw new ApiError('Give --mib or --none, not both');
  let quota = realm.upload_quota_mib;
  if (values.mib !== undefined) {
    if (!/^[1-9][0-9]{0,8}$/.test(values.mib)) throw new ApiError(`--mib must be a whole number of MiB from 1, not '${values.mib}'`);
    quota = Number(values.mib);
  } else if (values.none) {
    quota = null;
  }
  if (quota !== realm.upload_quota_mib) await updateRealm(db, realm.id, { upload_quota_mib: quota });
  const used = await uploadSpaceUsed(db, realm.id);
  const name = realm.string_id === '' ? 'The root organization' : `Organization '${realm.string_id}'`;
  const usedText = `${(used / MIB).toFixed(1)} MiB used`;
  return quota === null ? `${name}: no upload quota; ${usedText}.\n` : `${name}: upload quota ${quota} MiB; ${usedText}.\n`;
}
