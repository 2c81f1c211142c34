import type { Redis } from 'ioredis';

/** ioredis, loaded only where Redis is configured: a start without it does not pay for the module. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ioredis = () => require('ioredis') as typeof import('ioredis');
import { closeRedis, pingRedis, within } from './redis-calls';
import type { Delivery, EventBus, Invalidation, InvalidationListener, Listener } from './bus';
import { decodeDelivery, decodeInvalidation, encodeDelivery, encodeInvalidation } from './bus-codec';

/**
 * The event bus of a cluster (EVENT_BUS=redis; docs/adr/0016-redis-event-bus.md):
 * one Redis Stream that every node appends to and reads in full.
 *
 * - Every delivery and invalidation is appended (XADD, trimmed to about
 *   `maxLen` entries); every node, the publisher included, hands an entry to
 *   its listeners only when it reads it back. So all queues of all nodes see
 *   one order, and invalidations stay ordered with the deliveries.
 * - A node reads from the last entry it handled. It checks that entry is still
 *   in the stream (XRANGE from it, inclusive): trimming removes the oldest
 *   entries first, so if it is there nothing after it was lost. If it is gone,
 *   the node fell behind (or Redis lost data): it drops its queues (clients
 *   register again, as after a restart), empties its caches, and goes on from
 *   the newest entry.
 * - While Redis is unreachable, writes still commit: appends wait in the
 *   client's queue, in order, and go out on reconnection (bounded: past
 *   `maxPending` they are dropped and a reset entry tells every node to drop
 *   its queues). Reconnection backs off up to 2 s.
 */
export interface RedisBusOptions {
  url: string;
  /** This node's name, stamped on its entries. */
  nodeId: string;
  maxLen: number;
  /** The stream's key (tests use their own). */
  key?: string;
  /** Appends waiting for Redis before they are dropped (a reset follows). */
  maxPending?: number;
  /** How long one blocking read waits before it checks again. */
  blockMs?: number;
  /** Entries read per round trip. */
  batch?: number;
  onError?: (err: unknown, what: string) => void;
}

/** Entry kinds: a delivery, an invalidation, a node's start marker, a reset (appends were lost). */
type Kind = 'd' | 'i' | 'h' | 'r';

/** How long a request waits for its events to reach Redis before it is answered anyway. */
const FLUSH_WAIT_MS = 2000;

export class RedisBus implements EventBus {
  private readonly listeners = new Set<Listener>();
  private readonly invalidationListeners = new Set<InvalidationListener>();
  private readonly resetListeners = new Set<() => void>();
  private readonly writer: Redis;
  private readonly reader: Redis;
  private readonly key: string;
  private readonly maxPending: number;
  private readonly blockMs: number;
  private readonly batch: number;
  /** The id of the last entry handed to the listeners; null until the first read. */
  private lastId: string | null = null;
  private pending = 0;
  private lastWrite: Promise<void> = Promise.resolve();
  private lostAppends = false;
  private closed = false;
  private loop: Promise<void> | null = null;
  /** Entries handed to listeners, and resets (tests, metrics). */
  readonly stats = { read: 0, resets: 0 };

  constructor(private readonly opts: RedisBusOptions) {
    this.key = opts.key ?? 'parley:events';
    this.maxPending = opts.maxPending ?? 100_000;
    this.blockMs = opts.blockMs ?? 5000;
    this.batch = opts.batch ?? 1000;
    const common = {
      // Commands wait for the connection however long it takes; the writer's are bounded by maxPending.
      maxRetriesPerRequest: null,
      retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
      lazyConnect: false,
    };
    this.writer = new (ioredis().Redis)(opts.url, { ...common, connectionName: `parley-${opts.nodeId}-w` });
    this.reader = new (ioredis().Redis)(opts.url, { ...common, connectionName: `parley-${opts.nodeId}-r` });
    for (const c of [this.writer, this.reader]) c.on('error', (err) => this.report(err, 'redis connection'));
    // Appends dropped while Redis was away: once it is back, every node is told to start over.
    this.writer.on('ready', () => {
      if (this.lostAppends) {
        this.lostAppends = false;
        this.append('r', '', true);
      }
    });
  }

  /** Starts reading: resolves once this node has its place in the stream (Redis reachable). */
  async start(): Promise<void> {
    this.lastId = await this.marker();
    this.loop = this.readLoop();
  }

  publish(delivery: Delivery): void {
    this.append('d', encodeDelivery(delivery));
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Applied here at once (so this node never serves a value it just
   * changed), then by every node, this one included, when it reads it.
   */
  invalidate(invalidation: Invalidation): void {
    for (const l of this.invalidationListeners) l(invalidation);
    this.append('i', encodeInvalidation(invalidation));
  }

  onInvalidate(listener: InvalidationListener): () => void {
    this.invalidationListeners.add(listener);
    return () => this.invalidationListeners.delete(listener);
  }

  /** Called when this node's queues must go: it lost entries (fell behind, Redis lost data, appends dropped). */
  onReset(listener: () => void): () => void {
    this.resetListeners.add(listener);
    return () => this.resetListeners.delete(listener);
  }

  flushed(): Promise<void> {
    // Redis away: the request is answered now; its events follow on reconnection.
    if (this.pending === 0 || this.writer.status !== 'ready') return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, FLUSH_WAIT_MS);
      timer.unref();
    });
    return Promise.race([this.lastWrite, bound]).finally(() => clearTimeout(timer));
  }

  /** Both connections are up (metrics). */
  connected(): boolean {
    return this.writer.status === 'ready' && this.reader.status === 'ready';
  }

  /**
   * A PING on the writer (the health check): it waits behind the appends in
   * flight, so it also tells whether Redis keeps up. Not connected: refused
   * at once, never queued.
   */
  async ping(timeoutMs: number): Promise<void> {
    await pingRedis(this.writer, timeoutMs);
  }

  /**
   * Sends what is still pending (at most FLUSH_WAIT_MS), then closes both
   * connections. Redis away: appends still queued are dropped (the process
   * is going away) rather than holding the stop for ever; a QUIT Redis does
   * not answer is cut after FLUSH_WAIT_MS too.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushed();
    const readerUp = this.reader.status === 'ready';
    this.reader.disconnect();
    // Connected, the read in flight fails as the connection closes and the loop ends. Not
    // connected, ioredis keeps the read queued for a reconnection that disconnect() cancels:
    // it never settles, so the loop is left behind (the process is stopping).
    if (readerUp && this.loop)
      await within(
        this.loop.catch(() => undefined),
        FLUSH_WAIT_MS,
      );
    await closeRedis(this.writer, FLUSH_WAIT_MS);
  }

  private append(kind: Kind, payload: string, always = false): void {
    if (this.closed) return;
    if (this.pending >= this.maxPending && !always) {
      this.lostAppends = true;
      return;
    }
    this.pending++;
    this.lastWrite = this.writer
      .xadd(this.key, 'MAXLEN', '~', this.opts.maxLen, '*', 'n', this.opts.nodeId, 'k', kind, 'p', payload)
      .then(
        () => undefined,
        (err: unknown) => {
          // Refused (out of memory, a wrong key type): the entry is lost for every node.
          this.lostAppends = true;
          this.report(err, 'event append');
        },
      )
      .finally(() => this.pending--);
  }

  /** Appends this node's start marker; its id is where the node starts reading. */
  private async marker(): Promise<string> {
    const id = await this.writer.xadd(this.key, 'MAXLEN', '~', this.opts.maxLen, '*', 'n', this.opts.nodeId, 'k', 'h', 'p', '');
    return id!;
  }

  private async readLoop(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      try {
        await this.readOnce();
        failures = 0;
      } catch (err) {
        if (this.closed) return;
        this.report(err, 'event stream read');
        failures++;
        await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** Math.min(failures, 6), 2000)));
      }
    }
  }

  private async readOnce(): Promise<void> {
    const from = this.lastId!;
    const entries = await this.reader.xrange(this.key, from, '+', 'COUNT', this.batch + 1);
    if (entries.length === 0 || entries[0]![0] !== from) {
      await this.lostPlace();
      return;
    }
    for (let i = 1; i < entries.length; i++) this.handle(entries[i]![0], entries[i]![1]);
    if (entries.length <= this.batch) {
      // Up to date: wait for the next entry (the answer itself is read by the XRANGE above).
      await this.reader.xread('COUNT', 1, 'BLOCK', this.blockMs, 'STREAMS', this.key, this.lastId!);
    }
  }

  private handle(id: string, fields: string[]): void {
    this.lastId = id;
    this.stats.read++;
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    try {
      switch (f.k as Kind) {
        case 'd': {
          const d = decodeDelivery(f.p!, f.n !== this.opts.nodeId);
          for (const l of this.listeners) l(d);
          break;
        }
        case 'i': {
          // Every node applies every invalidation in the stream's order, the
          // publisher too (again: it applied its own at once as well).
          const inv = decodeInvalidation(f.p!);
          for (const l of this.invalidationListeners) l(inv);
          break;
        }
        case 'r':
          this.reset();
          break;
        default: // 'h': a node started
      }
    } catch (err) {
      this.report(err, `event ${id}`);
    }
  }

  /** The entry this node read last is gone: entries after it may be lost too. */
  private async lostPlace(): Promise<void> {
    const newest = await this.reader.xrevrange(this.key, '+', '-', 'COUNT', 1);
    this.lastId = newest.length ? newest[0]![0] : await this.marker();
    this.reset();
  }

  private reset(): void {
    this.stats.resets++;
    for (const l of this.resetListeners) l();
    for (const l of this.invalidationListeners) l({ kind: 'all' });
  }

  private report(err: unknown, what: string): void {
    if (this.closed) return;
    this.opts.onError?.(err, what);
  }
}
