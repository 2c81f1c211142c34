import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction, Tx } from '../db/transaction';
import { EditableFlag, flagMask, isEditableFlag, isFlagName } from '../domain/flags';
import { bounded } from '../domain/bounded';
import { ApiError, invalidMessage } from '../errors';
import { insertUserMessagesOfUser, updateUserMessageFlags } from '../queries/messages';
import { accessMessages } from '../access/messages';
import type { Viewer } from '../access/viewer';
import { fetchAround, resolveAnchor } from '../access/fetch-messages';
import { resolveNarrow } from '../access/narrow';
import { parseNarrow } from '../domain/narrow';
import { unreadMessageDetails } from '../events/register/unread';
import type { PublishedEvent } from '../events/shape';
import { RecipientType } from '../domain/recipients';
import { doAdvanceUnreadHorizon } from './unread-horizon';

export type FlagOp = 'add' | 'remove';

/** The operation and flag of a request, checked in Zulip's order (the contract leaves both to the server). */
export function checkFlagOperation(op: string, flag: string): { op: FlagOp; flag: EditableFlag } {
  if (op !== 'add' && op !== 'remove') throw new ApiError(`Invalid message flag operation: '${bounded(op)}'`);
  // Own properties only: `constructor` or `toString` is an invalid flag, not Object's.
  if (!isFlagName(flag) || flag === 'is_private' || flag === 'active_mobile_push_notification') {
    throw new ApiError(`Invalid flag: '${bounded(flag)}'`);
  }
  if (!isEditableFlag(flag)) throw new ApiError(`Flag not editable: '${flag}'`);
  return { op, flag };
}
export interface FlagChange {
  changed: number[];
  ignoredChannels: number[];
}

/**
 * Sets or clears one flag on messages the viewer can access. Messages they
 * read as channel history (no row) get a row marked historical and read
 * (Zulip's create_historical_user_messages) when a flag is added. Clearing
 * `read` skips channels the viewer is not subscribed to (they could never
 * read them again) and reports them. Queues update_message_flags.
 */
export async function applyFlagInTx(tx: Tx, viewer: Viewer, ids: number[], op: FlagOp, flag: EditableFlag): Promise<FlagChange> {
  const uniqueIds = [...new Set(ids)];
  const accessible = await accessMessages(tx.trx, viewer, uniqueIds);
  // Adding a flag to a message one cannot read is an error; removing is a no-op.
  if (op === 'add' && accessible.length < uniqueIds.length) throw invalidMessage();
  const mask = flagMask(flag);
  const changed: number[] = [];
  const ignored = new Set<number>();
  const toUpdate: number[] = [];
  const toCreate: number[] = [];
  for (const { row, flags } of accessible) {
    if (
      op === 'remove' &&
      flag === 'read' &&
      row.recipient_type === RecipientType.CHANNEL &&
      !viewer.subscribedRecipients.has(row.recipient_id)
    ) {
      ignored.add(row.recipient_type_id);
      continue;
    }
    if (flags === null) {
      if (op === 'add') toCreate.push(row.id);
      continue;
    }
    const has = Math.floor(flags / mask) % 2 === 1;
    if ((op === 'add') !== has) toUpdate.push(row.id);
  }
  if (toUpdate.length) {
    await updateUserMessageFlags(tx.trx, viewer.user.id, toUpdate, op, mask);
    changed.push(...toUpdate);
  }
  if (toCreate.length) {
    const base = flagMask('historical') + flagMask('read');
    await insertUserMessagesOfUser(tx.trx, viewer.user.id, toCreate, flag === 'read' ? base : base + mask);
    changed.push(...toCreate);
  }
  return { changed: changed.sort((a, b) => a - b), ignoredChannels: [...ignored].sort((a, b) => a - b) };
}

/** POST /messages/flags. */
export async function doUpdateMessageFlags(
  ctx: AppContext,
  viewer: Viewer,
  p: Params<'update-message-flags'>,
): Promise<Data<'update-message-flags'>> {
  const { op, flag } = checkFlagOperation(p.op, p.flag);
  const change = await inTransaction(ctx.db, async (tx) => {
    const c = await applyFlagInTx(tx, viewer, p.messages, op, flag);
    await queueFlagEvent(ctx, tx, viewer, op, flag, c.changed);
    return c;
  });
  await afterMarkedRead(ctx, viewer, op, flag);
  return {
    messages: p.messages,
    ...(op === 'remove' && flag === 'read' ? { ignored_because_not_subscribed_channels: change.ignoredChannels } : {}),
  };
}

/**
 * update_message_flags for the changed messages, to the user's own queues.
 * Marking messages unread also carries message_details, read inside the
 * transaction (so it describes the committed change): the client has no
 * other way to put a message it may never have fetched back into its
 * unread counts.
 */
export async function queueFlagEvent(
  ctx: AppContext,
  tx: Tx,
  viewer: Viewer,
  op: FlagOp,
  flag: EditableFlag,
  ids: number[],
): Promise<void> {
  if (ids.length === 0) return;
  const event: PublishedEvent<Schema<'UpdateMessageFlagsEvent'>> = {
    type: 'update_message_flags',
    op,
    operation: op,
    flag,
    messages: ids,
    all: false,
  };
  if (op === 'remove' && flag === 'read') event.message_details = await unreadMessageDetails(tx.trx, viewer.user.id, ids);
  tx.afterCommit(() => ctx.bus.publish({ event, userIds: [viewer.user.id] }));
}

/**
 * Marking messages read is, with POST /register, when the scan above the
 * viewer's unread horizon is bounded again (ADR 0024): a client that stays
 * connected for days never registers, but it marks what its user reads.
 */
async function afterMarkedRead(ctx: AppContext, viewer: Viewer, op: FlagOp, flag: EditableFlag): Promise<void> {
  if (op === 'add' && flag === 'read') await doAdvanceUnreadHorizon(ctx.db, viewer.user);
}

/** Zulip clamps a narrow update to this many messages per request (MAX_MESSAGES_PER_UPDATE). */
export const MAX_MESSAGES_PER_UPDATE = 5000;

/** POST /messages/flags/narrow: the same range semantics as GET /messages, bounded per request. */
export async function doUpdateFlagsForNarrow(
  ctx: AppContext,
  viewer: Viewer,
  p: Params<'update-message-flags-for-narrow'>,
  sent: ReadonlySet<string>,
): Promise<Data<'update-message-flags-for-narrow'>> {
  const { op, flag } = checkFlagOperation(p.op, p.flag);
  const numBefore = Math.min(p.num_before, MAX_MESSAGES_PER_UPDATE);
  const numAfter = Math.min(p.num_after, MAX_MESSAGES_PER_UPDATE - numBefore);
  // The validator fills the contract's default (true) when the client sent none.
  const includeAnchor = p.include_anchor;
  if (!includeAnchor && numBefore > 0 && numAfter > 0) throw new ApiError('The anchor can only be excluded at an end of the range');
  const { query } = await resolveNarrow(ctx.db, viewer, parseNarrow(p.narrow));
  const anchor = await resolveAnchor(ctx.db, query, { anchor: p.anchor }, sent);
  const page = await fetchAround(ctx.db, query, anchor, numBefore, numAfter, includeAnchor);
  const ids = page.rows.map((r) => r.id);
  const change = await inTransaction(ctx.db, async (tx) => {
    const c = await applyFlagInTx(tx, viewer, ids, op, flag);
    await queueFlagEvent(ctx, tx, viewer, op, flag, c.changed);
    return c;
  });
  await afterMarkedRead(ctx, viewer, op, flag);
  return {
    processed_count: ids.length,
    updated_count: change.changed.length,
    first_processed_id: ids.length ? ids[0]! : null,
    last_processed_id: ids.length ? ids[ids.length - 1]! : null,
    found_oldest: page.foundOldest,
    found_newest: page.foundNewest,
    ...(op === 'remove' && flag === 'read' ? { ignored_because_not_subscribed_channels: change.ignoredChannels } : {}),
  };
}
