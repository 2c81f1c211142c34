import type { Delivery, Invalidation, PerUserExtra, ServerEvent } from './bus';

/**
 * A delivery as it travels between nodes (src/events/redis-bus.ts). `perUser`
 * is a function, so it is evaluated when the delivery is published and its
 * results stored grouped: receivers with identical extras share one entry
 * (for a message nearly everyone has `{flags: []}`; mentioned users form a
 * second group), so a message to 10,000 users is one event and a few lists
 * of ids, not 10,000 copies.
 */
interface WireDelivery {
  e: ServerEvent;
  /** Receivers, when the delivery had no perUser. */
  u?: readonly number[];
  /** [extras, receivers] groups, when it had one. */
  g?: Array<[PerUserExtra, number[]]>;
  /** publicChannelRealmId. */
  r?: number;
  /** archivedChannels. */
  a?: boolean;
}

export function encodeDelivery(d: Delivery): string {
  const wire: WireDelivery = { e: d.event };
  if (d.perUser) {
    const groups = new Map<string, [PerUserExtra, number[]]>();
    for (const userId of d.userIds) {
      const extra = d.perUser(userId);
      const key = JSON.stringify(extra);
      const group = groups.get(key);
      if (group) group[1].push(userId);
      else groups.set(key, [extra, [userId]]);
    }
    wire.g = [...groups.values()];
  } else {
    wire.u = d.userIds;
  }
  if (d.publicChannelRealmId !== undefined) wire.r = d.publicChannelRealmId;
  if (d.archivedChannels !== undefined) wire.a = d.archivedChannels;
  return JSON.stringify(wire);
}

/** The delivery again, marked `remote` when another node published it. */
export function decodeDelivery(payload: string, remote: boolean): Delivery {
  const wire = JSON.parse(payload) as WireDelivery;
  const d: Delivery = { event: wire.e, userIds: wire.u ?? [] };
  if (wire.g) {
    const extras = new Map<number, PerUserExtra>();
    const userIds: number[] = [];
    for (const [extra, ids] of wire.g) {
      for (const id of ids) {
        extras.set(id, extra);
        userIds.push(id);
      }
    }
    d.userIds = userIds;
    d.perUser = (userId) => extras.get(userId) ?? {};
  }
  if (wire.r !== undefined) d.publicChannelRealmId = wire.r;
  if (wire.a !== undefined) d.archivedChannels = wire.a;
  if (remote) d.remote = true;
  return d;
}

export const encodeInvalidation = (inv: Invalidation): string => JSON.stringify(inv);
export const decodeInvalidation = (payload: string): Invalidation => JSON.parse(payload) as Invalidation;
