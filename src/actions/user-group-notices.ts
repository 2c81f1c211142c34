import type { Tx } from '../db/transaction';
import type { EventBus } from '../events/bus';
import { loadCaller, type Caller } from '../access/viewer';
import type { UserRow } from '../queries/rows';
import { sendMessageInTx } from './messages';
import { INTERNAL, notificationBot } from './notifications';

/**
 * Zulip's notify_for_user_group_subscription_changes (the members
 * operation, not group creation): everyone added to or removed from a
 * group by someone else gets a direct message from the Notification Bot,
 * naming the actor and the group by silent mentions. Nobody is told of
 * their own change, and bots are never told. No setting turns it off.
 */
export async function notifyGroupMembershipInTx(
  tx: Tx,
  bus: EventBus,
  c: Caller,
  groupName: string,
  users: UserRow[],
  added: boolean,
): Promise<void> {
  const told = users.filter((u) => u.id !== c.user.id && !u.is_bot);
  if (told.length === 0) return;
  const botCaller = await loadCaller(tx.trx, await notificationBot(tx, c.realm.id), c.realm);
  const who = `@_**${c.user.full_name}|${c.user.id}**`;
  const group = `@_*${groupName}*`;
  const content = added ? `${who} added you to the group ${group}.` : `${who} removed you from the group ${group}.`;
  for (const user of told) {
    await sendMessageInTx(tx, bus, botCaller, { kind: 'direct', recipients: [user] }, content, INTERNAL);
  }
}
