import fs from 'node:fs';
import path from 'node:path';
import { vacuumBatchInTx, vacuumCutoff } from '../src/actions/archive-vacuum';
import { doRestoreArchived } from '../src/actions/archive-restore';
import { retentionHolder, RETENTION_LEASE, RETENTION_LEASE_MS, startRetentionArchiver } from '../src/actions/retention';
import { RetentionStats } from '../src/domain/retention-stats';
import { sweepUnclaimedUploads } from '../src/actions/uploads';
import { inTransaction } from '../src/db/transaction';
import { Metrics } from '../src/metrics';
import { ArchiveType } from '../src/queries/archive';
import { getLease } from '../src/queries/leases';
import { ManualClock, until } from './support/clock';
import { runCli } from './support/cli';
import { eachDatabase } from './support/databases';
import { sendToChannel } from './support/events';
import type { Instance } from './support/instances';
import { holdLeaseElsewhere, retentionRun, startRetentionServer, type RetentionContext } from './support/retention';
import { createChannel, TestServer } from './support/server';
import { uploadFiles } from './support/uploads';

const DAY = 86_400;
const BATCH = 3;
/** Every archive table keyed by message id, beside archived_messages. */
const CHILDREN = ['archived_reactions', 'archived_message_edits', 'archived_submessages', 'archived_attachment_messages'];

eachDatabase('the archive’s grace period (vacuum)', (dialect) => {
  let instance: Instance;
  let t: TestServer;
  let channel: { id: number; recipient_id: number };

  beforeAll(async () => {
    // Uploads are stored in the installation's DATA_DIR.
    ({ instance, t } = await startRetentionServer(dialect, BATCH));
    const { owner, admin, moderator, member, guest } = t.cast;
    channel = await createChannel(t, 'vacuum', [owner, admin, moderator, member, guest]);
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    await t.ctx.db('channels').where({ id: channel.id }).update({ message_retention_days: null });
  });

  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const send = (content: string, topic = 'vacuum') => sendToChannel(t, t.cast.member, 'vacuum', topic, content);
  const run = (ctx: RetentionContext = t.ctx, holder?: string) => retentionRun(ctx, holder);
  const cli = (...args: string[]) => runCli(args, instance.env);
  const lastLine = (text: string) => text.trim().split('\n').at(-1);

  /** Deletes the message as an administrator; returns the archive transaction it left in. */
  async function deleted(id: number): Promise<number> {
    expect((await t.api.delete(`/messages/${id}`, t.cast.admin)).status).toBe(200);
    return transactionOf(id);
  }
  async function transactionOf(id: number): Promise<number> {
    const row = await t.ctx.db('archived_messages').where({ id }).first('archive_transaction_id');
    return Number(row!.archive_transaction_id);
  }
  /** Makes these archive transactions (and their messages' archiving) `days` old. */
  async function aged(transactionIds: number[], days: number): Promise<void> {
    const at = nowSeconds() - days * DAY;
    await t.ctx.db('archive_transactions').whereIn('id', transactionIds).update({ timestamp: at });
    await t.ctx.db('archived_messages').whereIn('archive_transaction_id', transactionIds).update({ archived_at: at });
  }
  /** Rows each archive table holds for these messages. */
  async function archiveRows(ids: number[]): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const table of ['archived_messages', ...CHILDREN]) {
      const column = table === 'archived_messages' ? 'id' : 'message_id';
      out[table] = Number((await t.ctx.db(table).whereIn(column, ids).count({ n: '*' }).first())!.n);
    }
    return out;
  }
  const transactionsLeft = async (ids: number[]) =>
    ((await t.ctx.db('archive_transactions').whereIn('id', ids).orderBy('id').pluck('id')) as unknown[]).map(Number);

  it('deletes what was archived before ARCHIVED_DATA_VACUUM_DAYS from every archive table, and keeps newer archives restorable', async () => {
    const { owner, member } = t.cast;
    // A deletion with reactions, edit history, recipients' rows and an upload link.
    const file = await uploadFiles(t, member, [{ name: 'kept-file.txt', content: 'still here' }]);
    const doomed = await send(`see [the file](${file.body.url})`);
    expect((await t.api.post(`/messages/${doomed}/reactions`, owner, { emoji_name: 'smile' })).status).toBe(200);
    expect((await t.api.patch(`/messages/${doomed}`, member, { content: `see [the file](${file.body.url}), edited` })).status).toBe(200);
    // A deletion with submessages (a poll).
    const poll = await send('/poll Lunch?\nSoup\nSalad');
    // A retention batch.
    await t.ctx.db('channels').where({ id: channel.id }).update({ message_retention_days: 30 });
    const expired = await send('past the channel’s period');
    await t.ctx
      .db('messages')
      .where({ id: expired })
      .update({ date_sent: nowSeconds() - 40 * DAY });
    expect((await run()).archived).toBe(1);
    await t.ctx.db('channels').where({ id: channel.id }).update({ message_retention_days: null });
    // A message archived before archive transactions existed: none names it.
    const legacy = await send('archived before migration 030');
    const legacyTx = await deleted(legacy);
    await t.ctx
      .db('archived_messages')
      .where({ id: legacy })
      .update({ archive_transaction_id: null, archived_at: nowSeconds() - 31 * DAY });
    await t.ctx.db('archive_transactions').where({ id: legacyTx }).del();
    // A batch restored since: its row only.
    const restoredTx = await deleted(await send('deleted, then restored'));
    expect(await doRestoreArchived(t.ctx, { realmId: t.realmId, transactionId: restoredTx })).toMatchObject({ messages: 1 });
    // Within the grace period.
    const kept = await send('deleted 29 days ago');

    const gone = [doomed, poll, expired, legacy];
    const goneTxs = [await deleted(doomed), await deleted(poll), await transactionOf(expired), restoredTx];
    const keptTx = await deleted(kept);
    await aged(goneTxs, 31);
    await aged([keptTx], 29);
    // Everything there, so that its absence below says something.
    expect(await archiveRows(gone)).toEqual({
      archived_messages: 4,
      archived_reactions: 1,
      archived_message_edits: 1,
      archived_submessages: 1,
      archived_attachment_messages: 1,
    });
    expect(await transactionsLeft(goneTxs)).toEqual(goneTxs.slice().sort((a, b) => a - b));

    const result = await run();

    expect(result).toEqual({
      ran: true,
      archived: 0,
      batches: 0,
      vacuumed: 4,
      vacuumedTransactions: 4,
      vacuumBatches: 3, // the retention batch, the three deletions (one batch of three), the message without a transaction
      interrupted: false,
    });
    expect(await archiveRows(gone)).toEqual({
      archived_messages: 0,
      archived_reactions: 0,
      archived_message_edits: 0,
      archived_submessages: 0,
      archived_attachment_messages: 0,
    });
    expect(await transactionsLeft(goneTxs)).toEqual([]);
    // The upload stays for the unclaimed-upload sweep to judge.
    expect(
      await t.ctx
        .db('attachments')
        .where({ path_id: file.body.url.slice('/user_uploads/'.length) })
        .first('id'),
    ).toBeDefined();
    expect((await getLease(t.ctx.db, RETENTION_LEASE))!.holder).toBe('');

    // Within the grace period: kept, and restorable.
    expect((await archiveRows([kept])).archived_messages).toBe(1);
    const restored = await cli('restore-archived', '--transaction', String(keptTx));
    expect([restored.code, restored.stdout]).toEqual([0, 'Restored 1 messages from 1 archive transactions.\n']);
    expect((await t.api.get(`/messages/${kept}`, member)).body.message.content).toBe('<p>deleted 29 days ago</p>');
  });

  it('counts the grace period on ctx.clock, in days of ARCHIVED_DATA_VACUUM_DAYS', async () => {
    const id = await send('archived at a known time');
    const tx = await deleted(id);
    const archivedAt = nowSeconds() - 10;
    await t.ctx.db('archive_transactions').where({ id: tx }).update({ timestamp: archivedAt });
    const config = { ...t.ctx.config, archivedDataVacuumDays: 2 };
    const at = (seconds: number) => ({ ...t.ctx, config, clock: new ManualClock(seconds * 1000) });

    expect((await run(at(archivedAt + 2 * DAY))).vacuumed).toBe(0);
    expect(await archiveRows([id])).toMatchObject({ archived_messages: 1 });
    expect((await run(at(archivedAt + 2 * DAY + 1))).vacuumed).toBeGreaterThanOrEqual(1);
    expect(await archiveRows([id])).toMatchObject({ archived_messages: 0 });
    expect(await transactionsLeft([tx])).toEqual([]);
  });

  it('vacuums in transactions of RETENTION_BATCH_SIZE: a batch leaves each message whole, a partly vacuumed transaction is never restored, the next run finishes', async () => {
    const { admin, owner } = t.cast;
    const bulk: number[] = [];
    for (let i = 0; i < 2 * BATCH + 1; i++) {
      const id = await send(`bulk ${i}`, 'bulk');
      expect((await t.api.post(`/messages/${id}/reactions`, owner, { emoji_name: 'smile' })).status).toBe(200);
      bulk.push(id);
    }
    expect((await t.api.post(`/streams/${channel.id}/delete_topic`, admin, { topic_name: 'bulk' })).body.complete).toBe(true);
    const bulkTx = await transactionOf(bulk[0]!);
    for (const id of bulk) expect(await transactionOf(id)).toBe(bulkTx);
    const singles: number[] = [];
    const singleTxs: number[] = [];
    for (let i = 0; i <= BATCH; i++) {
      const id = await send(`single ${i}`);
      expect((await t.api.post(`/messages/${id}/reactions`, owner, { emoji_name: 'smile' })).status).toBe(200);
      singles.push(id);
      singleTxs.push(await deleted(id));
    }
    await aged([bulkTx], 40);
    await aged(singleTxs, 35);
    const all = [...bulk, ...singles];
    expect(await archiveRows(all)).toMatchObject({ archived_messages: all.length, archived_reactions: all.length });

    // One batch, as a run that stopped (or died) after it leaves things.
    const before = vacuumCutoff(nowSeconds(), t.ctx.config.archivedDataVacuumDays);
    const scope = { realmId: t.realmId, type: ArchiveType.MANUAL };
    expect(await inTransaction(t.ctx.db, (tx) => vacuumBatchInTx(tx, scope, before, BATCH))).toEqual({
      done: false,
      messages: BATCH,
      transactions: 0,
    });
    for (const id of all) {
      const rows = await archiveRows([id]);
      expect([id, rows.archived_reactions]).toEqual([id, rows.archived_messages]);
    }
    expect((await archiveRows(bulk)).archived_messages).toBe(bulk.length - BATCH);
    expect(await transactionsLeft([bulkTx])).toEqual([bulkTx]);
    const refused = await cli('restore-archived', '--transaction', String(bulkTx));
    expect(refused.code).toBe(1);
    expect(lastLine(refused.stderr)).toMatch(
      new RegExp(
        `^Archive transaction ${bulkTx} was archived \\S+Z, more than ARCHIVED_DATA_VACUUM_DAYS \\(30\\) days ago: ` +
          'its messages are deleted for good \\(or being deleted\\) and cannot be restored$',
      ),
    );
    expect(await t.ctx.db('messages').whereIn('id', bulk).pluck('id')).toEqual([]);

    // The rest: three batches (the bulk transaction's next three; its last with two single
    // deletions, emptying all three; the last two single deletions).
    expect(await run()).toEqual({
      ran: true,
      archived: 0,
      batches: 0,
      vacuumed: all.length - BATCH,
      vacuumedTransactions: 1 + singleTxs.length,
      vacuumBatches: 3,
      interrupted: false,
    });
    expect(await archiveRows(all)).toEqual({
      archived_messages: 0,
      archived_reactions: 0,
      archived_message_edits: 0,
      archived_submessages: 0,
      archived_attachment_messages: 0,
    });
    expect(await transactionsLeft([bulkTx, ...singleTxs])).toEqual([]);
    const vacuumed = await cli('restore-archived', '--transaction', String(bulkTx));
    expect([vacuumed.code, lastLine(vacuumed.stderr)]).toEqual([
      1,
      `No archive transaction ${bulkTx} in that organization: never made, or deleted for good with its messages ARCHIVED_DATA_VACUUM_DAYS (30) days after archiving`,
    ]);
  });

  it('restore-retention says, in one line, what it cannot restore because it is past the grace period', async () => {
    await t.ctx.db('channels').where({ id: channel.id }).update({ message_retention_days: 30 });
    const id = await send('a retention batch');
    await t.ctx
      .db('messages')
      .where({ id })
      .update({ date_sent: nowSeconds() - 40 * DAY });
    expect((await run()).archived).toBe(1);
    await t.ctx.db('channels').where({ id: channel.id }).update({ message_retention_days: null });
    await aged([await transactionOf(id)], 31);

    // Still in the archive, but past the grace period: not restored.
    const notice = await cli('restore-retention', '--channel', 'vacuum');
    expect(notice.code).toBe(0);
    expect(notice.stdout).toMatch(
      /^Restored 0 messages from 0 archive transactions; 1 messages of 1 archive transactions archived before \S+Z are past ARCHIVED_DATA_VACUUM_DAYS \(30\) days and cannot be restored \(the archiver deletes them for good\)\.\n$/,
    );
    expect(await archiveRows([id])).toMatchObject({ archived_messages: 1 });
    expect(await t.ctx.db('messages').where({ id }).first('id')).toBeUndefined();

    // The CLI's run (archive-expired) vacuums as the servers' do.
    const vacuumed = await cli('archive-expired');
    expect([vacuumed.code, vacuumed.stdout]).toEqual([
      0,
      'Archived 0 messages in 0 transactions; deleted 1 archived messages and 1 archive transactions past ARCHIVED_DATA_VACUUM_DAYS (30) in 1 transactions.\n',
    ]);
    expect(await archiveRows([id])).toMatchObject({ archived_messages: 0 });
    const after = await cli('restore-retention', '--channel', 'vacuum');
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(
      /^Restored 0 messages from 0 archive transactions; archived messages are deleted for good ARCHIVED_DATA_VACUUM_DAYS \(30\) days after archiving: nothing archived before \S+Z can be restored\.\n$/,
    );
  });

  it('leaves an upload linked only by a vacuumed message to the unclaimed-upload sweep, which removes it after its own grace', async () => {
    const file = await uploadFiles(t, t.cast.member, [{ name: 'orphan.txt', content: 'soon gone' }]);
    const pathId = file.body.url.slice('/user_uploads/'.length);
    const onDisk = path.join(instance.dataDir, 'uploads', pathId);
    const tx = await deleted(await send(`[orphan](${file.body.url})`));
    await t.ctx
      .db('attachments')
      .where({ path_id: pathId })
      .update({ create_time: nowSeconds() - (t.ctx.config.unclaimedUploadsGraceDays + 1) * DAY });
    const sweep = async () => {
      for (let i = 0; i < 100; i++) if ((await sweepUnclaimedUploads(t.ctx)).removed === 0) return;
    };

    // Archived within the grace period: the archived link claims the file.
    await sweep();
    expect(await t.ctx.db('attachments').where({ path_id: pathId }).first('id')).toBeDefined();
    expect(fs.existsSync(onDisk)).toBe(true);

    await aged([tx], 31);
    expect((await run()).vacuumed).toBe(1);
    await sweep();
    expect(await t.ctx.db('attachments').where({ path_id: pathId }).first('id')).toBeUndefined();
    expect(fs.existsSync(onDisk)).toBe(false);
  });

  it('vacuums under the retention lease: a held lease makes another process skip until it lapses, and two runs never both vacuum', async () => {
    const ids = [await send('leased 1'), await send('leased 2')];
    await aged([await deleted(ids[0]!), await deleted(ids[1]!)], 31);
    const { clock, other } = await holdLeaseElsewhere(t);
    expect(await run(other)).toMatchObject({ ran: false, vacuumed: 0 });
    expect((await archiveRows(ids)).archived_messages).toBe(2);
    clock.advance(RETENTION_LEASE_MS + 1);
    expect(await run(other)).toMatchObject({ ran: true, vacuumed: 2 });
    expect((await archiveRows(ids)).archived_messages).toBe(0);

    // Two processes starting together: one vacuums; the other finds the lease taken, or (on a
    // loaded machine, its lease transaction scheduled after the first run released it) runs
    // after it and finds nothing left. Never do both vacuum.
    const more = [await send('race 1'), await send('race 2')];
    await aged([await deleted(more[0]!), await deleted(more[1]!)], 31);
    const [a, b] = await Promise.all([run(t.ctx, retentionHolder('node-a')), run(t.ctx, retentionHolder('node-b'))]);
    expect([a.ran, b.ran]).toContain(true);
    expect([a.vacuumed, b.vacuumed].sort()).toEqual([0, 2]);
    expect((await archiveRows(more)).archived_messages).toBe(0);
  });

  it('vacuums in the timer’s runs, counted in parley_retention_vacuumed_messages_total', async () => {
    const ids = [await send('timed 1'), await send('timed 2')];
    await aged([await deleted(ids[0]!), await deleted(ids[1]!)], 31);
    const clock = new ManualClock();
    const ctx = { ...t.ctx, clock, retention: new RetentionStats() };
    const metric = async () => {
      const text = await new Metrics(ctx).registry.metrics();
      return /^parley_retention_vacuumed_messages_total (\d+)$/m.exec(text)?.[1];
    };
    expect(await metric()).toBe('0');
    let runs = 0;
    const stop = startRetentionArchiver(
      ctx,
      (err) => {
        throw err;
      },
      () => runs++,
    );
    clock.advance(t.ctx.config.retentionIntervalMs);
    await until(() => runs > 0, 'the run ends');
    await stop();
    expect((await archiveRows(ids)).archived_messages).toBe(0);
    expect(ctx.retention.vacuumed).toBe(2);
    expect(await metric()).toBe('2');
  });
});
