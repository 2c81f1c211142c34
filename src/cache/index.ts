import type { Knex } from 'knex';
import type { Config } from '../config';
import { onInvalidation } from '../db/invalidations';
import type { EventBus } from '../ports/event-bus';
import type { Invalidation } from '../ports/invalidation';
import { CallerCache } from './caller';
import { ChannelCache } from './channels';
import type { InvalidatingCache } from './invalidating-cache';
import { LinkifierCache } from './linkifiers';
import { MutingUsersCache } from './muting-users';
import { OwnUserCache } from './own-users';
import { PlaygroundCache } from './playgrounds';
import { RealmDomainCache } from './realm-domains';
import { RealmCache } from './realms';
import { SessionCache } from './sessions';
import { TopicListCache } from './topic-lists';
import { UserCache } from './users';

/** The settings the caches are sized by (src/config.ts). */
export type CacheSettings = Pick<Config, 'cacheUsers' | 'cacheRealms' | 'cacheChannels' | 'cacheTtlSeconds'>;

/**
 * This process's caches (docs/adr/0011). Each cache module registers its
 * cache with the invalidations that concern it; the bus hands every
 * invalidation here, after the change committed and before its events are
 * delivered.
 */
export class Caches {
  private readonly entries: Array<{ cache: InvalidatingCache<never, never>; apply: (inv: Invalidation) => void }> = [];
  private readonly unsubscribe: () => void;
  /** Authenticated callers by API key, with their groups and subscriptions. */
  readonly callers: CallerCache;
  /** Organization rows by id, and their subdomains. */
  readonly realms: RealmCache;
  /** Channels to send to, with their active subscribers. */
  readonly channels: ChannelCache;
  /** User rows by id: the senders and participants that pages and polls name. */
  readonly users: UserCache;
  /** GET /users/me's extras by user id: the newest message held and the profile values. */
  readonly ownUsers: OwnUserCache;
  /** Each organization's linkifiers, compiled (rendering and topic links). */
  readonly linkifiers: LinkifierCache;
  /** Who muted each user (by the muted user), for the flags of a send. */
  readonly mutingUsers: MutingUsersCache;
  /** Each organization's domains and code playgrounds (register's realm_domains and realm_playgrounds). */
  readonly realmDomains: RealmDomainCache;
  readonly playgrounds: PlaygroundCache;
  /** Browser sessions by their key's SHA-256 (/json, the web client's requests). */
  readonly sessions: SessionCache;
  /** Channels' topic lists (GET /users/me/{stream_id}/topics with shared history). */
  readonly topicLists: TopicListCache;

  constructor(bus: EventBus, db: Knex, settings: CacheSettings) {
    // What is committed through `db` goes on the bus (which may carry it to
    // other processes), and what the bus carries empties these caches.
    const fromDb = onInvalidation(db, (inv) => bus.invalidate(inv));
    const fromBus = bus.onInvalidate((inv) => this.apply(inv));
    this.unsubscribe = () => (fromDb(), fromBus());
    const ttlMs = settings.cacheTtlSeconds * 1000;
    this.callers = new CallerCache(db, settings.cacheUsers, ttlMs);
    this.register(this.callers.cache, (inv) => this.callers.apply(inv));
    this.realms = new RealmCache(db, settings.cacheRealms, ttlMs);
    this.register(this.realms.rows, (inv) => this.realms.applyToRows(inv));
    this.register(this.realms.directory, (inv) => this.realms.applyToDirectory(inv));
    this.channels = new ChannelCache(db, settings.cacheChannels, ttlMs);
    this.register(this.channels.cache, (inv) => this.channels.apply(inv));
    this.users = new UserCache(db, settings.cacheUsers, ttlMs);
    this.register(this.users.cache, (inv) => this.users.apply(inv));
    this.ownUsers = new OwnUserCache(db, settings.cacheUsers, ttlMs);
    this.register(this.ownUsers.cache, (inv) => this.ownUsers.apply(inv));
    this.linkifiers = new LinkifierCache(db, settings.cacheRealms, ttlMs);
    this.register(this.linkifiers.cache, (inv) => this.linkifiers.apply(inv));
    this.mutingUsers = new MutingUsersCache(db, settings.cacheUsers, ttlMs);
    this.register(this.mutingUsers.cache, (inv) => this.mutingUsers.apply(inv));
    this.realmDomains = new RealmDomainCache(db, settings.cacheRealms, ttlMs);
    this.register(this.realmDomains.cache, (inv) => this.realmDomains.apply(inv));
    this.playgrounds = new PlaygroundCache(db, settings.cacheRealms, ttlMs);
    this.register(this.playgrounds.cache, (inv) => this.playgrounds.apply(inv));
    this.sessions = new SessionCache(db, settings.cacheUsers, ttlMs);
    this.register(this.sessions.cache, (inv) => this.sessions.apply(inv));
    this.topicLists = new TopicListCache(db, settings.cacheChannels, ttlMs);
    this.register(this.topicLists.cache, (inv) => this.topicLists.apply(inv));
  }

  /** Adds a cache; `apply` drops what an invalidation makes stale (`{kind: 'all'}` is handled here). */
  register<K extends string | number, V extends object>(
    cache: InvalidatingCache<K, V>,
    apply: (inv: Invalidation) => void,
  ): InvalidatingCache<K, V> {
    this.entries.push({ cache: cache as unknown as InvalidatingCache<never, never>, apply });
    return cache;
  }

  apply(inv: Invalidation): void {
    for (const e of this.entries) {
      if (inv.kind === 'all') e.cache.clear();
      else e.apply(inv);
    }
  }

  /** Size and hit counts of every cache (metrics, `cache stats`). */
  stats(): Array<{ name: string; size: number; hits: number; misses: number }> {
    return this.entries.map(({ cache }) => ({ name: cache.name, size: cache.size, hits: cache.hits, misses: cache.misses }));
  }

  close(): void {
    this.unsubscribe();
  }
}
