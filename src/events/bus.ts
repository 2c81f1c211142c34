import type { Schema } from '../contract';

/**
 * The event bus. Actions hand it events after their transaction commits
 * (src/db/transaction.ts afterCommit); event queues subscribe to it
 * (src/events/manager.ts). The in-process implementation is the only
 * transport today; the interface is what a cross-process transport would
 * implement (docs/adr/0005-events-across-processes.md), so actions never
 * change when one is added.
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

/** An event addressed to users; `perUser` lets one event carry per-recipient fields (e.g. message flags). */
export interface Delivery {
  event: ServerEvent;
  userIds: readonly number[];
  perUser?: (userId: number) => Record<string, unknown>;
  /**
   * Set on message events of a public channel: queues of that organization
   * registered with all_public_streams (or a narrow) take the event too,
   * with no flags, even when their user did not receive the message.
   */
  publicChannelRealmId?: number;
  /**
   * Set by a cross-node bus (src/events/redis-bus.ts) on a delivery another
   * node published: what must happen once per change, not once per node
   * (push notifications), skips it.
   */
  remote?: boolean;
}

export type Listener = (delivery: Delivery) => void;

/**
 * What a committed change makes stale in the per-process caches
 * (src/cache/). Invalidations travel on the bus, in one order with the
 * deliveries, so that with several processes a node drops its copy before
 * it hands out the event announcing the change: a client that refetches
 * on an event never reads the old value. An action publishes its
 * invalidations after commit and before its events.
 */
export type Invalidation =
  /** A user's row, API key, role, settings or memberships (groups, subscriptions). */
  | { kind: 'user'; userIds: readonly number[] }
  /** An organization's row or settings, or memberships of many of its users at once. */
  | { kind: 'realm'; realmId: number }
  /** A channel's row or its subscriber list. */
  | { kind: 'channel'; channelIds: readonly number[] }
  /** Stored messages: content, topic, channel, reactions, submessages, edit history. */
  | { kind: 'messages'; messageIds: readonly number[] }
  /**
   * Which messages users hold rows for (user_messages rows added or removed: a send, history
   * a user acted on, a move that gives or takes access, a deletion); `'all'` where a bulk
   * statement does not say whose rows it changed.
   */
  | { kind: 'received'; userIds: readonly number[] | 'all' }
  /** Everything (the `cache flush` command; a node that lost its place in the bus). */
  | { kind: 'all' };

export type InvalidationListener = (invalidation: Invalidation) => void;

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

/** One process: listeners run synchronously, in publish order, before `publish` returns. */
export class InProcessBus implements EventBus {
  private listeners = new Set<Listener>();
  private invalidationListeners = new Set<InvalidationListener>();

  publish(delivery: Delivery): void {
    for (const l of this.listeners) l(delivery);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  invalidate(invalidation: Invalidation): void {
    for (const l of this.invalidationListeners) l(invalidation);
  }

  onInvalidate(listener: InvalidationListener): () => void {
    this.invalidationListeners.add(listener);
    return () => this.invalidationListeners.delete(listener);
  }
}
