import type { Knex } from 'knex';
import { MAX_DRAFTS_IN_REGISTER } from '../../domain/drafts';
import { listDrafts } from '../../queries/drafts';
import { toApiDraft } from '../../serializers/drafts';
import type { StatePart } from './types';

/**
 * The user's drafts, the most recently edited first, at most Zulip's
 * MAX_DRAFTS_IN_REGISTER_RESPONSE. Not gated on enable_drafts_synchronization:
 * turning it off deleted them, as in Zulip.
 */
export async function draftsState(db: Knex, userId: number): Promise<StatePart<'drafts'>> {
  const rows = await listDrafts(db, userId, 'desc', MAX_DRAFTS_IN_REGISTER);
  return { drafts: rows.map(toApiDraft) };
}
