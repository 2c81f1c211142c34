import { renderForRealm } from '../../src/actions/render';
import type { TableInsert } from '../../generated/tables';
import type { UserRow } from '../../src/queries/rows';
import type { TestServer } from './server';

export interface RecordedEdit {
  by: UserRow;
  /** UNIX seconds of the edit. */
  at: number;
  content?: string;
  topic?: string;
  /** Moves the message to this channel. */
  channelId?: number;
}

/**
 * Edits or moves one message straight in the database — a message_edits row
 * with the previous values and the message row updated — the way
 * PATCH /messages/{id} records it, for tests of what reads edit history.
 * A fixture, to be replaced by calls to PATCH once that endpoint exists.
 */
export async function recordEdit(t: TestServer, messageId: number, edit: RecordedEdit): Promise<void> {
  const db = t.ctx.db;
  const msg = await db('messages').where({ id: messageId }).first();
  const row: TableInsert<'message_edits'> = { message_id: messageId, user_id: edit.by.id, timestamp: edit.at };
  const update: Partial<TableInsert<'messages'>> = {};
  if (edit.content !== undefined) {
    row.prev_content = msg!.content;
    row.prev_rendered_content = msg!.rendered_content;
    update.content = edit.content;
    update.rendered_content = (await renderForRealm(db, t.realmId, edit.content, null)).html;
    update.last_edit_time = edit.at;
  }
  if (edit.topic !== undefined) {
    row.prev_topic = msg!.topic;
    row.topic = edit.topic;
    update.topic = edit.topic;
    update.topic_key = edit.topic.toLowerCase();
    update.last_moved_time = edit.at;
  }
  if (edit.channelId !== undefined) {
    const from = await db('recipients').where({ id: msg!.recipient_id }).first('type_id');
    const to = await db('channels').where({ id: edit.channelId }).first('recipient_id');
    row.prev_stream = from!.type_id;
    row.stream = edit.channelId;
    update.recipient_id = to!.recipient_id!;
    update.last_moved_time = edit.at;
  }
  await db.transaction(async (trx) => {
    await trx('message_edits').insert(row);
    await trx('messages').where({ id: messageId }).update(update);
  });
  // As the action does after commit: the cached dict of the message goes.
  t.ctx.bus.invalidate({ kind: 'messages', messageIds: [messageId] });
}
