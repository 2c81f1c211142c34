import type { Schema } from '../contract';
import type { UploadRow } from '../queries/attachments';

/**
 * An upload as GET /attachments lists it (Zulip's Attachment.to_dict): the
 * live messages linking it as message_ids (feature level 472; the
 * `messages` list of {id, date_sent} before).
 */
export function toApiAttachment(
  row: Pick<UploadRow, 'id' | 'file_name' | 'path_id' | 'size' | 'create_time'>,
  messageIds: number[],
): Schema<'AttachmentSummary'> {
  return { id: row.id, name: row.file_name, path_id: row.path_id, size: row.size, create_time: row.create_time, message_ids: messageIds };
}
