import type { Knex } from 'knex';
import { PushRelay } from './actions/push-relay';
import { OutgoingWebhooks } from './actions/outgoing-webhooks';
import { MissedMessageNotifier } from './actions/missed-message-emails';
import type { Config } from './config';
import { EventBus, InProcessBus } from './events/bus';
import { Clock, systemClock } from './events/clock';
import { QueueLimits, QueueManager } from './events/manager';
import path from 'node:path';
import { FileStore, LocalFileStore } from './storage/files';
import { serverSecret } from './storage/secret';
import { createRateLimits, RateLimits } from './actions/rate-limits';
import { ImageQueue } from './actions/image-queue';
import { RetentionStats } from './domain/retention-stats';
import { Caches } from './cache';
import { createMessageCache } from './cache/messages';
import type { InvalidatingCache } from './cache/invalidating-cache';
import type { MessageDict } from './serializers/message-dicts';

/** What actions, access checks and handlers need from the running server. */
export interface AppContext {
  db: Knex;
  bus: EventBus;
  /** This process's event queues (POST /register, GET /events); subscribed to `bus`. */
  queues: QueueManager;
  config: Config;
  /** When each user's activity was last written (src/actions/activity.ts). */
  recordedActivity: Map<number, number>;
  /** What actions with a time budget (delete_topic) tell time by: the queues' clock. */
  clock: Clock;
  /** End-to-end encrypted push through the relay (PUSH_RELAY_URL); null when push is not configured. */
  push: PushRelay | null;
  /** Uploaded files (DATA_DIR/uploads). */
  storage: FileStore;
  /** Signs temporary file URLs. */
  secret: Buffer;
  /** Zulip's rate limits: per user, per client address, per username for password logins. */
  rateLimits: RateLimits;
  /** Per-process caches, emptied by the invalidations on `bus` (src/cache/). */
  caches: Caches;
  /** Rendered message dicts by id (src/cache/messages.ts); null when CACHE_MESSAGES is 0. */
  messageCache: InvalidatingCache<number, MessageDict> | null;
  /** Avatar and custom emoji image work, one job at a time (src/actions/image-queue.ts). */
  images: ImageQueue;
  /** What this process's retention archiver did (src/actions/retention.ts), for the metrics. */
  retention: RetentionStats;
  /** Outgoing-webhook bots: the messages that call them, POSTed after commit (src/actions/outgoing-webhooks.ts). */
  outgoingWebhooks: OutgoingWebhooks;
  /** Who of a message's receivers is away and gets it by mail (src/actions/missed-message-emails.ts). */
  missedMessages: MissedMessageNotifier;
}

export function createContext(
  db: Knex,
  config: Config,
  bus: EventBus = new InProcessBus(),
  queueLimits: Partial<QueueLimits> = {},
  /** What the event queues tell time by (tests pass a manual clock). */
  queueClock: Clock = systemClock,
): AppContext {
  const base: Omit<AppContext, 'outgoingWebhooks' | 'missedMessages'> = {
    db,
    bus,
    queues: new QueueManager(bus, queueLimits, queueClock, config.nodeId),
    config,
    recordedActivity: new Map(),
    clock: queueClock,
    push: null,
    storage: new LocalFileStore(path.join(config.dataDir, 'uploads')),
    secret: serverSecret(config),
    rateLimits: createRateLimits(db, config),
    caches: new Caches(bus, db, config),
    messageCache: null,
    images: new ImageQueue(config.imageTimeoutSeconds),
    retention: new RetentionStats(),
  };
  base.messageCache = createMessageCache(base.caches, config.cacheMessages);
  // After the queues: a message reaches them first, so a receiver's queue is there when the relay asks.
  base.push = startPushRelay(db, bus, config, base.queues);
  const ctx: AppContext = Object.assign(base, {
    outgoingWebhooks: new OutgoingWebhooks(base),
    // After the queues, as the relay: a receiver's queue is there when the decision asks.
    missedMessages: new MissedMessageNotifier(db, bus, base.queues, () => queueClock.now()),
  });
  ctx.outgoingWebhooks.start();
  ctx.missedMessages.start();
  return ctx;
}

function startPushRelay(db: Knex, bus: EventBus, config: Config, queues: QueueManager): PushRelay | null {
  if (!config.pushRelayUrl) return null;
  const relay = new PushRelay(db, bus, config, queues);
  relay.start();
  return relay;
}
