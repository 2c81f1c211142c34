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
// Per database as well as per bot: bot ids are a database's own, and one
// process may serve more than one (the test suite runs SQLite and MariaDB
// side by side), where a bot of one must not hold back another's notice.
let lastNotice = new WeakMap<object, Map<number, number>>();
/** The per-bot times, for tests that cross the minute without waiting. */
export const lastNoticeForTests = {
  clear(): void {
    lastNotice = new WeakMap();
  },
};

export async function doNotifyBotOwner(ctx: AppContext, bot: UserRow, realm: RealmRow, content: string): Promise<boolean> {
  if (!bot.is_bot || bot.bot_owner_id === null || realm.deactivated) return false;
  const now = ctx.clock.now();
  let times = lastNotice.get(ctx.db);
  if (!times) lastNotice.set(ctx.db, (times = new Map()));
  const last = times.get(bot.id);
  if (last !== undefined && now - last < WAIT_MS) return false;
  times.set(bot.id, now);
  if (times.size > 10_000) times.delete(times.keys().next().value!);
  const owner = await getUserById(ctx.db, bot.bot_owner_id);
  if (!owner || !owner.is_active) return false;
  await inTransaction(ctx.db, async (tx) => {
    const sender = await loadCaller(tx.trx, await notificationBot(tx, realm.id), realm);
    await sendMessageInTx(tx, ctx.bus, sender, { kind: 'direct', recipients: [owner] }, content, INTERNAL);
  });
  return true;
}
