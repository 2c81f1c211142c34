/**
 * The event bus. Actions hand it events after their transaction commits
 * (src/db/transaction.ts afterCommit); event queues subscribe to it. The
 * in-process implementation is the only transport today; the interface is
 * what a cross-process transport would implement (docs/adr/0005).
 */
export interface ServerEvent {
  type: string;
  [key: string]: unknown;
}

/** An event addressed to users; `perUser` lets one event carry per-recipient fields (e.g. message flags). */
export interface Delivery {
  event: ServerEvent;
  userIds: readonly number[];
  perUser?: (userId: number) => Record<string, unknown>;
}

export type Listener = (delivery: Delivery) => void;

export interface EventBus {
  publish(delivery: Delivery): void;
  subscribe(listener: Listener): () => void;
}

export class InProcessBus implements EventBus {
  private listeners = new Set<Listener>();

  publish(delivery: Delivery): void {
    for (const l of this.listeners) l(delivery);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
