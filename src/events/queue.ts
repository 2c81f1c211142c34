import crypto from 'node:crypto';
import type { Schema } from '../contract';
import { ApiError } from '../errors';
import type { EventBody, PerUserExtra, ServerEvent } from './bus';
import type { Clock } from './clock';
import type { QueueOptions } from './options';

/**
 * One queued event. The event object is shared by every queue that took it
 * (a message to a 1,000-subscriber channel is one object, not 1,000);
 * what differs per queue (the receiver's flags, local_message_id) is in
 * `extra`. The wire form is built when a poll returns (src/events/shape.ts).
 */
export interface QueuedEvent {
  id: number;
  event: ServerEvent;
  extra?: PerUserExtra;
}

const heartbeat: EventBody<Schema<'HeartbeatEvent'>> = { type: 'heartbeat' };
export const HEARTBEAT: ServerEvent = Object.freeze(heartbeat);

/** Events held by all queues together (the manager's memory bound). */
export interface EventCounter {
  events: number;
}

interface Waiter {
  wake: () => void;
  cancelHeartbeat: () => void;
}

export const badQueueId = (queueId: string) =>
  new ApiError(`Bad event queue ID: ${queueId}`, 'BAD_EVENT_QUEUE_ID', 400, { queue_id: queueId });

/**
 * An event queue: events with increasing ids (per queue), dropped when the
 * client acknowledges them with last_event_id, and at most one waiting
 * long-poll. Ids start at 0; the first acknowledgement is -1.
 */
export class EventQueue {
  /** Random and unguessable (behind the node's prefix, if any); a queue also answers only to its own user. */
  readonly id: string;
  readonly events: QueuedEvent[] = [];
  private nextId = 0;
  /** The newest id acknowledged and dropped (Zulip's newest_pruned_id). */
  private newestPrunedId = -1;
  private waiter: Waiter | null = null;
  lastActivity: number;

  constructor(
    readonly opts: QueueOptions,
    private readonly clock: Clock,
    private readonly counter: EventCounter,
    idPrefix = '',
  ) {
    this.id = idPrefix + crypto.randomUUID();
    this.lastActivity = clock.now();
  }

  get waiting(): boolean {
    return this.waiter !== null;
  }

  push(event: ServerEvent, extra?: PerUserExtra): void {
    this.events.push(extra ? { id: this.nextId++, event, extra } : { id: this.nextId++, event });
    this.counter.events++;
    this.wake();
  }

  /**
   * Drops the events up to `lastEventId`. As Zulip's fetch_events, an id
   * older than what was already dropped, or one this queue never had, is
   * an error; unlike Zulip nothing is dropped when it is one.
   */
  acknowledge(lastEventId: number): void {
    if (lastEventId < this.newestPrunedId) {
      throw new ApiError(`An event newer than ${lastEventId} has already been pruned!`);
    }
    let n = 0;
    while (n < this.events.length && this.events[n]!.id <= lastEventId) n++;
    const newest = n > 0 ? this.events[n - 1]!.id : this.newestPrunedId;
    if (newest !== lastEventId) throw new ApiError(`Event ${lastEventId} was not in this queue`);
    this.events.splice(0, n);
    this.counter.events -= n;
    this.newestPrunedId = newest;
  }

  /**
   * Waits for the next event; after `heartbeatMs` of nothing a heartbeat
   * event is queued, which ends the wait. A newer poll replaces a waiting
   * one, which then returns what there is (as Zulip). `cancel` ends this
   * wait only, never a later poll's.
   */
  wait(heartbeatMs: number): { done: Promise<void>; cancel: () => void } {
    this.wake();
    let mine: Waiter | null = null;
    const done = new Promise<void>((resolve) => {
      const cancelHeartbeat = this.clock.schedule(() => this.push(HEARTBEAT), heartbeatMs);
      mine = { wake: resolve, cancelHeartbeat };
      this.waiter = mine;
    });
    return { done, cancel: () => (this.waiter === mine ? this.wake() : undefined) };
  }

  /** Ends the waiting poll, if any. */
  wake(): void {
    const w = this.waiter;
    if (!w) return;
    this.waiter = null;
    w.cancelHeartbeat();
    w.wake();
  }

  /** Forgets every event (the queue is being discarded). */
  clear(): void {
    this.counter.events -= this.events.length;
    this.events.length = 0;
    this.wake();
  }
}
