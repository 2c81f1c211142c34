import type { AppContext } from '../context';
import type { Tx } from '../db/transaction';
import type { ContractEvent } from '../events/bus';
import { listActiveUserIds } from '../queries/users';

/**
 * Queues user_group events for after the commit. Zulip sends every
 * user_group event to all active users of the organization, bots and guests
 * included (realm_user_groups is everyone's state).
 */
export async function queueGroupEvents(tx: Tx, bus: AppContext['bus'], realmId: number, events: ContractEvent[]): Promise<void> {
  if (events.length === 0) return;
  const audience = await listActiveUserIds(tx.trx, realmId);
  tx.afterCommit(() => {
    for (const event of events) bus.publish({ event, userIds: audience });
  });
}
