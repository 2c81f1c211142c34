/**
 * One-shot measurements of operations on a whole large topic: wall time and
 * SQL statements of each, run in-process on a real database.
 *
 *   node dist/bench/bulk-ops.js                      fresh SQLite file, 10,000-message topic
 *   BULK_DB_URL=mysql://u:p@host:port node dist/bench/bulk-ops.js       fresh MariaDB database (dropped after)
 *   BULK_DATASET=1 BENCH_SCALE=1m BENCH_DB=mariadb BENCH_MYSQL_URL=… node dist/bench/bulk-ops.js
 *                                                    inside a generated dataset (bench/generate.ts)
 *   BULK_MESSAGES=10000  BULK_SUBSCRIBERS=15  BULK_ONLY=move_topic_change_all
 *
 * Each operation gets its own freshly built topic (BULK_MESSAGES messages, a
 * user_messages row per subscriber of its channel), built the way the
 * dataset generator stores messages, then runs the action as a request
 * would. To add an operation, add an entry to OPERATIONS.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { doUpdateMessage } from '../src/actions/edit-message';
import { createChannelInTx } from '../src/actions/channels';
import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx } from '../src/actions/users';
import { loadCaller } from '../src/access/viewer';
import { addReceivers } from '../src/queries/message-receivers';
import { getRealmById } from '../src/queries/realms';
import { loadConfig } from '../src/config';
import { AppContext, createContext } from '../src/context';
import { createDb } from '../src/db/connection';
import { migrateLatest } from '../src/db/migrate';
import { inTransaction } from '../src/db/transaction';
import { Role } from '../src/domain/roles';
import type { UserRow } from '../src/queries/rows';
import { getUserById } from '../src/queries/users';
import { resolveTarget } from './lib/dataset';
import { createScratchDatabase } from './lib/scratch-database';
import { runMain } from './lib/run-main';

interface Fixture {
  ctx: AppContext;
  realmId: number;
  /** An administrator (moves are not bound by time limits or channel groups for them). */
  actor: UserRow;
  /** A channel to build topics in, and one to move them to; their active subscribers. */
  source: { id: number; recipient_id: number; subscribers: number[] };
  destination: { id: number; recipient_id: number };
}

interface Measured {
  operation: string;
  messages: number;
  ms: number;
  statements: number;
  note: string;
}

/** An operation measured on a topic of `ids` (oldest first) named `topic` in the source channel. */
type Operation = (f: Fixture, topic: string, ids: number[]) => Promise<string>;

const OPERATIONS: Record<string, Operation> = {
  move_topic_change_all: async (f, _topic, ids) => {
    const viewer = await loadCaller(f.ctx.db, f.actor, (await getRealmById(f.ctx.db, f.actor.realm_id))!);
    await doUpdateMessage(f.ctx, viewer, {
      message_id: ids[ids.length - 1]!,
      stream_id: f.destination.id,
      topic: 'moved by bulk-ops',
      propagate_mode: 'change_all',
      send_notification_to_old_thread: true,
      send_notification_to_new_thread: true,
    });
    const moved = await f.ctx
      .db('messages')
      .where({ recipient_id: f.destination.recipient_id, topic_key: 'moved by bulk-ops' })
      .count({ n: '*' })
      .first();
    return `to another channel and topic; ${Number(moved?.n)} messages there after`;
  },
};

async function main(): Promise<void> {
  const n = Number(process.env.BULK_MESSAGES ?? 10_000);
  const only = process.env.BULK_ONLY?.split(',').map((s) => s.trim());
  const { fixture, label, cleanup } = await openFixture();
  const results: Measured[] = [];
  try {
    for (const [name, op] of Object.entries(OPERATIONS)) {
      if (only && !only.includes(name)) continue;
      const topic = `bulk ${name} ${Date.now()}`;
      const ids = await buildTopic(fixture, topic, n);
      let statements = 0;
      const count = () => statements++;
      fixture.ctx.db.on('query', count);
      const started = process.hrtime.bigint();
      let note: string;
      try {
        note = await op(fixture, topic, ids);
      } finally {
        fixture.ctx.db.removeListener('query', count);
      }
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      results.push({ operation: name, messages: ids.length, ms, statements, note });
    }
  } finally {
    await cleanup();
  }
  console.log(`bulk-ops on ${label}`);
  console.log('| operation | messages | wall time | statements | note |\n|---|---|---|---|---|');
  for (const r of results) console.log(`| ${r.operation} | ${r.messages} | ${r.ms.toFixed(0)} ms | ${r.statements} | ${r.note} |`);
}

/** A topic of `n` messages in the source channel, stored as sendMessageInTx would (rows for every subscriber, the sender's read). */
async function buildTopic(f: Fixture, topic: string, n: number): Promise<number[]> {
  const db = f.ctx.db;
  const now = Math.floor(Date.now() / 1000);
  const sender = f.source.subscribers[0] ?? f.actor.id;
  const first = Number((await db('messages').max('id as max').first())?.max ?? 0) + 1;
  const ids = Array.from({ length: n }, (_, i) => first + i);
  // 400 rows a statement: knex writes SQLite batches as one compound SELECT of at most 500 terms.
  for (let i = 0; i < n; i += 400) {
    const slice = ids.slice(i, i + 400);
    await db.transaction(async (trx) => {
      await trx('messages').insert(
        slice.map((id) => ({
          id,
          realm_id: f.realmId,
          sender_id: sender,
          recipient_id: f.source.recipient_id,
          type: 1,
          topic,
          topic_key: topic.toLowerCase(),
          content: `bulk message ${id}`,
          rendered_content: `<p>bulk message ${id}</p>`,
          rendered_content_version: 1,
          date_sent: now - (n - (id - first)),
          sending_client: 'bench',
        })),
      );
      const rows = slice.flatMap((message_id) =>
        f.source.subscribers.map((user_id) => ({ user_id, message_id, flags: user_id === sender ? 1 : 0 })),
      );
      for (let j = 0; j < rows.length; j += 400) await trx('user_messages').insert(rows.slice(j, j + 400));
      await addReceivers(trx, slice, f.source.subscribers);
    });
  }
  await db('channels').where({ id: f.source.id }).whereNull('first_message_id').update({ first_message_id: first });
  return ids;
}

/** A fresh database with a realm, users and two channels; or, with BULK_DATASET=1, a generated dataset. */
async function openFixture(): Promise<{ fixture: Fixture; label: string; cleanup: () => Promise<void> }> {
  const config = { ...loadConfig({ RATE_LIMITS: 'off' }), dataDir: os.tmpdir() };
  if (process.env.BULK_DATASET === '1') {
    const target = resolveTarget();
    const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
    const ctx = createContext(db, config);
    const admin = await db('users').where({ role: Role.OWNER, is_bot: false, is_active: true }).orderBy('id').first('id');
    const actor = (await getUserById(db, Number(admin!.id)))!;
    const channels = (await db('channels')
      .where({ realm_id: actor.realm_id, invite_only: false })
      .orderBy('id')
      .limit(2)
      .select('id', 'recipient_id')) as Array<{ id: number; recipient_id: number }>;
    const subscribers = (
      await db('subscriptions').where({ recipient_id: channels[0].recipient_id, active: true }).limit(15).pluck('user_id')
    ).map(Number);
    return {
      fixture: { ctx, realmId: actor.realm_id, actor, source: { ...channels[0], subscribers }, destination: channels[1] },
      label: `${target.db} dataset ${target.scale.name}`,
      cleanup: async () => {
        ctx.queues.close();
        await db.destroy();
      },
    };
  }
  const { db, label, drop } = await freshDb();
  await migrateLatest(db);
  const ctx = createContext(db, config);
  const realmId = await doCreateRealm(db, { stringId: '', name: 'Bulk operations' });
  const subscriberCount = Number(process.env.BULK_SUBSCRIBERS ?? 15);
  const users: UserRow[] = [];
  await inTransaction(db, async (tx) => {
    for (let i = 0; i < subscriberCount; i++) {
      users.push(
        await createUserInTx(tx, null, {
          realmId,
          email: `bulk${i}@example.com`,
          fullName: `Bulk ${i}`,
          role: i === 0 ? Role.ADMINISTRATOR : Role.MEMBER,
        }),
      );
    }
  });
  const actor = users[0]!;
  const channelIds = await inTransaction(db, async (tx) => [
    await createChannelInTx(tx, actor, { name: 'bulk source', subscriberIds: users.map((u) => u.id) }),
    await createChannelInTx(tx, actor, {
      name: 'bulk destination',
      subscriberIds: users.slice(0, Math.ceil(users.length / 2)).map((u) => u.id),
    }),
  ]);
  const rows: Array<{ id: number; recipient_id: number }> = await db('channels')
    .whereIn('id', channelIds)
    .orderBy('id')
    .select('id', 'recipient_id');
  return {
    fixture: {
      ctx,
      realmId,
      actor: (await getUserById(db, actor.id))!,
      source: { ...rows[0]!, subscribers: users.map((u) => u.id) },
      destination: rows[1]!,
    },
    label: `a fresh ${label} database (${subscriberCount} subscribers, half of them in the destination)`,
    cleanup: async () => {
      ctx.queues.close();
      await drop();
    },
  };
}

async function freshDb(): Promise<{ db: Knex; label: string; drop: () => Promise<void> }> {
  const url = process.env.BULK_DB_URL?.trim();
  if (!url) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bulk-'));
    const db = createDb({ databaseUrl: null, dataDir: dir });
    return { db, label: 'SQLite', drop: async () => (await db.destroy(), fs.rmSync(dir, { recursive: true, force: true })) };
  }
  const scratch = await createScratchDatabase(url, 'parley_bulk');
  const db = createDb({ databaseUrl: scratch.url, dataDir: '' });
  return {
    db,
    label: 'MariaDB',
    drop: async () => {
      await db.destroy();
      await scratch.drop();
    },
  };
}

runMain(main);
