import type { Knex } from 'knex';
import type { Data, Params } from '../contract';
import { ApiError } from '../errors';
import { getEdits } from '../queries/messages';
import { toApiMessageHistory } from '../serializers/message-history';
import { accessMessage } from './messages';
import type { Caller } from './viewer';

/**
 * GET /messages/{id}/history. The organization's policy is checked before
 * the message, as Zulip does: with history disabled every message gets the
 * same answer, whether or not the caller could read it.
 */
export async function getMessageHistory(db: Knex, viewer: Caller, p: Params<'get-message-history'>): Promise<Data<'get-message-history'>> {
  const realm = viewer.realm;
  const policy = realm.message_edit_history_visibility_policy;
  if (policy === 'none') throw new ApiError('Message edit history is disabled in this organization');
  const { row } = await accessMessage(db, viewer, p.message_id);
  const edits = await getEdits(db, [row.id]);
  return { message_history: toApiMessageHistory(row, edits, policy, p.allow_empty_topic_name ?? false) };
}
