import {
  firstRetentionRunMs,
  retentionHolder,
  RETENTION_LEASE,
  RETENTION_LEASE_MS,
  runRetention,
  startRetentionArchiver,
} from '../src/actions/retention';
import { getArchivedMessages } from '../src/queries/archive';
import { getLease } from '../src/queries/leases';
import { ManualClock, until } from './support/clock';
import { runCli } from './support/cli';
import { eachDatabase } from './support/databases';
import { pending, register, sendDirect, sendToChannel } from './support/events';
import type { Instance } from './support/instances';
import { holdLeaseElsewhere, retentionRun, startRetentionServer, type RetentionContext } from './support/retention';
import { createChannel, TestServer } from './support/server';

const DAY = 86_400;
const BATCH = 3;
/** What a run vacuums when nothing archived is past ARCHIVED_DATA_VACUUM_DAYS (test/archive-vacuum.test.ts). */
const NO_VACUUM = { vacuumed: 0, vacuumedTransactions: 0, vacuumBatches: 0 };

eachDatabase('message retention', (dialect) => {
  let instance: Instance;
  let t: TestServer;
  let short: { id: number; recipient_id: number };
  let inherits: { id: number; recipient_id: number };
  let forever: { id: number; recipient_id: number };

  beforeAll(async () => {
    ({ instance, t } = await startRetentionServer(dialect, BATCH));
    const { owner, admin, moderator, member, guest, bot } = t.cast;
    const everyone = [owner, admin, moderator, member, guest, bot];
    short = await createChannel(t, 'short', everyone);
    inherits = await createChannel(t, 'inherits', everyone);
    forever = await createChannel(t, 'forever', everyone);
  });
  afterAll(() => t.close());

  /** Retention settings as stored: organization NULL/-1 forever; channel NULL inherits, -1 forever. */
  async function policies(realm: number | null, channels: { short?: number | null; inherits?: number | null; forever?: number | null }) {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ message_retention_days: realm });
    await t.ctx
      .db('channels')
      .where({ id: short.id })
      .update({ message_retention_days: channels.short ?? null });
    await t.ctx
      .db('channels')
      .where({ id: inherits.id })
      .update({ message_retention_days: channels.inherits ?? null });
    await t.ctx
      .db('channels')
      .where({ id: forever.id })
      .update({ message_retention_days: channels.forever ?? -1 });
  }

  /** Sends, then makes the message `days` old (the archiver reads date_sent against its clock). */
  async function aged(days: number, send: () => Promise<number>): Promise<number> {
    const id = await send();
    await t.ctx
      .db('messages')
      .where({ id })
      .update({ date_sent: Math.floor(Date.now() / 1000) - days * DAY });
    return id;
  }
  const inChannel = (name: string, content: string, topic = 'old things') => sendToChannel(t, t.cast.member, name, topic, content);
  const live = async (ids: number[]) =>
    ((await t.ctx.db('messages').whereIn('id', ids).orderBy('id').pluck('id')) as unknown[]).map(Number);
  const run = (ctx: RetentionContext = t.ctx, holder?: string) => retentionRun(ctx, holder);

  /** No policy, and what earlier tests left made new: each test counts only its own messages. */
  beforeEach(async () => {
    await policies(null, {});
    await t.ctx.db('messages').update({ date_sent: Math.floor(Date.now() / 1000) });
  });

  it('archives a channel’s messages past its period with their rows, reactions, edit history, submessages and upload links, and keeps newer ones', async () => {
    const { owner, member, guest } = t.cast;
    await policies(null, { short: 30 });
    const old = await inChannel('short', 'an old one');
    const poll = await aged(40, () => inChannel('short', '/poll Lunch?\nSoup\nSalad'));
    const recent = await aged(20, () => inChannel('short', 'a recent one'));
    expect((await t.api.post(`/messages/${old}/reactions`, owner, { emoji_name: 'smile' })).status).toBe(200);
    expect((await t.api.post('/messages/flags', guest, { messages: [old], op: 'add', flag: 'starred' })).status).toBe(200);
    // Edited while it could be, then aged.
    expect((await t.api.patch(`/messages/${old}`, member, { content: 'an old one, edited' })).status).toBe(200);
    await t.ctx
      .db('messages')
      .where({ id: old })
      .update({ date_sent: Math.floor(Date.now() / 1000) - 40 * DAY });
    const [attachmentId] = await t.ctx.db('attachments').insert({
      realm_id: t.realmId,
      owner_id: member.id,
      file_name: 'notes.txt',
      path_id: `${t.realmId}/ab/retention${dialect}/notes.txt`,
      size: 12,
      create_time: 1_700_000_000,
    });
    const attachment = Number(attachmentId ?? (await t.ctx.db('attachments').max('id as id').first())!.id);
    await t.ctx.db('attachment_messages').insert({ attachment_id: attachment, message_id: old });
    const rowsBefore = (await t.ctx.db('user_messages').where({ message_id: old }).orderBy('user_id').select('user_id', 'flags')).map(
      (r: { user_id: number; flags: number | string }) => [Number(r.user_id), Number(r.flags)],
    );

    const result = await run();

    expect(result).toEqual({ ran: true, archived: 2, batches: 1, ...NO_VACUUM, interrupted: false });
    expect(await live([old, poll, recent])).toEqual([recent]);
    for (const table of ['user_messages', 'reactions', 'message_edits', 'attachment_messages', 'submessages'])
      expect([table, await t.ctx.db(table).whereIn('message_id', [old, poll])]).toEqual([table, []]);
    const [archived, archivedPoll] = await getArchivedMessages(t.ctx.db, [old, poll]);
    expect(archived).toMatchObject({
      id: old,
      content: 'an old one, edited',
      archive_type: 1,
      user_messages: rowsBefore,
      reactions: [{ user_id: owner.id, emoji_name: 'smile' }],
      edits: [{ user_id: member.id, prev_content: 'an old one' }],
      attachment_ids: [attachment],
    });
    expect(await t.ctx.db('archived_submessages').where({ message_id: archivedPoll!.id }).pluck('msg_type')).toEqual(['widget']);
    const tx = await t.ctx.db('archived_messages').where({ id: old }).first('archive_transaction_id');
    expect(await t.ctx.db('archive_transactions').where({ id: tx!.archive_transaction_id }).first('realm_id', 'type')).toEqual({
      realm_id: t.realmId,
      type: 1,
    });
    expect((await t.api.get(`/messages/${old}`, member)).body.msg).toBe('Invalid message(s)');
    // The upload stays: an archived message still claims it.
    expect(await t.ctx.db('attachments').where({ id: attachment }).first('id')).toBeDefined();
    // The lease is given back.
    expect((await getLease(t.ctx.db, RETENTION_LEASE))!.holder).toBe('');
  });

  it('keeps channels set to -1, makes inheriting channels and direct messages follow the organization, and keeps all when it keeps forever', async () => {
    const { member, owner } = t.cast;
    await policies(10, { short: 5, forever: -1 });
    const inForever = await aged(20, () => inChannel('forever', 'kept for ever'));
    const inInherits = await aged(20, () => inChannel('inherits', 'follows the organization'));
    const inheritsRecent = await aged(8, () => inChannel('inherits', 'within the organization’s 10 days'));
    const inShort = await aged(8, () => inChannel('short', 'past the channel’s own 5 days'));
    const direct = await aged(20, () => sendDirect(t, member, [owner], 'an old direct message'));
    const directRecent = await aged(8, () => sendDirect(t, member, [owner], 'a recent direct message'));

    expect((await run()).archived).toBe(3);
    expect(await live([inForever, inInherits, inheritsRecent, inShort, direct, directRecent])).toEqual([
      inForever,
      inheritsRecent,
      directRecent,
    ]);

    // An organization keeping messages for ever: inheriting channels and direct messages are kept; a channel's own period still applies.
    await policies(-1, { short: 5 });
    const inInherits2 = await aged(400, () => inChannel('inherits', 'the organization keeps it'));
    const direct2 = await aged(400, () => sendDirect(t, member, [owner], 'kept too'));
    const inShort2 = await aged(8, () => inChannel('short', 'the channel’s own period'));
    expect((await run()).archived).toBe(1);
    expect(await live([inInherits2, direct2, inShort2])).toEqual([inInherits2, direct2]);
    await policies(null, { short: 5 });
    expect((await run()).archived).toBe(0);
    expect(await live([inInherits2, direct2])).toEqual([inInherits2, direct2]);
  });

  it('archives in transactions of RETENTION_BATCH_SIZE messages, and a run stopped between batches leaves the rest to the next', async () => {
    await policies(null, { short: 30 });
    const ids: number[] = [];
    for (let i = 0; i < 2 * BATCH + 1; i++) ids.push(await aged(31 + i, () => inChannel('short', `batch ${i}`, `topic ${i % 2}`)));
    const txBefore = Number((await t.ctx.db('archive_transactions').where({ type: 1 }).count('id as n').first())!.n);

    let batches = 0;
    const stopped = await runRetention(t.ctx, { holder: 'node-a:1:test', shouldStop: () => batches++ >= 1 });
    expect(stopped).toEqual({ ran: true, archived: BATCH, batches: 1, ...NO_VACUUM, interrupted: true });
    // Oldest first; each message live or archived whole.
    const left = await live(ids);
    expect(left).toHaveLength(BATCH + 1);
    for (const id of ids) {
      const isLive = left.includes(id);
      expect([id, (await getArchivedMessages(t.ctx.db, [id])).length]).toEqual([id, isLive ? 0 : 1]);
      expect([id, (await t.ctx.db('user_messages').where({ message_id: id })).length > 0]).toEqual([id, isLive]);
    }

    const rest = await run();
    expect(rest).toEqual({ ran: true, archived: BATCH + 1, batches: 2, ...NO_VACUUM, interrupted: false });
    expect(await live(ids)).toEqual([]);
    const txAfter = Number((await t.ctx.db('archive_transactions').where({ type: 1 }).count('id as n').first())!.n);
    expect(txAfter - txBefore).toBe(3);
  });

  it('lets one process archive at a time: a held lease makes another skip until it lapses', async () => {
    await policies(null, { short: 30 });
    const ids = [await aged(40, () => inChannel('short', 'leased 1')), await aged(40, () => inChannel('short', 'leased 2'))];
    // Another node holds the lease (it is archiving, or died while it was).
    const { clock, other } = await holdLeaseElsewhere(t);
    expect(await run(other)).toEqual({ ran: false, archived: 0, batches: 0, ...NO_VACUUM, interrupted: false });
    expect(await live(ids)).toEqual(ids);
    clock.advance(RETENTION_LEASE_MS + 1);
    expect(await run(other)).toMatchObject({ ran: true, archived: 2 });
    expect(await live(ids)).toEqual([]);

    // Two processes starting together: one archives; the other finds the lease taken, or (on a
    // loaded machine, its lease transaction scheduled after the first run released it) runs
    // after it and finds nothing left. Never do both archive.
    const more = [await aged(40, () => inChannel('short', 'race 1')), await aged(40, () => inChannel('short', 'race 2'))];
    const [a, b] = await Promise.all([run(t.ctx, retentionHolder('node-a')), run(t.ctx, retentionHolder('node-b'))]);
    expect([a.ran, b.ran]).toContain(true);
    expect([a.archived, b.archived].sort()).toEqual([0, 2]);
    expect(await live(more)).toEqual([]);
    expect(await t.ctx.db('archived_messages').whereIn('id', more).pluck('archive_type')).toEqual([1, 1]);
  });

  it('tells the clients as a deletion does: delete_message per conversation to those holding rows', async () => {
    const { member, owner, guest } = t.cast;
    await policies(10, { short: 30 });
    const fields = { event_types: ['delete_message'], client_capabilities: { bulk_message_deletion: true } };
    const memberQueue = await register(t, member, fields);
    const guestQueue = await register(t, guest, fields);
    const ids = [await aged(40, () => inChannel('short', 'a', 'Topic A')), await aged(40, () => inChannel('short', 'b', 'topic b'))];
    const direct = await aged(40, () => sendDirect(t, member, [owner], 'between the member and the owner'));

    expect((await run()).archived).toBe(3);

    const events = (await pending(t, memberQueue)).map(({ id: _id, ...e }) => e);
    expect(events).toEqual([
      { type: 'delete_message', message_type: 'stream', message_ids: [ids[0]], stream_id: short.id, topic: 'topic a' },
      { type: 'delete_message', message_type: 'stream', message_ids: [ids[1]], stream_id: short.id, topic: 'topic b' },
      { type: 'delete_message', message_type: 'private', message_ids: [direct] },
    ]);
    // The guest had rows for the channel messages, not for the direct message.
    expect((await pending(t, guestQueue)).map((e) => e.message_ids)).toEqual([[ids[0]], [ids[1]]]);
  });

  it('runs on a timer every RETENTION_INTERVAL_MS on the context’s clock, and stops', async () => {
    await policies(null, { short: 30 });
    const id = await aged(40, () => inChannel('short', 'on a timer'));
    const clock = new ManualClock();
    const ctx = { ...t.ctx, clock };
    const runs: number[] = [];
    const stop = startRetentionArchiver(
      ctx,
      (err) => {
        throw err;
      },
      (r) => runs.push(r.archived),
    );
    // The first run a minute after start, not an interval (an hour) after it.
    expect(firstRetentionRunMs(t.ctx.config.retentionIntervalMs)).toBe(60_000);
    clock.advance(60_000 - 1);
    expect(await live([id])).toEqual([id]);
    clock.advance(1);
    await until(() => runs.length > 0, 'the run ends');
    await stop();
    expect(runs).toEqual([1]);
    expect(await live([id])).toEqual([]);
    expect(clock.pending).toBe(0);
  });

  it('restore-retention (the CLI) brings archived messages back to GET /messages, as they were', async () => {
    const { member, owner, guest } = t.cast;
    const channel = await createChannel(t, 'restorable', [owner, member, guest]);
    await t.ctx.db('channels').where({ id: channel.id }).update({ message_retention_days: 30 });
    const id = await aged(40, () => inChannel('restorable', 'bring me back', 'Restored'));
    expect((await t.api.post(`/messages/${id}/reactions`, owner, { emoji_name: 'smile' })).status).toBe(200);
    expect((await t.api.post('/messages/flags', guest, { messages: [id], op: 'add', flag: 'starred' })).status).toBe(200);
    const before = (await t.api.get(`/messages/${id}`, guest)).body.message;
    const flagsBefore = (await t.api.get(`/messages/${id}`, guest)).body.message.flags;
    expect((await run()).archived).toBe(1);
    expect((await t.api.get(`/messages/${id}`, guest)).body.msg).toBe('Invalid message(s)');
    // A period that no longer covers it, or the next run would archive it again.
    await t.ctx.db('channels').where({ id: channel.id }).update({ message_retention_days: 365 });

    const restored = await runCli(['restore-retention', '--channel', 'restorable'], instance.env);
    expect([restored.code, restored.stdout]).toEqual([0, 'Restored 1 messages from 1 archive transactions.\n']);

    const after = await t.api.get(`/messages/${id}`, guest);
    expect(after.status).toBe(200);
    expect(after.body.message).toEqual(before);
    expect(after.body.message.flags).toEqual(flagsBefore);
    const page = await t.api.get('/messages', member, {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: JSON.stringify([
        { operator: 'channel', operand: channel.id },
        { operator: 'topic', operand: 'restored' },
      ]),
    });
    expect(page.body.messages.map((m: { id: number }) => m.id)).toEqual([id]);
    const search = await t.api.get('/messages', member, {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: JSON.stringify([{ operator: 'search', operand: 'bring' }]),
    });
    expect(search.body.messages.map((m: { id: number }) => m.id)).toContain(id);
    const starred = await t.api.get('/messages', guest, {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: JSON.stringify([{ operator: 'is', operand: 'starred' }]),
    });
    expect(starred.body.messages.map((m: { id: number }) => m.id)).toEqual([id]);
    expect(await getArchivedMessages(t.ctx.db, [id])).toEqual([]);

    // Nothing left to restore: said so, and nothing changes.
    const again = await runCli(['restore-retention', '--channel', 'restorable'], instance.env);
    expect([again.code, again.stdout.split(';')[0]]).toEqual([0, 'Restored 0 messages from 0 archive transactions']);
  });

  it('restore-archived puts back one archive transaction by its number, a deletion’s too', async () => {
    const { member, admin } = t.cast;
    const id = await inChannel('short', 'deleted by mistake');
    expect((await t.api.delete(`/messages/${id}`, admin)).status).toBe(200);
    const { archive_transaction_id: tx } = (await t.ctx.db('archived_messages').where({ id }).first('archive_transaction_id'))!;
    const restored = await runCli(['restore-archived', '--transaction', String(tx)], instance.env);
    expect([restored.code, restored.stdout]).toEqual([0, 'Restored 1 messages from 1 archive transactions.\n']);
    expect((await t.api.get(`/messages/${id}`, member)).body.message.content).toBe('<p>deleted by mistake</p>');
    const missing = await runCli(['restore-archived', '--transaction', String(tx)], instance.env);
    expect([missing.code, missing.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      `No archive transaction ${tx} with messages to restore in that organization`,
    ]);
  });
});
