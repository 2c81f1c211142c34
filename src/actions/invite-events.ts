import type { Schema } from '../contract';
import type { Tx } from '../db/transaction';
import type { EventBody, EventBus } from '../events/bus';
import { listActiveHumanAdminIds } from '../queries/bots';

/**
 * Zulip's notify_invites_changed: an `invites_changed` event, after commit,
 * to the organization's administrators and the invitations' senders (who
 * then fetch GET /invites again).
 */
export async function queueInvitesChanged(tx: Tx, bus: EventBus, realmId: number, referrerIds: readonly number[]): Promise<void> {
  const audience = [...new Set([...(await listActiveHumanAdminIds(tx.trx, realmId)), ...referrerIds])];
  const event: EventBody<Schema<'InvitesChangedEvent'>> = { type: 'invites_changed' };
  tx.afterCommit(() => bus.publish({ event, userIds: audience }));
}
