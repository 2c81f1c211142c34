/**
 * One-shot measurement of POST /streams/{id}/delete_topic on a large topic:
 * on the benchmark dataset (BENCH_SCALE, BENCH_DB, BENCH_MYSQL_URL as for
 * `make bench`; the dataset must exist), adds a topic of BENCH_TOPIC_MESSAGES
 * (default 10,000) messages to the 100-subscriber channel — a user_messages
 * row per subscriber, as sending stores them — then has an administrator
 * delete it over HTTP, repeating the request while it answers complete:false,
 * as a client does. Prints wall time, requests, batches (delete_message
 * events), SQL statements (all, and per batch) and rows archived; then checks
 * nothing of the topic is left and removes the archive rows it made, so the
 * dataset stays as generated.
 *
 *   npx tsc -p bench/tsconfig.json && BENCH_SCALE=1m node dist/bench/delete-topic.js
 */
import http from 'node:http';
import pino from 'pino';
import { listen, startContext } from '../src/server';
import { insertRows } from '../src/queries/ids';
import { addReceivers, deleteReceiversOf, eachReceiverBlock, userIdsIn } from '../src/queries/message-receivers';
import { readCredentials, readManifest, resolveTarget } from './lib/dataset';
import { inProcessConfig } from './lib/in-process';
import { basic, request } from './lib/http';
import { fmtDuration, fmtInt } from './lib/progress';
import { runMain } from './lib/run-main';

const TOPIC_MESSAGES = Number(process.env.BENCH_TOPIC_MESSAGES ?? 10_000);

async function main(): Promise<void> {
  const target = resolveTarget();
  const manifest = readManifest(target);
  if (!manifest) throw new Error(`no dataset for ${target.scale.name} on ${target.db}: run node dist/bench/generate.js first`);
  const creds = readCredentials(target);
  const config = inProcessConfig(target);
  const ctx = await startContext(config);
  const db = ctx.db;
  const server = await listen(ctx, pino({ level: 'silent' }));
  const port = (server.address() as { port: number }).port;
  const agent = new http.Agent({ keepAlive: true });
  const channel = manifest.targets.channel100;
  const topic = `bench delete_topic ${Date.now().toString(36)}`;
  let ids: number[] = [];
  try {
    const { recipient_id: recipientId } = (await db('channels').where({ id: channel.id }).first('recipient_id'))!;
    const subscribers = ((await db('subscriptions').where({ recipient_id: recipientId, active: true }).pluck('user_id')) as unknown[]).map(
      Number,
    );
    const admin = await db('users')
      .where({ realm_id: manifest.realmId, is_active: true, is_bot: false })
      .where('role', '<=', 200)
      .orderBy('id')
      .first('id');
    const adminCred = creds.get(Number(admin!.id));
    if (!adminCred) throw new Error('no administrator among the dataset credentials');

    // The topic, stored as sending stores it (explicit ids above the dataset's, in 1,000-message transactions).
    const t0 = Date.now();
    const top = async (table: string) => Number((await db(table).max('id as id').first())?.id ?? 0);
    const first = Math.max(await top('messages'), await top('archived_messages')) + 1;
    ids = Array.from({ length: TOPIC_MESSAGES }, (_, i) => first + i);
    const now = Math.floor(Date.now() / 1000) - TOPIC_MESSAGES;
    for (let i = 0; i < ids.length; i += 1000) {
      const slice = ids.slice(i, i + 1000);
      await db.transaction(async (trx) => {
        await insertRows(
          trx,
          'messages',
          slice.map((id, k) => ({
            id,
            realm_id: manifest.realmId,
            sender_id: subscribers[(i + k) % subscribers.length],
            recipient_id: recipientId!,
            type: 1,
            topic,
            topic_key: topic.toLowerCase(),
            content: `message ${id} of a topic about to be deleted`,
            rendered_content: `<p>message ${id} of a topic about to be deleted</p>`,
            rendered_content_version: 1,
            date_sent: now + i + k,
            sending_client: 'bench',
          })),
        );
        const rows: Array<{ user_id: number; message_id: number; flags: number }> = [];
        slice.forEach((id, k) => {
          const sender = subscribers[(i + k) % subscribers.length];
          for (const u of subscribers) rows.push({ user_id: u, message_id: id, flags: u === sender ? 1 : 0 });
        });
        await insertRows(trx, 'user_messages', rows);
        await addReceivers(trx, slice, subscribers);
      });
    }
    const userMessages = TOPIC_MESSAGES * subscribers.length;
    process.stdout.write(
      `${target.db} ${target.scale.name}: topic of ${fmtInt(TOPIC_MESSAGES)} messages in #${channel.name} ` +
        `(${subscribers.length} subscribers, ${fmtInt(userMessages)} user_messages) built in ${fmtDuration((Date.now() - t0) / 1000)}\n`,
    );

    let statements = 0;
    let batches = 0;
    // Time per kind of statement (its verb and table), to see where a batch's time goes.
    const started0 = new Map<string, bigint>();
    const byKind = new Map<string, { n: number; ms: number }>();
    db.on('query', (q: { __knexQueryUid: string }) => {
      statements++;
      started0.set(q.__knexQueryUid, process.hrtime.bigint());
    });
    db.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string }) => {
      const t = started0.get(q.__knexQueryUid);
      if (t === undefined) return;
      started0.delete(q.__knexQueryUid);
      const m = /^\s*(insert into|delete from|select .*? from|update|begin|commit|\w+)\s*[`"]?(\w+)?/i.exec(q.sql.replace(/\s+/g, ' '));
      const kind = m ? `${m[1]!.split(' ')[0]!.toUpperCase()} ${m[2] ?? ''}`.trim() : q.sql.slice(0, 20);
      const k = byKind.get(kind) ?? { n: 0, ms: 0 };
      k.n++;
      k.ms += Number(process.hrtime.bigint() - t) / 1e6;
      byKind.set(kind, k);
    });
    const off = ctx.bus.subscribe((d) => {
      if (d.event.type === 'delete_message') batches++;
    });
    const started = process.hrtime.bigint();
    let requests = 0;
    const times: number[] = [];
    for (;;) {
      const r = await request(agent, port, 'POST', `/api/v1/streams/${channel.id}/delete_topic`, basic(adminCred), { topic_name: topic });
      requests++;
      times.push(r.ms);
      if (r.status !== 200) throw new Error(`delete_topic answered ${r.status}: ${JSON.stringify(r.body)}`);
      if (r.body.complete === true) break;
    }
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    off();
    db.removeAllListeners('query');
    db.removeAllListeners('query-response');

    const left = Number(
      (
        await db('messages')
          .whereIn('id', [ids[0], ids[ids.length - 1]])
          .count('id as n')
          .first()
      )?.n ?? 0,
    );
    const leftInTopic = Number(
      (await db('messages').where({ recipient_id: recipientId, topic_key: topic.toLowerCase() }).count('id as n').first())?.n ?? 0,
    );
    const archived = Number((await db('archived_messages').where('id', '>=', first).count('id as n').first())?.n ?? 0);
    if (left || leftInTopic || archived !== TOPIC_MESSAGES)
      throw new Error(`left ${leftInTopic} messages in the topic, archived ${archived}`);
    const perBatch = batches ? statements / batches : 0;
    process.stdout.write(
      `delete_topic: ${fmtInt(TOPIC_MESSAGES)} messages in ${(wallMs / 1000).toFixed(2)} s wall ` +
        `(${fmtInt(TOPIC_MESSAGES / (wallMs / 1000))} messages/s), ${requests} request(s) [${times.map((m) => (m / 1000).toFixed(2) + ' s').join(', ')}], ` +
        `${batches} batches of ≤ ${config.deleteTopicBatchSize}, ${fmtInt(statements)} SQL statements (${perBatch.toFixed(1)} per batch, ` +
        `authentication included), ${fmtInt(archived)} messages and ${fmtInt(userMessages)} user_messages archived\n`,
    );
    const kinds = [...byKind].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8);
    process.stdout.write(`time by statement: ${kinds.map(([k, v]) => `${k} ×${v.n} ${(v.ms / 1000).toFixed(2)} s`).join('; ')}\n`);
  } finally {
    agent.destroy();
    server.close();
    ctx.queues.close();
    // Leave the dataset as generated: the archive rows this run made go, and anything of the topic left by a failure.
    if (ids.length) {
      for (let i = 0; i < ids.length; i += 1000) {
        const slice = ids.slice(i, i + 1000);
        await db('archived_messages').whereIn('id', slice).del();
        await eachReceiverBlock(db, slice, (users, msgs) =>
          db('user_messages').whereRaw(userIdsIn('user_id', users)).whereIn('message_id', msgs).del(),
        );
        await deleteReceiversOf(db, slice);
        await db('messages').whereIn('id', slice).del();
      }
    }
    await db.destroy();
  }
}

runMain(main);
