/**
 * 10,000 scheduled messages due in the same minute (BENCH_SCHEDULED, default
 * 10,000; spread over the 60 seconds of the next whole minute), delivered by
 * the scheduler (src/actions/scheduled-delivery.ts) of one in-process Parley
 * on a scratch organization (10 users, 3 channels; half the messages to the
 * channels, half direct). Prints, per message, how long after its due time
 * it was delivered (committed): percentiles, the worst, and how long the
 * whole minute's load took to drain. SQLite in a scratch directory, or a
 * scratch database on BENCH_MYSQL_URL's server.
 *
 *   npx tsc -p bench/tsconfig.json && node dist/bench/scheduled-delivery.js
 *   BENCH_MYSQL_URL=mysql://parley:parley@127.0.0.1:3307 node dist/bench/scheduled-delivery.js
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startScheduledDelivery } from '../src/actions/scheduled-delivery';
import { loadConfig } from '../src/config';
import { startContext } from '../src/server';
import { DeliveryType, insertScheduledMessage } from '../src/queries/scheduled-messages';
import { createScratchDatabase } from './lib/scratch-database';
import { loadScratchOrganization } from './lib/scratch-organization';
import { runMain } from './lib/run-main';

const COUNT = Number(process.env.BENCH_SCHEDULED ?? 10_000);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-sched-'));
  const mysql = process.env.BENCH_MYSQL_URL ? await createScratchDatabase(process.env.BENCH_MYSQL_URL, 'parley_bench_sched') : null;
  const org = await loadScratchOrganization(dataDir, mysql?.url ?? null, {
    name: 'Scheduled',
    users: 10,
    prefix: 'sched',
    fullName: 'Sched',
    channels: ['one', 'two', 'three'],
  });
  const config = { ...loadConfig({}), dataDir, databaseUrl: mysql?.url ?? null, nodeId: 'bench' };
  const ctx = await startContext(config);
  try {
    const realmId = Number((await ctx.db('users').where({ id: org.users[0]!.id }).first('realm_id'))!.realm_id);
    // The next whole minute, at least 20 s away so that scheduling ends first.
    let minute = Math.ceil(Date.now() / 60_000) * 60;
    if (minute * 1000 - Date.now() < 20_000) minute += 60;
    const t0 = Date.now();
    for (let i = 0; i < COUNT; i += 1000) {
      await ctx.db.transaction(async (trx) => {
        for (let j = i; j < Math.min(COUNT, i + 1000); j++) {
          const sender = org.users[j % org.users.length]!;
          const direct = j % 2 === 1;
          await insertScheduledMessage(trx, {
            realm_id: realmId,
            sender_id: sender.id,
            delivery_type: DeliveryType.SEND_LATER,
            channel_id: direct ? null : org.channelIds[j % org.channelIds.length]!,
            to_user_ids: direct ? [org.users[(j + 1) % org.users.length]!.id] : [],
            topic: direct ? '' : `bench ${j % 7}`,
            content: `scheduled ${j}`,
            rendered_content: `<p>scheduled ${j}</p>`,
            sending_client: 'bench',
            read_by_sender: false,
            scheduled_timestamp: minute + (j % 60),
            reminder_target_message_id: null,
            reminder_note: null,
          });
        }
      });
    }
    console.log(
      `scheduled ${COUNT} messages due between ${new Date(minute * 1000).toISOString()} and +59 s in ${Date.now() - t0} ms (${mysql ? 'MariaDB' : 'SQLite'})`,
    );
    const lateness: number[] = [];
    let failed = 0;
    let last = 0;
    const done = new Promise<void>((resolve) => {
      const stop = startScheduledDelivery(ctx, {
        leaseMs: 15_000,
        pollMs: 1_000,
        onError: (err) => console.error(err),
        onFailed: () => {
          failed++;
          if (lateness.length + failed === COUNT) void stop().then(resolve);
        },
        onDelivered: (row, _id, at) => {
          lateness.push(at - row.scheduled_timestamp * 1000);
          last = at;
          if (lateness.length + failed === COUNT) void stop().then(resolve);
        },
      });
    });
    await done;
    const sorted = [...lateness].sort((a, b) => a - b);
    console.log(`delivered ${lateness.length}, failed ${failed}`);
    console.log(
      `delivered within (ms after the due time): p50 ${pct(sorted, 50)}, p90 ${pct(sorted, 90)}, p99 ${pct(sorted, 99)}, max ${sorted[sorted.length - 1]}, min ${sorted[0]}`,
    );
    console.log(
      `the minute's load drained ${last - (minute + 59) * 1000} ms after its last due second; ${(COUNT / ((last - minute * 1000) / 1000)).toFixed(0)} messages/s over the minute`,
    );
  } finally {
    await ctx.db.destroy();
    await mysql?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
