import type { AppContext } from '../context';
import { setLastActiveTime } from '../queries/activity';
import { nowSeconds } from '../queries/ids';

/** Activity is recorded at most this often per user (partial subscriber lists only need the day). */
const RECORD_EVERY_SECONDS = 3600;

/**
 * Notes that a user was active (last_active_time), outside any message
 * transaction: updating the sender's row inside it would hold an exclusive
 * lock on a row that concurrent sends lock for their foreign keys, which
 * MariaDB answers with deadlocks. Best effort; throttled in memory, so a
 * send pays for it at most once an hour.
 */
export async function recordActivity(ctx: AppContext, userId: number): Promise<void> {
  const lastRecorded = ctx.recordedActivity;
  const now = nowSeconds();
  if ((lastRecorded.get(userId) ?? 0) > now - RECORD_EVERY_SECONDS) return;
  lastRecorded.set(userId, now);
  if (lastRecorded.size > 100_000) lastRecorded.clear();
  await setLastActiveTime(ctx.db, userId, now, now - RECORD_EVERY_SECONDS).catch(() => lastRecorded.delete(userId));
}
