import type { AppContext } from '../context';
import { loadCaller } from '../access/viewer';
import { inTransaction } from '../db/transaction';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserById } from '../queries/users';
import { sendMessageInTx } from './messages';
import { INTERNAL, notificationBot } from './notifications';

/**
 * Zulip tells a bot's owner, by a direct message from Notification Bot, when
 * the bot's requests go wrong in a way the owner must fix (a webhook URL
 * naming a channel that does not exist, a service sending bodies the
 * integration cannot read). At most one notice per bot a minute
 * (Zulip's BOT_OWNER_STREAM_ALERT_WAITPERIOD), so a misconfigured service
 * posting every second does not flood the owner. Zulip keeps the time on
 * the bot's row; here it is kept per node, which at worst sends one notice
 * a minute per node.
 */
const WAIT_MS = 60_000;
const lastNotice = new Map<number, number>();
/** The per-bot times, for tests that cross the minute without waiting. */
export const lastNoticeForTests: { clear(): void } = lastNotice;

export async function doNotifyBotOwner(ctx: AppContext, bot: UserRow, realm: RealmRow, content: string): Promise<boolean> {
  if (!bot.is_bot || bot.bot_owner_id === null || realm.deactivated) return false;
  const now = ctx.clock.now();
  const last = lastNotice.get(bot.id);
  if (last !== undefined && now - last < WAIT_MS) return false;
  lastNotice.set(bot.id, now);
  if (lastNotice.size > 10_000) lastNotice.delete(lastNotice.keys().next().value!);
  const owner = await getUserById(ctx.db, bot.bot_owner_id);
  if (!owner || !owner.is_active) return false;
  await inTransaction(ctx.db, async (tx) => {
    const sender = await loadCaller(tx.trx, await notificationBot(tx, realm.id), realm);
    await sendMessageInTx(tx, ctx.bus, sender, { kind: 'direct', recipients: [owner] }, content, INTERNAL);
  });
  return true;
}
