import type { Schema } from '../contract';
import { draftTimestampSeconds } from '../domain/drafts';
import type { DraftRow } from '../queries/drafts';

/** A draft as GET /drafts, POST /register and drafts events show it (Zulip's Draft.to_dict). */
export function toApiDraft(row: DraftRow): Schema<'Draft'> {
  const to = row.type === 'stream' ? [row.channel_id!] : row.type === 'private' ? [...row.dm_user_ids] : [];
  return {
    id: row.id,
    type: row.type,
    to,
    topic: row.topic,
    content: row.content,
    timestamp: draftTimestampSeconds(row.last_edit_time),
  };
}
