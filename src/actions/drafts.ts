import type { Knex } from 'knex';
import { accessChannelContent } from '../access/channels';
import type { Caller } from '../access/viewer';
import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { draftEditTime, draftTopic } from '../domain/drafts';
import { normalizeContent } from '../domain/topics';
import { parseSettings } from '../domain/user-settings';
import { ApiError, invalidChannelId } from '../errors';
import type { EventBody } from '../events/bus';
import { deleteOwnDraft, findOwnDraftForUpdate, insertDrafts, listDrafts, updateDraft, type DraftFields } from '../queries/drafts';
import { listUsersByIds } from '../queries/users';
import { toApiDraft } from '../serializers/drafts';

/**
 * Drafts belong to one user: every event goes to the owner's queues alone,
 * and another user's draft is answered exactly as a missing one (Zulip's
 * 404 with code BAD_REQUEST). Every operation is refused while the user's
 * enable_drafts_synchronization is off; turning it off deletes the drafts
 * (src/actions/settings.ts).
 */
const draftDoesNotExist = () => new ApiError('Draft does not exist', 'BAD_REQUEST', 404);

type DraftInput = Schema<'DraftInput'>;

function checkSynchronization(caller: Caller): void {
  if (!parseSettings(caller.user.settings).enable_drafts_synchronization) throw new ApiError('User has disabled synchronizing drafts.');
}

/**
 * One draft as sent, checked in Zulip's order (further_validated_draft_dict):
 * content, timestamp, then the recipient; what is stored.
 */
async function checkDraft(db: Knex, caller: Caller, d: DraftInput, nowMs: number): Promise<DraftFields> {
  const content = normalizeContent(d.content);
  const last_edit_time = draftEditTime(d.timestamp, nowMs);
  const fields: DraftFields = { type: '', channel_id: null, dm_user_ids: [], topic: '', content, last_edit_time };
  if (d.type === 'stream') {
    const topic = draftTopic(d.topic);
    if (d.to.length !== 1) throw new ApiError('Must specify exactly 1 channel ID for channel messages');
    const channel = await accessChannelContent(db, caller, d.to[0]!);
    // Zulip's access_stream_by_id refuses an archived channel as a missing one.
    if (channel.deactivated) throw invalidChannelId();
    return { ...fields, type: 'stream', channel_id: channel.id, topic };
  }
  // A direct message draft without recipients is kept as one with no recipient at all, as Zulip does.
  if (d.type === 'private' && d.to.length > 0) return { ...fields, type: 'private', dm_user_ids: await checkRecipients(db, caller, d.to) };
  return fields;
}

/**
 * The users of a direct message draft as Zulip's Draft.to_dict lists them:
 * the others in the conversation, or the user alone for a draft to
 * themselves. Every ID must be a user of the organization (all are looked
 * up before any is judged), and each of them active.
 */
async function checkRecipients(db: Knex, caller: Caller, to: number[]): Promise<number[]> {
  const ids = [...new Set(to)].sort((a, b) => a - b);
  const found = new Map((await listUsersByIds(db, caller.user.realm_id, ids)).map((u) => [u.id, u]));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw new ApiError(`Invalid user ID ${missing}`);
  for (const id of ids) {
    const user = found.get(id)!;
    if (!user.is_active) throw new ApiError(`'${user.email}' is no longer using Zulip.`);
  }
  const others = ids.filter((id) => id !== caller.user.id);
  return others.length > 0 ? others : [caller.user.id];
}

/** GET /drafts: the caller's drafts, the least recently edited first. */
export async function getDrafts(ctx: AppContext, caller: Caller): Promise<Data<'get-drafts'>> {
  checkSynchronization(caller);
  const drafts = (await listDrafts(ctx.db, caller.user.id, 'asc')).map(toApiDraft);
  return { count: drafts.length, drafts };
}

/** POST /drafts: every draft checked before any is written; one add event with them all. */
export async function doCreateDrafts(ctx: AppContext, caller: Caller, p: Params<'create-drafts'>): Promise<Data<'create-drafts'>> {
  checkSynchronization(caller);
  const now = Date.now();
  const checked: DraftFields[] = [];
  for (const d of p.drafts) checked.push(await checkDraft(ctx.db, caller, d, now));
  const user = caller.user;
  const ids = await inTransaction(ctx.db, async (tx) => {
    const ids = await insertDrafts(tx.trx, user.realm_id, user.id, checked);
    const event: EventBody<Schema<'DraftsAddEvent'>> = {
      type: 'drafts',
      op: 'add',
      drafts: checked.map((d, i) => toApiDraft({ id: ids[i]!, ...d })),
    };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
    return ids;
  });
  return { ids };
}

/** PATCH /drafts/{draft_id}: the draft is found first (404 before a refused field, as in Zulip), then replaced. */
export async function doEditDraft(ctx: AppContext, caller: Caller, p: Params<'edit-draft'>): Promise<Data<'edit-draft'>> {
  checkSynchronization(caller);
  const user = caller.user;
  if (!(await findOwnDraftForUpdate(ctx.db, user.id, p.draft_id))) throw draftDoesNotExist();
  const fields = await checkDraft(ctx.db, caller, p.draft, Date.now());
  await inTransaction(ctx.db, async (tx) => {
    // Deleted meanwhile (by another of the user's clients): as missing.
    if (!(await findOwnDraftForUpdate(tx.trx, user.id, p.draft_id))) throw draftDoesNotExist();
    await updateDraft(tx.trx, p.draft_id, fields);
    const event: EventBody<Schema<'DraftsUpdateEvent'>> = {
      type: 'drafts',
      op: 'update',
      draft: toApiDraft({ id: p.draft_id, ...fields }),
    };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
  });
  return {};
}

/** DELETE /drafts/{draft_id}. */
export async function doDeleteDraft(ctx: AppContext, caller: Caller, p: Params<'delete-draft'>): Promise<Data<'delete-draft'>> {
  checkSynchronization(caller);
  const user = caller.user;
  await inTransaction(ctx.db, async (tx) => {
    if ((await deleteOwnDraft(tx.trx, user.id, p.draft_id)) === 0) throw draftDoesNotExist();
    const event: EventBody<Schema<'DraftsRemoveEvent'>> = { type: 'drafts', op: 'remove', draft_id: p.draft_id };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
  });
  return {};
}
