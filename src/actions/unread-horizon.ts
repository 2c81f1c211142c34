import type { Knex } from 'knex';
import { nowSeconds } from '../queries/ids';
import {
  copyUnreadRows,
  findLastMessageSentBefore,
  findNthRowAbove,
  getUnreadHorizon,
  hasRowsAbove,
  raiseUnreadHorizon,
} from '../queries/unread';
import type { UserRow } from '../queries/rows';

/**
 * Rows above a user's horizon past which a read of their unread state moves
 * it up. Reads scan the rows above the horizon (src/queries/unread.ts), so
 * this bounds that scan, apart from the margin below; a higher horizon costs
 * side rows only for the messages still unread when it passes them.
 */
export const UNREAD_HORIZON_BOUND = 2000;

/**
 * A horizon never passes a message sent less than this long ago. A send
 * takes its message id (and date_sent) inside its transaction and commits
 * its user_messages rows a round trip later; sends commit out of id order,
 * so the newest rows a user can see may stand above a smaller id whose rows
 * are not committed yet. A horizon moved past such an id would leave those
 * rows unread below it with no side row: never seen as unread. Ten minutes
 * is far beyond any transaction's life (requests give up long before, and
 * a lost database connection ends its transaction), and far beyond the
 * clock difference of two nodes. (It relies on date_sent being the time of
 * the insert: messages written with an earlier date, by an import, must not
 * be written while the server runs.)
 */
export const UNREAD_HORIZON_MARGIN_SECONDS = 600;

/** Rows an advance's copy reads per statement. */
const COPY_CHUNK = 1000;

/**
 * Moves the user's horizon up when more than UNREAD_HORIZON_BOUND of their
 * rows lie above it: to their organization's newest message older than the
 * margin (every smaller id was taken earlier still, so its rows are
 * committed), once the still-unread rows it passes are in the side table.
 * The copy goes COPY_CHUNK rows a statement, each on its own: the side
 * table may hold more than it must, never less, so nothing needs the
 * copies in one transaction, and on MariaDB one long INSERT … SELECT would
 * hold locks on the user's rows (up to the gap where their next rows go)
 * for its whole length, holding up every send to them.
 * Nothing a client sees changes, so no event. Returns whether it moved.
 * (`now` and `bound` are the clock and UNREAD_HORIZON_BOUND; tests set them.)
 */
export async function doAdvanceUnreadHorizon(
  db: Knex,
  user: Pick<UserRow, 'id' | 'realm_id'>,
  { now = nowSeconds(), bound = UNREAD_HORIZON_BOUND }: { now?: number; bound?: number } = {},
): Promise<boolean> {
  const userId = user.id;
  const horizon = await getUnreadHorizon(db, userId);
  // The probe first: on a busy server the margin often leaves nowhere to go,
  // and then the scan of up to `bound` rows is skipped (marking read runs this).
  const to = await findLastMessageSentBefore(db, user.realm_id, now - UNREAD_HORIZON_MARGIN_SECONDS);
  if (to === null || to <= horizon) return false;
  if (!(await hasRowsAbove(db, userId, horizon, bound))) return false;
  for (let from = horizon; from < to;) {
    const end = await findNthRowAbove(db, userId, from, to, COPY_CHUNK);
    await copyUnreadRows(db, userId, from, end);
    from = end;
  }
  await raiseUnreadHorizon(db, userId, to);
  return true;
}
