import type { MessageBusEvent } from '../serializers/messages';
import type { Delivery, EventBus, PerUserExtra, ServerEvent } from './bus';
import { Clock, systemClock } from './clock';
import { matchesNarrow } from './narrow';
import type { QueueOptions } from './options';
import { badQueueId, EventCounter, EventQueue, HEARTBEAT, QueuedEvent } from './queue';
import { withheldFrom } from './shape';

/**
 * Timers and memory bounds of the event queues. Zulip's values where it has
 * them (heartbeat 45–55 s, idle expiry 10 minutes, collection every
 * minute); the caps are Parley's: Zulip bounds nothing but time.
 */
export interface QueueLimits {
  /** A waiting poll gets a heartbeat event after this long (±10%) with nothing else. */
  heartbeatMs: number;
  idleTimeoutMs: number;
  gcIntervalMs: number;
  /** A queue holding more unacknowledged events is discarded: its client re-registers and reloads. */
  maxEventsPerQueue: number;
  /** Registering one more discards the user's least recently polled queue. */
  maxQueuesPerUser: number;
  /** Registering one more discards the least recently polled queue of anyone. */
  maxQueues: number;
  /** Above this many events held in all, the idle queue holding the most is discarded. */
  maxEventsTotal: number;
}

export const DEFAULT_LIMITS: QueueLimits = {
  heartbeatMs: 50_000,
  idleTimeoutMs: 10 * 60_000,
  gcIntervalMs: 60_000,
  maxEventsPerQueue: 10_000,
  maxQueuesPerUser: 50,
  maxQueues: 100_000,
  maxEventsTotal: 1_000_000,
};

/**
 * The queues of this process. Subscribes to the bus and files each
 * delivery into the queues of its users that accept it; answers
 * register / poll / delete for the handlers.
 */
/** Told the user and the message ids their expired queue still held (QueueManager.onLastMessageQueueExpired). */
export type ExpiryListener = (userId: number, heldMessageIds: number[]) => void;

/** Whether the queue takes message events at all (no event_types filter, or one naming them). */
const takesMessages = (q: EventQueue) => q.opts.eventTypes === null || q.opts.eventTypes.has('message');

export class QueueManager {
  readonly limits: QueueLimits;
  /** Every queue, least recently active first (Map order is insertion order; touch re-inserts). */
  private readonly queues = new Map<string, EventQueue>();
  private readonly byUser = new Map<number, Set<EventQueue>>();
  /** Queues that also take public-channel messages, by organization. */
  private readonly publicByRealm = new Map<number, Set<EventQueue>>();
  private readonly counter: EventCounter = { events: 0 };
  private gcTimer: NodeJS.Timeout | null = null;
  private readonly unsubscribe: () => void;
  /** Set by drain(): the server is stopping, so no poll waits any more. */
  private draining = false;
  private readonly idPrefix: string;
  private readonly expiryListeners = new Set<ExpiryListener>();

  constructor(
    bus: EventBus,
    limits: Partial<QueueLimits> = {},
    private readonly clock: Clock = systemClock,
    /**
     * NODE_ID: queue ids become `<node>:<uuid>`, which is how HAProxy routes
     * GET/DELETE /events to this node (docs/deployment.md). A queue id of
     * another node is simply unknown here: BAD_EVENT_QUEUE_ID at once, and
     * the client registers again, as after a restart.
     */
    nodeId: string | null = null,
  ) {
    this.idPrefix = nodeId === null ? '' : `${nodeId}:`;
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.unsubscribe = bus.subscribe((d) => this.dispatch(d));
  }

  get stats() {
    return { queues: this.queues.size, events: this.counter.events };
  }

  /** Long-polls waiting right now (GET /metrics; counted on demand, never on the request path). */
  waitingPolls(): number {
    let n = 0;
    for (const q of this.queues.values()) if (q.waiting) n++;
    return n;
  }

  register(opts: QueueOptions): EventQueue {
    const mine = this.byUser.get(opts.userId);
    if (mine && mine.size >= this.limits.maxQueuesPerUser) this.drop(leastRecent(mine));
    if (this.queues.size >= this.limits.maxQueues) this.drop(this.queues.values().next().value!);
    const q = new EventQueue(opts, this.clock, this.counter, this.idPrefix);
    this.queues.set(q.id, q);
    addTo(this.byUser, opts.userId, q);
    if (opts.publicChannels) addTo(this.publicByRealm, opts.realmId, q);
    this.startGc();
    return q;
  }

  /** The caller's queue; unknown, expired and other users' queues are all BAD_EVENT_QUEUE_ID. */
  access(userId: number, queueId: string): EventQueue {
    const q = this.queues.get(queueId);
    if (!q || q.opts.userId !== userId) throw badQueueId(queueId);
    if (this.expired(q, this.clock.now())) {
      this.expire(q);
      throw badQueueId(queueId);
    }
    return q;
  }

  delete(userId: number, queueId: string): void {
    this.drop(this.access(userId, queueId));
  }

  /**
   * GET /events: acknowledge through `lastEventId`, then return what is
   * queued, waiting for something first unless `dontBlock`. `signal`
   * aborts the wait (the client went away).
   */
  async poll(
    userId: number,
    queueId: string,
    lastEventId: number,
    dontBlock: boolean,
    signal?: AbortSignal,
  ): Promise<{ events: QueuedEvent[]; opts: QueueOptions }> {
    const q = this.access(userId, queueId);
    q.acknowledge(lastEventId);
    this.touch(q);
    // While the server stops, a poll is answered at once: with a heartbeat when nothing is queued.
    if (this.draining && q.events.length === 0) q.push(HEARTBEAT);
    if (q.events.length === 0 && !dontBlock && !signal?.aborted) {
      // ±10% as Zulip (45–55 s), so the heartbeats of clients that registered together do not stay in step.
      const { done, cancel } = q.wait(this.limits.heartbeatMs * (0.9 + Math.random() * 0.2));
      signal?.addEventListener('abort', cancel, { once: true });
      await done;
      signal?.removeEventListener('abort', cancel);
      this.touch(q);
    }
    return { events: q.events.slice(), opts: q.opts };
  }

  /**
   * Server shutdown, first step: every waiting poll is answered now with a
   * heartbeat, and later polls do not wait. A Zulip client takes the
   * heartbeat as any other (it polls again from its id); when the server is
   * back, that poll finds the queue gone (BAD_EVENT_QUEUE_ID) and the client
   * registers anew, as after any restart. The queues stay until close(), so
   * the answers in flight still find their events.
   */
  drain(): void {
    this.draining = true;
    for (const q of this.queues.values()) if (q.waiting) q.push(HEARTBEAT);
  }

  /**
   * Discards every queue: the node lost events (src/events/redis-bus.ts), so
   * its queues cannot be trusted; their clients register again.
   */
  dropAll(): void {
    for (const q of [...this.queues.values()]) this.drop(q);
  }

  /** Discards every queue and stops the timers (server shutdown). */
  close(): void {
    this.unsubscribe();
    if (this.gcTimer) clearInterval(this.gcTimer);
    this.gcTimer = null;
    for (const q of [...this.queues.values()]) this.drop(q);
  }

  /** Removes queues idle past the timeout; returns how many. */
  collectGarbage(): number {
    const now = this.clock.now();
    let n = 0;
    for (const q of [...this.queues.values()]) {
      if (this.expired(q, now)) {
        this.expire(q);
        n++;
      }
    }
    return n;
  }

  /** Whether one of the user's queues here takes message events (Zulip's receiver_is_off_zulip, negated). */
  hasMessageQueue(userId: number): boolean {
    for (const q of this.byUser.get(userId) ?? []) if (takesMessages(q)) return true;
    return false;
  }

  /**
   * Calls `listener` when a user's last queue taking messages expires (its
   * client stopped polling), with the ids of the messages it still held —
   * delivered after the client's last poll, so never seen there (Zulip's
   * missedmessage_hook; the push relay notifies what it held back).
   */
  onLastMessageQueueExpired(listener: ExpiryListener): () => void {
    this.expiryListeners.add(listener);
    return () => this.expiryListeners.delete(listener);
  }

  private expire(q: EventQueue): void {
    const held = takesMessages(q)
      ? q.events.flatMap((e) => (e.event.type === 'message' ? [(e.event as MessageBusEvent).message.id] : []))
      : [];
    this.drop(q);
    if (this.expiryListeners.size === 0 || !takesMessages(q) || this.hasMessageQueue(q.opts.userId)) return;
    for (const l of this.expiryListeners) l(q.opts.userId, held);
  }

  private dispatch(d: Delivery): void {
    const targets = new Map<EventQueue, PerUserExtra | undefined>();
    if (d.publicChannelRealmId !== undefined) {
      for (const q of this.publicByRealm.get(d.publicChannelRealmId) ?? []) targets.set(q, { flags: [] });
    }
    for (const userId of d.userIds) {
      const qs = this.byUser.get(userId);
      if (!qs) continue;
      const extra = d.perUser?.(userId);
      for (const q of qs) targets.set(q, extra);
    }
    const senderQueue = d.event.type === 'message' ? d.event.sender_queue_id : undefined;
    for (const [q, extra] of targets) {
      if (!accepts(q.opts, d.event, extra)) continue;
      // Archiving's two events, each for one kind of client (src/ports/event-bus.ts archivedChannels).
      if (d.archivedChannels !== undefined && d.archivedChannels !== q.opts.capabilities.archivedChannels) continue;
      const localId = q.id === senderQueue ? (d.event as MessageBusEvent).local_message_id : undefined;
      if (d.event.type === 'delete_message' && !q.opts.capabilities.bulkMessageDeletion) pushPerMessage(q, d.event);
      else q.push(d.event, localId != null ? { ...extra, local_message_id: localId } : extra);
      if (q.events.length > this.limits.maxEventsPerQueue) this.drop(q);
    }
    while (this.counter.events > this.limits.maxEventsTotal) this.drop(this.largestQueue());
  }

  private expired(q: EventQueue, now: number): boolean {
    return !q.waiting && now - q.lastActivity >= this.limits.idleTimeoutMs;
  }

  private touch(q: EventQueue): void {
    if (!this.queues.delete(q.id)) return; // discarded while its poll waited
    q.lastActivity = this.clock.now();
    this.queues.set(q.id, q);
  }

  private drop(q: EventQueue): void {
    if (!this.queues.delete(q.id)) return;
    removeFrom(this.byUser, q.opts.userId, q);
    removeFrom(this.publicByRealm, q.opts.realmId, q);
    q.clear();
    if (this.queues.size === 0 && this.gcTimer) {
      clearInterval(this.gcTimer);
      this.gcTimer = null;
    }
  }

  /** The queue holding the most events, preferring one nobody is polling (likely a dead client). */
  private largestQueue(): EventQueue {
    let best: EventQueue | null = null;
    for (const q of this.queues.values()) {
      if (!best || (best.waiting && !q.waiting) || (best.waiting === q.waiting && q.events.length > best.events.length)) best = q;
    }
    return best!;
  }

  /** The collection timer exists only while there are queues, and never keeps the process alive. */
  private startGc(): void {
    if (this.gcTimer) return;
    this.gcTimer = setInterval(() => this.collectGarbage(), Math.min(this.limits.gcIntervalMs, this.limits.idleTimeoutMs));
    this.gcTimer.unref();
  }
}

/** Zulip's ClientDescriptor.accepts_event: the event_types filter, the narrow, stream typing by capability, and what shaping withholds. */
function accepts(opts: QueueOptions, event: ServerEvent, extra: PerUserExtra | undefined): boolean {
  if (opts.eventTypes && !opts.eventTypes.has(event.type)) return false;
  if (event.type === 'message') {
    return matchesNarrow(opts.narrow, event.message as object, extra?.flags ?? []);
  }
  // Channel typing notifications only reach clients that declared they handle them (Zulip's compatibility rule).
  if (event.type === 'typing' && 'stream_id' in event) return opts.capabilities.streamTypingNotifications;
  return !withheldFrom(opts, event);
}

function leastRecent(qs: Set<EventQueue>): EventQueue {
  let best: EventQueue | null = null;
  for (const q of qs)
    if (!best || (best.waiting && !q.waiting) || (best.waiting === q.waiting && q.lastActivity < best.lastActivity)) best = q;
  return best!;
}

function addTo<K>(map: Map<K, Set<EventQueue>>, key: K, q: EventQueue): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(q);
}

function removeFrom<K>(map: Map<K, Set<EventQueue>>, key: K, q: EventQueue): void {
  const set = map.get(key);
  if (set?.delete(q) && set.size === 0) map.delete(key);
}

/**
 * Zulip's process_deletion_event: a client without the bulk_message_deletion
 * capability gets one delete_message event per message, with `message_id`
 * instead of `message_ids`.
 */
function pushPerMessage(q: EventQueue, event: ServerEvent): void {
  const { message_ids: ids, ...rest } = event;
  for (const messageId of (ids as number[] | undefined) ?? []) q.push({ ...rest, message_id: messageId });
}
