import type { Delivery } from '../src/events/bus';
import type { Clock } from '../src/events/clock';
import { ARCHIVE_CHUNK, archiveMessages, getArchivedMessages } from '../src/queries/archive';
import { insertRows } from '../src/queries/ids';
import { addReceivers } from '../src/queries/message-receivers';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { snapshotDigest } from './support/db-snapshot';
import { sendToChannel } from './support/events';
import { countQueries, createChannel, startTestServer, subscribe, TestServer } from './support/server';

/** A clock that moves on by `stepMs` each time it is read: each batch of delete_topic reads it once. */
class TickingClock implements Clock {
  private time = 1_000_000;
  constructor(private readonly stepMs: number) {}
  now = () => (this.time += this.stepMs);
  schedule = () => () => {};
}

eachDatabase('POST /streams/{stream_id}/delete_topic', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let defaults: { batch: number; budget: number };
  const systemClock = () => t.ctx.clock;
  let clock: Clock;

  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member, guest } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, moderator, member, guest]);
    defaults = { batch: t.ctx.config.deleteTopicBatchSize, budget: t.ctx.config.deleteTopicTimeBudgetMs };
    clock = systemClock();
  });
  afterAll(() => t.close());
  afterEach(() => {
    t.ctx.config.deleteTopicBatchSize = defaults.batch;
    t.ctx.config.deleteTopicTimeBudgetMs = defaults.budget;
    t.ctx.clock = clock;
  });

  const fill = async (n: number, topic: string, to = 'general', who: UserRow = t.cast.member) => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push(await sendToChannel(t, who, to, topic, `${topic} #${i}`));
    return ids;
  };
  const deleteTopic = (who: UserRow, streamId: number, topic: string) =>
    t.api.post(`/streams/${streamId}/delete_topic`, who, { topic_name: topic });
  const remaining = async (ids: number[]) =>
    ((await t.ctx.db('messages').whereIn('id', ids).pluck('id')) as number[]).map(Number).sort((a, b) => a - b);

  async function recording(work: () => Promise<unknown>): Promise<Delivery[]> {
    const seen: Delivery[] = [];
    const off = t.ctx.bus.subscribe((d) => seen.push(d));
    try {
      await work();
    } finally {
      off();
    }
    return seen;
  }

  it('deletes the whole topic in batches, newest first, archiving every message', async () => {
    const ids = await fill(12, 'Batched');
    const other = await fill(2, 'kept');
    t.ctx.config.deleteTopicBatchSize = 5;
    let res: Awaited<ReturnType<typeof deleteTopic>> | undefined;
    // The topic matches case-insensitively, as topic narrows do.
    const seen = await recording(async () => (res = await deleteTopic(t.cast.admin, general.id, 'batched')));
    expect(res!.status).toBe(200);
    expect(res!.body).toEqual({ result: 'success', msg: '', complete: true });
    expect(await remaining(ids)).toEqual([]);
    expect(await remaining(other)).toEqual(other);
    const archived = await getArchivedMessages(t.ctx.db, ids);
    expect(archived.map((m) => m.id)).toEqual(ids);
    expect(archived.every((m) => m.topic === 'Batched' && m.user_messages.length === 5)).toBe(true);

    // One delete_message event per batch: the newest five first.
    const deletes = seen.filter((d) => d.event.type === 'delete_message').map((d) => d.event);
    expect(deletes).toEqual([
      { type: 'delete_message', message_type: 'stream', stream_id: general.id, topic: 'batched', message_ids: ids.slice(7) },
      { type: 'delete_message', message_type: 'stream', stream_id: general.id, topic: 'batched', message_ids: ids.slice(2, 7) },
      { type: 'delete_message', message_type: 'stream', stream_id: general.id, topic: 'batched', message_ids: ids.slice(0, 2) },
    ]);
  });

  it('stops when its time budget is spent, answering complete:false, and finishes when repeated', async () => {
    const ids = await fill(12, 'budget');
    t.ctx.config.deleteTopicBatchSize = 5;
    // Read once at the start and once before each batch, 1 s apart: two batches fit in 2.5 s.
    t.ctx.config.deleteTopicTimeBudgetMs = 2_500;
    t.ctx.clock = new TickingClock(1_000);
    const first = await deleteTopic(t.cast.admin, general.id, 'budget');
    expect(first.body).toEqual({ result: 'success', msg: '', complete: false });
    // The newest ten went (two whole batches, each committed); the oldest two remain.
    expect(await remaining(ids)).toEqual(ids.slice(0, 2));
    expect((await getArchivedMessages(t.ctx.db, ids)).map((m) => m.id)).toEqual(ids.slice(2));

    const second = await deleteTopic(t.cast.admin, general.id, 'budget');
    expect(second.body).toEqual({ result: 'success', msg: '', complete: true });
    expect(await remaining(ids)).toEqual([]);
    expect(await t.ctx.db('user_messages').whereIn('message_id', ids)).toEqual([]);
    expect((await getArchivedMessages(t.ctx.db, ids)).map((m) => m.id)).toEqual(ids);
  });

  it('refuses members and moderators with UNAUTHORIZED_PRINCIPAL, changing nothing', async () => {
    const ids = await fill(2, 'protected');
    const before = await snapshotDigest(t.ctx.db);
    for (const who of [t.cast.member, t.cast.moderator, t.cast.guest]) {
      const res = await deleteTopic(who, general.id, 'protected');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
    }
    expect(await snapshotDigest(t.ctx.db)).toEqual(before);
    expect(await remaining(ids)).toEqual(ids);
  });

  it('answers Invalid channel ID for a missing channel and a private one the administrator is not in', async () => {
    const { owner, admin } = t.cast;
    const hidden = await createChannel(t, 'hidden', [owner], { inviteOnly: true });
    const ids = await fill(1, 'secret', 'hidden', owner);
    const before = await snapshotDigest(t.ctx.db);
    for (const id of [999_999, hidden.id]) {
      const res = await deleteTopic(admin, id, 'secret');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    }
    expect(await snapshotDigest(t.ctx.db)).toEqual(before);
    expect(await remaining(ids)).toEqual(ids);
  });

  it('reads the empty topic’s display name as the empty topic', async () => {
    const ids = await fill(2, '');
    const res = await deleteTopic(t.cast.admin, general.id, 'general chat');
    expect(res.body.complete).toBe(true);
    expect(await remaining(ids)).toEqual([]);
  });

  it('deletes only what the administrator received in a channel with protected history', async () => {
    const { owner, admin, member } = t.cast;
    const secret = await createChannel(t, 'protected', [owner, member], { inviteOnly: true, historyPublicToSubscribers: false });
    const before = await fill(3, 'mixed', 'protected');
    await subscribe(t, secret, [admin]);
    const after = await fill(2, 'mixed', 'protected');
    const res = await deleteTopic(admin, secret.id, 'mixed');
    expect(res.body.complete).toBe(true);
    expect(await remaining([...before, ...after])).toEqual(before);
  });

  it('moves first_message_id on when the topic held the channel’s oldest message', async () => {
    const { owner, admin } = t.cast;
    const fresh = await createChannel(t, 'fresh', [owner, admin]);
    const old = await fill(3, 'old', 'fresh', owner);
    const kept = await fill(2, 'new', 'fresh', owner);
    t.ctx.config.deleteTopicBatchSize = 2;
    const seen = await recording(async () => expect((await deleteTopic(admin, fresh.id, 'old')).body.complete).toBe(true));
    expect((await t.ctx.db('channels').where({ id: fresh.id }).first('first_message_id'))!.first_message_id).toBe(kept[0]);
    // Only the batch that took the oldest message changes it.
    expect(seen.filter((d) => d.event.type === 'stream').map((d) => d.event)).toEqual([
      { type: 'stream', op: 'update', property: 'first_message_id', value: kept[0], stream_id: fresh.id, name: 'fresh' },
    ]);
    expect(seen.filter((d) => d.event.type === 'delete_message')).toHaveLength(2);
    expect(await remaining(old)).toEqual([]);
  });

  it('issues the same number of statements per batch, whatever the batch holds', async () => {
    t.ctx.config.deleteTopicBatchSize = 100;
    await fill(3, 'small');
    await fill(60, 'large');
    const small = await countQueries(t, () => deleteTopic(t.cast.admin, general.id, 'small'));
    const large = await countQueries(t, () => deleteTopic(t.cast.admin, general.id, 'large'));
    expect(small.result.body.complete).toBe(true);
    expect(large.result.body.complete).toBe(true);
    expect(large.queries).toBe(small.queries);

    // And a fixed number per batch: 60 messages in batches of 20 cost one batch more than in batches of 30.
    await fill(60, 'thirds');
    await fill(60, 'halves');
    t.ctx.config.deleteTopicBatchSize = 20;
    const thirds = await countQueries(t, () => deleteTopic(t.cast.admin, general.id, 'thirds'));
    t.ctx.config.deleteTopicBatchSize = 30;
    const halves = await countQueries(t, () => deleteTopic(t.cast.admin, general.id, 'halves'));
    const perBatch = thirds.queries - halves.queries;
    expect(perBatch).toBeGreaterThan(0);
    // Three of them keep the topic's row (src/queries/topic-summaries.ts): which topics, then its row made again.
    // Four go through the receivers' lists (ADR 0059): the audience's, and archiving's read, the rows' delete and the lists'.
    expect(perBatch).toBeLessThanOrEqual(27);
    expect(small.queries).toBe(halves.queries - perBatch);
  });

  it('archives long id lists in slices, fourteen statements per slice and two per block of receivers (SQLite binds at most 32,766 variables)', async () => {
    const { owner, member } = t.cast;
    // Fixture rows as sending stores them, inserted directly: 2,500 messages is three slices.
    // Above every id ever given, archived ones included (ids are never reused).
    const top = async (table: string) => Number((await t.ctx.db(table).max('id as id').first())?.id ?? 0);
    const first = Math.max(await top('messages'), await top('archived_messages')) + 1;
    const ids = Array.from({ length: 2_500 }, (_, i) => first + i);
    const now = Math.floor(Date.now() / 1000);
    const message = (id: number) => ({
      id,
      realm_id: t.realmId,
      sender_id: owner.id,
      recipient_id: general.recipient_id,
      type: 1,
      topic: 'bulk',
      topic_key: 'bulk',
      content: `bulk ${id}`,
      rendered_content: `<p>bulk ${id}</p>`,
      date_sent: now,
      sending_client: 'test',
    });
    await insertRows(t.ctx.db, 'messages', ids.map(message));
    await insertRows(
      t.ctx.db,
      'user_messages',
      ids.flatMap((id) => [
        { user_id: owner.id, message_id: id, flags: 1 },
        { user_id: member.id, message_id: id, flags: 0 },
      ]),
    );
    await addReceivers(t.ctx.db, ids, [owner.id, member.id]);
    const { result: deleted, queries } = await countQueries(t, () => t.ctx.db.transaction((trx) => archiveMessages(trx, ids, now, 2)));
    expect(deleted).toBe(ids.length);
    // Per slice, fourteen: the message copies and the four child tables' (five), their deletes
    // and the search rows' (five), the topics touched, the messages' delete, the receivers'
    // lists read and deleted (ADR 0059); per block of those lists, the rows read and deleted: the slice's 1,000 messages share one
    // list of two users, two blocks (at most 900 messages each, src/queries/message-receivers.ts).
    // With BEGIN and COMMIT, and the topic's row made again once at the end (a delete and an insert).
    const slices = ids
      .map((_, i) => i)
      .filter((i) => i % ARCHIVE_CHUNK === 0)
      .map((i) => Math.min(ARCHIVE_CHUNK, ids.length - i));
    const blocks = slices.reduce((n, size) => n + Math.ceil(size / 900), 0);
    expect(queries).toBe(14 * slices.length + 2 * blocks + 2 + 2);
    expect(await remaining(ids)).toEqual([]);
    const archived = await getArchivedMessages(t.ctx.db, ids);
    expect(archived).toHaveLength(ids.length);
    expect(archived[2_499]!.user_messages).toEqual(
      [
        [owner.id, 1],
        [member.id, 0],
      ].sort((a, b) => a[0]! - b[0]!),
    );
  });
});
