import { doStoreUpload, doUploadFile, getFileTemporaryUrl, type IncomingFile } from '../actions/uploads';
import { checkUploadWithinQuota } from '../actions/upload-quota';
import type { AppContext } from '../context';
import type { RealmRow, UserRow } from '../queries/rows';
import { caller, type HandlerTable } from '../http/handler';

export const uploadHandlers: HandlerTable = {
  'upload-file': async (call) => doUploadFile(call.ctx, caller(call).user, caller(call).realm, call.files),
  'get-file-temporary-url': async (call) => {
    const { realm_id_str, bucket, token, filename } = call.params;
    return getFileTemporaryUrl(call.ctx, caller(call).user, `${realm_id_str}/${bucket}/${token}/${filename}`);
  },
};

/** A resumable (tus) upload whose last byte has arrived becomes an upload as POST /user_uploads makes one (src/http/tus.ts). */
export const finishResumableUpload = async (ctx: AppContext, user: UserRow, file: IncomingFile) =>
  doStoreUpload(ctx, user, await getRealmOfUploader(ctx, user), file);

/** A resumable upload's creation, before any byte: refused when its declared length would exceed the organization's upload quota. */
export const checkResumableUploadWithinQuota = async (ctx: AppContext, user: UserRow, size: number) =>
  checkUploadWithinQuota(ctx.db, await getRealmOfUploader(ctx, user), size);

/**
 * tus hands its hooks the authenticated user alone (src/http/tus.ts), so the
 * organization comes from the organization cache, as at authentication: no
 * statement while the row is cached. Authentication just found it there.
 */
async function getRealmOfUploader(ctx: AppContext, user: UserRow): Promise<RealmRow> {
  return (await ctx.caches.realms.get(user.realm_id))!;
}
