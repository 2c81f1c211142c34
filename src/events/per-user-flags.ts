import { flagsToApi } from '../domain/flags';
import type { PerUserExtra } from './bus';

/**
 * Delivery.perUser for message events: each receiver's flags, from their
 * stored flag bits. Receivers with the same bits (in a large channel,
 * nearly all of them: unread, or read for the sender) share one frozen
 * object, so a delivery to 10,000 queues holds a handful of flag lists,
 * not 10,000.
 */
export function flagsPerUser(bitsByUser: ReadonlyMap<number, number>): (userId: number) => PerUserExtra {
  const byBits = new Map<number, PerUserExtra>();
  return (userId) => {
    const bits = bitsByUser.get(userId) ?? 0;
    let extra = byBits.get(bits);
    if (!extra) byBits.set(bits, (extra = Object.freeze({ flags: Object.freeze(flagsToApi(bits)) })));
    return extra;
  };
}
