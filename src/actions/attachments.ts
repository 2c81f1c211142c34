import type { Caller } from '../access/viewer';
import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { listLinkedMessageIds, uploadSpaceUsed } from '../queries/attachments';
import { deleteAttachmentWithLinks, findOwnAttachmentForUpdate, listOwnAttachments } from '../queries/own-attachments';
import { toApiAttachment } from '../serializers/attachments';

/** Zulip's one answer for another user's upload and a missing one (a 400, unlike most of its missing objects). */
const invalidAttachment = () => new ApiError('Invalid attachment');

/**
 * GET /attachments: the caller's uploads, oldest first, each with the live
 * messages linking it, and the organization's space used (the sum of every
 * upload's size, as the upload quota counts it).
 */
export async function getAttachments(ctx: AppContext, caller: Caller): Promise<Data<'get-attachments'>> {
  const rows = await listOwnAttachments(ctx.db, caller.user.id);
  const linked = await listLinkedMessageIds(
    ctx.db,
    rows.map((r) => r.id),
  );
  const used = await uploadSpaceUsed(ctx.db, caller.user.realm_id);
  return { attachments: rows.map((r) => toApiAttachment(r, linked.get(r.id) ?? [])), upload_space_used: used };
}

/**
 * DELETE /attachments/{attachment_id}: the caller's own upload only. As in
 * Zulip, the file is removed from storage first (a failure refuses the
 * request and keeps the record), then the record with its message links;
 * the messages keep their content, so their link to the file is broken.
 * An attachment remove event tells the owner's clients, with the space
 * used once the file is gone.
 */
export async function doDeleteAttachment(
  ctx: AppContext,
  caller: Caller,
  p: Params<'remove-attachment'>,
): Promise<Data<'remove-attachment'>> {
  const user = caller.user;
  await inTransaction(ctx.db, async (tx) => {
    const row = await findOwnAttachmentForUpdate(tx.trx, user.id, p.attachment_id);
    if (!row) throw invalidAttachment();
    try {
      await ctx.storage.remove([row.path_id]);
    } catch {
      throw new ApiError('An error occurred while deleting the attachment. Please try again later.');
    }
    await deleteAttachmentWithLinks(tx.trx, row.id);
    const event: EventBody<Schema<'AttachmentRemoveEvent'>> = {
      type: 'attachment',
      op: 'remove',
      attachment: { id: row.id },
      upload_space_used: await uploadSpaceUsed(tx.trx, user.realm_id),
    };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
  });
  return {};
}
