import fs from 'node:fs';
import path from 'node:path';
import { createDb } from '../../src/db/connection';
import { deleteReceiversOf, eachReceiverBlock, userIdsIn } from '../../src/queries/message-receivers';
import type { SettleReport } from '../../src/db/settle';
import { parseScale, Scale } from './scales';

/** The repository root (this file runs from dist/bench/lib/). */
export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const BENCH_DIR = path.join(ROOT, 'bench');

export type BenchDb = 'sqlite' | 'mariadb';

/** Where a scale's dataset lives: a SQLite file under bench/.data/, or a MariaDB database parley_bench_<scale>. */
export interface Target {
  db: BenchDb;
  scale: Scale;
  /** bench/.data/<db>-<scale>/: manifest.json, credentials.json (and the SQLite file). */
  dir: string;
  /** DATA_DIR for the server (SQLite file, uploads). */
  dataDir: string;
  /** DATABASE_URL for the server, null on SQLite. */
  databaseUrl: string | null;
  /** The MariaDB database name (null on SQLite). */
  databaseName: string | null;
}

/**
 * BENCH_DB=sqlite|mariadb (default sqlite), BENCH_SCALE=small|10k|100k|1m,
 * BENCH_MYSQL_URL=mysql://user:pass@host:port[/db] (bench/run.sh sets it from
 * scripts/mariadb.sh; without a database name, parley_bench_<scale> is used).
 */
export function resolveTarget(env: NodeJS.ProcessEnv = process.env): Target {
  const scale = parseScale(env.BENCH_SCALE);
  const rawDb = (env.BENCH_DB ?? 'sqlite').toLowerCase();
  const db: BenchDb = rawDb === 'mysql' || rawDb === 'mariadb' ? 'mariadb' : rawDb === 'sqlite' ? 'sqlite' : invalid(rawDb);
  const dir = path.join(BENCH_DIR, '.data', `${db}-${scale.name}`);
  if (db === 'sqlite') return { db, scale, dir, dataDir: dir, databaseUrl: null, databaseName: null };
  const raw = env.BENCH_MYSQL_URL?.trim();
  if (!raw) throw new Error('BENCH_DB=mariadb needs BENCH_MYSQL_URL (bench/run.sh sets it from scripts/mariadb.sh start)');
  const url = new URL(raw);
  const given = url.pathname.replace(/^\//, '');
  const databaseName = given || `parley_bench_${scale.name}`;
  url.pathname = `/${databaseName}`;
  return { db, scale, dir, dataDir: dir, databaseUrl: url.toString(), databaseName };
}

function invalid(raw: string): never {
  throw new Error(`BENCH_DB must be sqlite or mariadb, got ${raw}`);
}

export interface UserRef {
  id: number;
  email: string;
}

/** What the generator made, and the objects each scenario uses. Written last: its presence means the dataset is complete. */
export interface Manifest {
  version: number;
  scale: string;
  db: BenchDb;
  databaseName: string | null;
  generatedAt: string;
  /** Seconds per phase, and in total. */
  loadSeconds: Record<string, number>;
  /** What settling the loaded database found and did (src/db/settle.ts); null when skipped (BENCH_SETTLE=0), absent in older manifests. */
  settled?: SettleReport | null;
  counts: Record<string, number>;
  /** The migrations the schema had when the data was generated (older manifests: absent). */
  migrations?: string[];
  /** Messages above this id were sent by a benchmark run; the runner deletes them. */
  maxMessageId: number;
  realmId: number;
  targets: {
    reader: UserRef;
    /** A user with ~10% of all messages unread (100k at 1m). */
    lurker: UserRef;
    /** Every lurker (the scale's lurkerUnreadShares), the first being `lurker`; absent in older manifests. */
    lurkers?: UserRef[];
    lurkerUnread: number;
    poster: UserRef;
    eventSender: UserRef;
    eventReceiver: UserRef;
    eventChannel: { id: number; name: string };
    channel100: { id: number; name: string; subscribers: number };
    busyChannel: { id: number; name: string; messages: number };
    busyTopic: { name: string; messages: number };
    rareChannel: { id: number; name: string; messages: number };
    /** A message id in the middle of the reader's history. */
    midAnchor: number;
    searchWord: string;
    searchMatches: number;
    readerStarred: number;
    readerMessages: number;
  };
  /** Scales with idle users (big): how many, their last active message, and the channel everyone is in. */
  idle?: { users: number; lastActiveMessageId: number; announcement: { id: number; name: string } };
}

/** Bumped when the generator's output changes, so old datasets are regenerated. */
export const MANIFEST_VERSION = 2;

export const manifestPath = (t: Target) => path.join(t.dir, 'manifest.json');
export const credentialsPath = (t: Target) => path.join(t.dir, 'credentials.json');

export function readManifest(t: Target): Manifest | null {
  try {
    const m = JSON.parse(fs.readFileSync(manifestPath(t), 'utf8')) as Manifest;
    return m.version === MANIFEST_VERSION ? m : null;
  } catch {
    return null;
  }
}

export interface Credential {
  id: number;
  email: string;
  api_key: string;
}

export function readCredentials(t: Target): Map<number, Credential> {
  const list = JSON.parse(fs.readFileSync(credentialsPath(t), 'utf8')) as Credential[];
  return new Map(list.map((c) => [c.id, c]));
}

/** Deletes what benchmark runs posted (ids above the generated ones), so every run sees the same dataset. */
export async function removePosted(target: Target, m: Manifest): Promise<number> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    let removed = 0;
    for (;;) {
      const ids: number[] = (await db('messages').where('id', '>', m.maxMessageId).orderBy('id').limit(1000).pluck('id')).map(Number);
      if (!ids.length) break;
      await db.transaction(async (trx) => {
        // By primary key, through the messages' receiver lists (ADR 0059): there is no index by message.
        await eachReceiverBlock(trx, ids, (users, msgs) =>
          trx('user_messages').whereRaw(userIdsIn('user_id', users)).whereIn('message_id', msgs).delete(),
        );
        await deleteReceiversOf(trx, ids);
        await trx('reactions').whereIn('message_id', ids).delete();
        await trx('messages').whereIn('id', ids).delete();
      });
      removed += ids.length;
    }
    return removed;
  } finally {
    await db.destroy();
  }
}

/** Active subscribers of a channel. */
export async function channelMembers(target: Target, channelId: number): Promise<number[]> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    const ids = await db('subscriptions as s')
      .join('channels as c', 'c.recipient_id', 's.recipient_id')
      .where({ 'c.id': channelId, 's.active': true })
      .orderBy('s.user_id')
      .pluck('s.user_id');
    return ids.map(Number);
  } finally {
    await db.destroy();
  }
}
