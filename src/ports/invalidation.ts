/**
 * What a committed change makes stale in the per-process caches
 * (src/cache/). A port: src/db declares invalidations where rows change and
 * publishes them after the commit (src/db/invalidations.ts), the caches apply
 * them, and the event bus carries them between processes, all without
 * naming one another (ADR 0034).
 *
 * Invalidations travel on the bus in one order with the deliveries, so that
 * with several processes a node drops its copy before it hands out the
 * event announcing the change: a client that refetches on an event never
 * reads the old value. An action's invalidations are published after its
 * commit and before its events.
 */
export type Invalidation =
  /** A user's row, API key, role, settings or memberships (groups, subscriptions). */
  | { kind: 'user'; userIds: readonly number[] }
  /** An organization's row or settings, or memberships of many of its users at once. */
  | { kind: 'realm'; realmId: number }
  /**
   * An organization's linkifiers (realm_linkifiers): only their compiled copies are stale, not
   * the organization's other cached rows (its users, its callers).
   */
  | { kind: 'linkifiers'; realmId: number }
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
  /** Channels' topic lists (channel_topics rows, ADR 0055): a send, move, deletion or restore in them. */
  | { kind: 'topics'; recipientIds: readonly number[] }
  /** An organization's domains (realm_domains rows). */
  | { kind: 'realm_domains'; realmId: number }
  /** An organization's code playgrounds (realm_playgrounds rows). */
  | { kind: 'playgrounds'; realmId: number }
  /** Everything (the `cache flush` command; a node that lost its place in the bus). */
  | { kind: 'all' };

/** Where committed invalidations go: the caches' side of the port. */
export type InvalidationListener = (invalidation: Invalidation) => void;
