/**
 * POST /mark_all_as_read for a user with many unread messages: the
 * dataset's lurker (about 100,000 unread at 1m), in the generated dataset
 * (bench/generate.ts), in-process as a request would run it. The action
 * answers complete:false after MARK_READ_TIME_BUDGET_MS and the client asks
 * again (Zulip's contract), so this calls it until it is complete, as an
 * app does, and reports each call's time, the total, and the statements.
 * The lurker's unread rows and horizon are put back afterwards, so the
 * dataset is as it was.
 *
 *   npx tsc -p bench/tsconfig.json
 *   BENCH_SCALE=1m BENCH_DB=mariadb BENCH_MYSQL_URL=… node dist/bench/mark-all-read.js
 */
import os from 'node:os';
import { doMarkAllAsRead } from '../src/actions/mark-read';
import { loadCaller } from '../src/access/viewer';
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createDb } from '../src/db/connection';
import { getRealmById } from '../src/queries/realms';
import { getUserById } from '../src/queries/users';
import { READ, UNREAD_TABLE } from '../src/queries/unread';
import { readManifest, resolveTarget } from './lib/dataset';
import { runMain } from './lib/run-main';

async function main(): Promise<void> {
  const target = resolveTarget();
  const manifest = readManifest(target);
  if (!manifest)
    throw new Error(`no ${target.scale.name} dataset on ${target.db}: run make bench with the same BENCH_SCALE and BENCH_DB first`);
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  const config = { ...loadConfig({ RATE_LIMITS: 'off' }), dataDir: os.tmpdir() };
  const ctx = createContext(db, config);
  const userId = manifest.targets.lurker.id;
  // Unread is the read bit of user_messages.flags; the side table lists candidates (ADR 0024).
  const unread = (await db('user_messages').where({ user_id: userId }).whereRaw('(flags & ?) = 0', [READ]).pluck('message_id')).map(Number);
  const sideRows = (await db(UNREAD_TABLE).where({ user_id: userId }).pluck('message_id')).map(Number);
  const horizon = await db('unread_horizons').where({ user_id: userId }).first('message_id');
  const calls: number[] = [];
  let statements = 0;
  const count = () => statements++;
  try {
    const user = (await getUserById(db, userId))!;
    const viewer = await loadCaller(db, user, (await getRealmById(db, user.realm_id))!);
    db.on('query', count);
    const started = process.hrtime.bigint();
    for (;;) {
      const t0 = process.hrtime.bigint();
      const { complete } = await doMarkAllAsRead(ctx, viewer);
      calls.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (complete) break;
      if (calls.length > 10_000) throw new Error('still not complete after 10,000 calls');
    }
    const totalMs = Number(process.hrtime.bigint() - started) / 1e6;
    db.removeListener('query', count);
    const left = Number((await db(UNREAD_TABLE).where({ user_id: userId }).count({ n: '*' }).first())?.n ?? 0);
    const sorted = [...calls].sort((a, b) => a - b);
    console.log(`mark_all_as_read on ${target.db} dataset ${target.scale.name}, the lurker (user ${userId})`);
    console.log('| unread before | after | calls | total | slowest call | median call | statements | rows a second |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
    console.log(
      `| ${unread.length.toLocaleString('en')} | ${left} | ${calls.length} | ${totalMs.toFixed(0)} ms | ${sorted.at(-1)!.toFixed(0)} ms | ` +
        `${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms | ${statements} | ${Math.round(unread.length / (totalMs / 1000)).toLocaleString('en')} |`,
    );
    console.log(`(MARK_READ_TIME_BUDGET_MS ${config.markReadTimeBudgetMs})`);
  } finally {
    db.removeListener('query', count);
    // Put the dataset back as it was, in one transaction: interrupted, it leaves the marks as they were.
    await db.transaction(async (trx) => {
      for (let i = 0; i < unread.length; i += 2000) {
        await trx('user_messages')
          .where({ user_id: userId })
          .whereIn('message_id', unread.slice(i, i + 2000))
          .update({ flags: trx.raw('flags & ~?', [READ]) });
      }
      await trx(UNREAD_TABLE).where({ user_id: userId }).del();
      for (let i = 0; i < sideRows.length; i += 2000) {
        await trx(UNREAD_TABLE).insert(sideRows.slice(i, i + 2000).map((message_id) => ({ user_id: userId, message_id })));
      }
      if (horizon) await trx('unread_horizons').where({ user_id: userId }).update({ message_id: horizon.message_id });
      else await trx('unread_horizons').where({ user_id: userId }).del();
    });
    ctx.queues.close();
    await db.destroy();
  }
}

runMain(main);
