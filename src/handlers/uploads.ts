import { doStoreUpload, doUploadFile, getFileTemporaryUrl, type IncomingFile } from '../actions/uploads';
import { checkUserUploadWithinQuota } from '../actions/upload-quota';
import type { AppContext } from '../context';
import type { UserRow } from '../queries/rows';
import { caller, type HandlerTable } from '../http/handler';

export const uploadHandlers: HandlerTable = {
  'upload-file': async (call) => doUploadFile(call.ctx, caller(call).user, call.files),
  'get-file-temporary-url': async (call) => {
    const { realm_id_str, bucket, token, filename } = call.params;
    return getFileTemporaryUrl(call.ctx, caller(call).user, `${realm_id_str}/${bucket}/${token}/${filename}`);
  },
};

/** A resumable (tus) upload whose last byte has arrived becomes an upload as POST /user_uploads makes one (src/http/tus.ts). */
export const finishResumableUpload = (ctx: AppContext, user: UserRow, file: IncomingFile) => doStoreUpload(ctx, user, file);

/** A resumable upload's creation, before any byte: refused when its declared length would exceed the organization's upload quota. */
export const checkResumableUploadWithinQuota = (ctx: AppContext, user: UserRow, size: number) =>
  checkUserUploadWithinQuota(ctx, user, size);
