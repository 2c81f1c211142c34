import type { Schema } from '../contract';
import type { Invalidation, InvalidationListener } from './invalidation';

/**
 * The event bus, as a port (ADR 0034): actions hand it events after their
 * transaction commits (src/db/transaction.ts afterCommit); event queues
 * subscribe to it (src/events/manager.ts); the caches take invalidations
 * from it (src/cache/index.ts). The implementations live in src/events (in
 * process, and across processes through Redis: docs/adr/0005, 0016), so
 * actions never change when a transport is added.
 *
 * Adding an event kind is one `publish` in the action that makes the
 * change: the queues pass any event through unchanged unless
 * src/events/shape.ts has a per-queue shaper for its type.
 */
export interface ServerEvent {
  type: string;
  [key: string]: unknown;
}

/**
 * An event of the contract (openapi/components/events.yaml) as an action
 * publishes it: everything but the id, which each queue gives it. Built as
 * `EventBody<Schema<'RealmUserUpdateEvent'>>`, an event missing a field the
 * contract requires does not compile.
 */
export type EventBody<E extends { id: number; type: string }> = E extends unknown ? Omit<E, 'id'> : never;

/** Any event of the contract, as published. */
export type ContractEvent = EventBody<Schema<'Event'>>;

/**
 * What one event carries for one receiver beside the shared event
 * (Delivery.perUser), and what a queue keeps beside the event it holds
 * (src/events/queue.ts).
 */
export interface PerUserExtra {
  /** message and update_message events: the receiver's flags on the message (src/events/per-user-flags.ts). */
  flags?: readonly Schema<'MessageFlag'>[];
  /** message events, in the sending queue only: the client's id for the message (added by src/events/manager.ts). */
  local_message_id?: string;
  /** presence events: the modern form, which simplified_presence_events clients receive (src/actions/presence.ts). */
  modern?: Schema<'ModernPresence'>;
}

/** An event addressed to users; `perUser` lets one event carry per-recipient fields (e.g. message flags). */
export interface Delivery {
  event: ServerEvent;
  userIds: readonly number[];
  perUser?: (userId: number) => PerUserExtra;
  /**
   * Set on message events of a public channel: queues of that organization
   * registered with all_public_streams (or a narrow) take the event too,
   * with no flags, even when their user did not receive the message.
   */
  publicChannelRealmId?: number;
  /**
   * Set on the two events archiving a channel sends (Zulip's
   * archived_channels compatibility, feature level 378): true for the
   * `is_archived` update, which only queues with the archived_channels
   * capability take; false for the `delete`, which only the others take.
   */
  archivedChannels?: boolean;
  /**
   * Set by a cross-node bus (src/events/redis-bus.ts) on a delivery another
   * node published: what must happen once per change, not once per node
   * (push notifications), skips it.
   */
  remote?: boolean;
}

export type Listener = (delivery: Delivery) => void;

export interface EventBus {
  publish(delivery: Delivery): void;
  subscribe(listener: Listener): () => void;
  invalidate(invalidation: Invalidation): void;
  onInvalidate(listener: InvalidationListener): () => void;
  /**
   * Resolves once everything published so far has reached the transport
   * (Redis); the pipeline awaits it before answering a request, so a client
   * that got its answer knows every node will see the change's events. The
   * in-process bus has nothing to wait for and leaves it out.
   */
  flushed?(): Promise<void>;
  /**
   * A bus with a transport (Redis) also says whether it is connected now
   * (metrics read it at every scrape), answers a round trip to it within
   * `timeoutMs` or rejects (the health check), counts the times this node
   * dropped its queues because entries were lost, and closes, once what was
   * published has gone out (shutdown). The in-process bus has none of this.
   */
  connected?(): boolean;
  ping?(timeoutMs: number): Promise<void>;
  readonly stats?: { read: number; resets: number };
  close?(): Promise<void>;
}
