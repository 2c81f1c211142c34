import type { Tx } from '../db/transaction';
import type { EventBus } from '../events/bus';
import { loadCaller } from '../access/viewer';
import { getChannelById } from '../queries/channels';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserByEmailKey, getUserById } from '../queries/users';
import { sendMessageInTx } from './messages';
import { createUserInTx } from './users';

/** The organization's Notification Bot (Zulip's system bot that announces things), made on first use. */
export async function notificationBot(tx: Tx, realmId: number): Promise<UserRow> {
  const email = 'notification-bot@parley.invalid';
  const bot = await getUserByEmailKey(tx.trx, realmId, email);
  if (bot) return bot;
  return createUserInTx(tx, null, { realmId, email, fullName: 'Notification Bot', isBot: true, botType: 1 });
}

export const INTERNAL = { client: 'Internal', readBySender: true, internal: true } as const;

/** "announce": tells the organization's new-channel announcements channel, when it has one. */
export async function announceNewChannelInTx(tx: Tx, bus: EventBus, realm: RealmRow, creator: UserRow, name: string): Promise<void> {
  if (realm.new_stream_announcements_stream_id === null) return;
  const target = await getChannelById(tx.trx, realm.id, realm.new_stream_announcements_stream_id);
  if (!target || target.deactivated) return;
  const bot = await notificationBot(tx, realm.id);
  const content = `@_**${creator.full_name}|${creator.id}** created a new channel #**${name}**.`;
  await sendMessageInTx(
    tx,
    bus,
    await loadCaller(tx.trx, bot, realm),
    { kind: 'channel', channel: target, topic: 'new channels' },
    content,
    INTERNAL,
  );
}

/** Tells users someone else subscribed them (send_new_subscription_messages); returns whether any message went out. */
export async function notifySubscribedInTx(
  tx: Tx,
  bus: EventBus,
  realm: RealmRow,
  actor: UserRow,
  subscribed: Record<string, string[]>,
): Promise<boolean> {
  let sent = false;
  for (const [userId, names] of Object.entries(subscribed)) {
    if (Number(userId) === actor.id || names.length === 0) continue;
    const user = await getUserById(tx.trx, Number(userId));
    if (!user || user.is_bot) continue;
    const bot = await notificationBot(tx, realm.id);
    const who = `@_**${actor.full_name}|${actor.id}**`;
    const content =
      names.length === 1
        ? `${who} subscribed you to the channel #**${names[0]}**.`
        : `${who} subscribed you to the following channels:\n\n${names.map((n) => `* #**${n}**`).join('\n')}`;
    await sendMessageInTx(tx, bus, await loadCaller(tx.trx, bot, realm), { kind: 'direct', recipients: [user] }, content, INTERNAL);
    sent = true;
  }
  return sent;
}
