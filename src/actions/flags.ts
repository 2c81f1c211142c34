import type { AppContext } from '../context';
import { inTransaction, Tx } from '../db/transaction';
import { EDITABLE_FLAGS, FLAG_BITS, flagMask, FlagName } from '../domain/flags';
import { bounded } from '../domain/bounded';
import { ApiError, invalidMessage } from '../errors';
import { insertRows } from '../queries/ids';
import { accessMessages } from '../access/messages';
import type { Viewer } from '../access/viewer';
import { fetchAround, resolveAnchor } from '../access/fetch-messages';
import { resolveNarrow } from '../access/narrow';
import { parseNarrow } from '../domain/narrow';
import type { ServerEvent } from '../events/bus';
import { unreadMessageDetails } from '../events/register/unread';
import { RecipientType } from '../domain/recipients';

export function checkFlagOperation(op: string, flag: string): FlagName {
  if (op !== 'add' && op !== 'remove') throw new ApiError(`Invalid message flag operation: '${bounded(op)}'`);
  // Own properties only: `constructor` or `toString` is an invalid flag, not Object's.
  if (!Object.hasOwn(FLAG_BITS, flag) || flag === 'is_private' || flag === 'active_mobile_push_notification') {
    throw new ApiError(`Invalid flag: '${bounded(flag)}'`);
  }
  if (!EDITABLE_FLAGS.includes(flag as FlagName)) throw new ApiError(`Flag not editable: '${flag}'`);
  return flag as FlagName;
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
export async function applyFlagInTx(tx: Tx, viewer: Viewer, ids: number[], op: 'add' | 'remove', flag: FlagName): Promise<FlagChange> {
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
    const expr = op === 'add' ? 'flags | ?' : 'flags & ~?';
    for (let i = 0; i < toUpdate.length; i += 1000) {
      await tx
        .trx('user_messages')
        .where('user_id', viewer.user.id)
        .whereIn('message_id', toUpdate.slice(i, i + 1000))
        .update({ flags: tx.trx.raw(expr, [mask]) });
    }
    changed.push(...toUpdate);
  }
  if (toCreate.length) {
    const base = flagMask('historical') + flagMask('read');
    const flags = flag === 'read' ? base : base + mask;
    const rows = toCreate.map((message_id) => ({ user_id: viewer.user.id, message_id, flags }));
    await insertRows(tx.trx, 'user_messages', rows);
    changed.push(...toCreate);
  }
  return { changed: changed.sort((a, b) => a - b), ignoredChannels: [...ignored].sort((a, b) => a - b) };
}

/** POST /messages/flags. */
export async function doUpdateMessageFlags(ctx: AppContext, viewer: Viewer, ids: number[], op: string, flagName: string) {
  const flag = checkFlagOperation(op, flagName);
  const result = await inTransaction(ctx.db, async (tx) => {
    const change = await applyFlagInTx(tx, viewer, ids, op as 'add' | 'remove', flag);
    await queueFlagEvent(ctx, tx, viewer, op as 'add' | 'remove', flag, change.changed);
    return change;
  });
  return result;
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
  op: 'add' | 'remove',
  flag: FlagName,
  ids: number[],
): Promise<void> {
  if (ids.length === 0) return;
  const event: ServerEvent = { type: 'update_message_flags', op, operation: op, flag, messages: ids, all: false };
  if (op === 'remove' && flag === 'read') event.message_details = await unreadMessageDetails(tx.trx, viewer.user.id, ids);
  tx.afterCommit(() => ctx.bus.publish({ event, userIds: [viewer.user.id] }));
}

export interface FlagsForNarrowParams {
  anchor: string | number;
  include_anchor?: boolean;
  num_before: number;
  num_after: number;
  narrow: unknown;
  op: string;
  flag: string;
}

/** Zulip clamps a narrow update to this many messages per request (MAX_MESSAGES_PER_UPDATE). */
export const MAX_MESSAGES_PER_UPDATE = 5000;

/** POST /messages/flags/narrow: the same range semantics as GET /messages, bounded per request. */
export async function doUpdateFlagsForNarrow(ctx: AppContext, viewer: Viewer, p: FlagsForNarrowParams, sent: ReadonlySet<string>) {
  const flag = checkFlagOperation(p.op, p.flag);
  const numBefore = Math.min(p.num_before, MAX_MESSAGES_PER_UPDATE);
  const numAfter = Math.min(p.num_after, MAX_MESSAGES_PER_UPDATE - numBefore);
  const includeAnchor = p.include_anchor ?? true;
  if (!includeAnchor && numBefore > 0 && numAfter > 0) throw new ApiError('The anchor can only be excluded at an end of the range');
  const { query } = await resolveNarrow(ctx.db, viewer, parseNarrow(p.narrow));
  const anchor = await resolveAnchor(ctx.db, query, { anchor: p.anchor }, sent);
  const page = await fetchAround(ctx.db, query, anchor, numBefore, numAfter, includeAnchor);
  const ids = page.rows.map((r) => r.id);
  const change = await inTransaction(ctx.db, async (tx) => {
    const c = await applyFlagInTx(tx, viewer, ids, p.op as 'add' | 'remove', flag);
    await queueFlagEvent(ctx, tx, viewer, p.op as 'add' | 'remove', flag, c.changed);
    return c;
  });
  return {
    processed_count: ids.length,
    updated_count: change.changed.length,
    first_processed_id: ids.length ? ids[0]! : null,
    last_processed_id: ids.length ? ids[ids.length - 1]! : null,
    found_oldest: page.foundOldest,
    found_newest: page.foundNewest,
    ...(p.op === 'remove' && flag === 'read' ? { ignored_because_not_subscribed_channels: change.ignoredChannels } : {}),
  };
}
