import type { Delivery, EventBus, Listener } from '../ports/event-bus';
import type { Invalidation, InvalidationListener } from '../ports/invalidation';

/**
 * The event bus's interfaces live in src/ports (ADR 0034), below src/db and
 * src/cache, which take invalidations through them; they are named here too
 * for the code that names them from src/events. This file keeps the
 * in-process implementation, the only transport besides Redis
 * (src/events/redis-bus.ts).
 */
export type { ContractEvent, Delivery, EventBody, EventBus, Listener, PerUserExtra, ServerEvent } from '../ports/event-bus';
export type { Invalidation, InvalidationListener } from '../ports/invalidation';

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
