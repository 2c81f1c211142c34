import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { flagMask } from '../domain/flags';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { accessUserToMute } from '../access/muted-users';
import type { Caller } from '../access/viewer';
import { insertAuditLog } from '../queries/audit';
import { nowSeconds } from '../queries/ids';
import { updateUserMessageFlags } from '../queries/messages';
import { deleteMute, insertMute, isMuted, listMutedUsers, listUnreadFromSender, lockMuter } from '../queries/muted-users';
import { toApiMutedUsers } from '../serializers/muted-users';
import { queueFlagEvent } from './flags';

/**
 * POST /users/me/muted_users/{muted_user_id}, in Zulip's order: oneself is
 * refused before the user is looked up; then the user (bots and deactivated
 * users may be muted); then a mute already there. Muting marks the caller's
 * unread messages from that user read (an update_message_flags event, as
 * Zulip's do_mark_muted_user_messages_as_read), then sends the whole list.
 */
export async function doMuteUser(ctx: AppContext, caller: Caller, mutedUserId: number): Promise<Data<'mute-user'>> {
  if (mutedUserId === caller.user.id) throw new ApiError('Cannot mute self');
  await inTransaction(ctx.db, async (tx) => {
    const target = await accessUserToMute(tx.trx, caller, mutedUserId);
    await lockMuter(tx.trx, caller.user.id);
    if (await isMuted(tx.trx, caller.user.id, target.id)) throw new ApiError('User already muted');
    await insertMute(tx.trx, caller.user.id, target.id, nowSeconds());
    const unread = await listUnreadFromSender(tx.trx, caller.user.id, target.id);
    if (unread.length) await updateUserMessageFlags(tx.trx, caller.user.id, unread, 'add', flagMask('read'));
    await queueFlagEvent(ctx, tx, caller, 'add', 'read', unread);
    await queueMutedUsersEvent(ctx, tx, caller.user.id);
    // As Zulip's: the muting user is both the actor and the modified user; the muted one is in extra_data.
    await insertAuditLog(tx.trx, {
      realmId: caller.user.realm_id,
      actorId: caller.user.id,
      userId: caller.user.id,
      eventType: AuditEventType.USER_MUTED,
      extra: { muted_user_id: target.id },
    });
  });
  return {};
}

/**
 * DELETE /users/me/muted_users/{muted_user_id}: the same look-up, then
 * "User is not muted" (oneself included: one cannot have muted oneself).
 * Messages marked read by the mute stay read.
 */
export async function doUnmuteUser(ctx: AppContext, caller: Caller, mutedUserId: number): Promise<Data<'unmute-user'>> {
  await inTransaction(ctx.db, async (tx) => {
    const target = await accessUserToMute(tx.trx, caller, mutedUserId);
    if (!(await deleteMute(tx.trx, caller.user.id, target.id))) throw new ApiError('User is not muted');
    await queueMutedUsersEvent(ctx, tx, caller.user.id);
    await insertAuditLog(tx.trx, {
      realmId: caller.user.realm_id,
      actorId: caller.user.id,
      userId: caller.user.id,
      eventType: AuditEventType.USER_UNMUTED,
      extra: { unmuted_user_id: target.id },
    });
  });
  return {};
}

/** The user's whole list after the change, read in the transaction, to all of the user's clients after commit. */
async function queueMutedUsersEvent(ctx: AppContext, tx: Tx, userId: number): Promise<void> {
  const event: EventBody<Schema<'MutedUsersEvent'>> = {
    type: 'muted_users',
    muted_users: toApiMutedUsers(await listMutedUsers(tx.trx, userId)),
  };
  tx.afterCommit(() => ctx.bus.publish({ event, userIds: [userId] }));
}
