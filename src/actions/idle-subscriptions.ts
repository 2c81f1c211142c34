import type { Knex } from 'knex';
import {
  getNewestMessageId,
  insertIdleSpans,
  listIdleAndPendingAmong,
  listIdleSubscriptionStarts,
  updateIdleSubscriptions,
} from '../queries/soft-deactivation';

type Q = Knex | Knex.Transaction;

/**
 * The subscription bookkeeping of soft deactivation (ADR 0058), run inside
 * the subscribe and unsubscribe transactions. It concerns idle users, and
 * users caught up with a second pass still due: until that pass runs,
 * changes are recorded as while idle, so the pass judges the channels they
 * joined or left meanwhile rightly.
 */

/**
 * Users joined (or rejoined) a channel. An idle user's subscription is
 * marked idle and keeps its rows from the newest message on (its settings
 * are not looked at: keeping rows is always allowed); a pending user's only
 * records where it starts. Either way a catch-up gives them none of the
 * channel's past.
 */
export async function noteIdleSubscribeInTx(q: Q, recipientId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  const { idle, pending } = await listIdleAndPendingAmong(q, userIds);
  if (idle.size === 0 && pending.size === 0) return;
  const newest = await getNewestMessageId(q);
  await updateIdleSubscriptions(q, recipientId, [...idle], {
    idle_since_message_id: newest,
    is_user_long_term_idle: true,
    idle_keeps_rows: true,
  });
  await updateIdleSubscriptions(
    q,
    recipientId,
    [...pending.keys()].filter((id) => !idle.has(id)),
    { idle_since_message_id: newest },
  );
}

/**
 * Users left a channel. For idle and pending users, the range they were
 * subscribed while idle becomes a span (after their last active message, a
 * pending pass's start, or their joining, whichever is newest), so a
 * catch-up still gives them that part.
 */
export async function noteIdleUnsubscribeInTx(q: Q, recipientId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  const { idle, pending } = await listIdleAndPendingAmong(q, userIds);
  const keeping = [...new Set([...idle, ...pending.keys()])];
  if (keeping.length === 0) return;
  const newest = await getNewestMessageId(q);
  const spans = (await listIdleSubscriptionStarts(q, recipientId, keeping))
    .map((s) => {
      // A pending second pass looks from its own start, below the caught-up marker.
      const start = pending.get(s.userId) ?? s.lastActive;
      return { user_id: s.userId, recipient_id: recipientId, from_message_id: Math.max(start, s.idleSince), to_message_id: newest };
    })
    .filter((s) => s.to_message_id > s.from_message_id);
  await insertIdleSpans(q, spans);
  await updateIdleSubscriptions(q, recipientId, keeping, { idle_since_message_id: null });
}
