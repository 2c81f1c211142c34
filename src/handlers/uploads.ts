import { doUploadFile, getFileTemporaryUrl } from '../actions/uploads';
import { caller, type HandlerTable } from '../http/handler';

export const uploadHandlers: HandlerTable = {
  'upload-file': async (call) => doUploadFile(call.ctx, caller(call), call.files),
  'get-file-temporary-url': async (call) => {
    const { realm_id_str, bucket, token, filename } = call.params;
    return getFileTemporaryUrl(call.ctx, caller(call), `${realm_id_str}/${bucket}/${token}/${filename}`);
  },
};
