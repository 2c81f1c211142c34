/**
 * Moving a topic is set-based: the statements a change_all move runs do
 * not grow with the number of messages moved (below the id-list chunk of
 * src/queries/edit-message.ts, MOVE_CHUNK; one more of each kind per
 * chunk above it).
 */
import type { TestServer } from './support/server';
import { eachDatabase } from './support/databases';
import { countQueries, createChannel, startTestServer } from './support/server';
import { addReceivers } from '../src/queries/message-receivers';

/** A topic of `n` messages written straight into the tables (a fixture), with a row per subscriber. */
export async function insertTopic(
  t: TestServer,
  channel: { recipient_id: number },
  topic: string,
  n: number,
  senderId: number,
  receiverIds: number[],
): Promise<number[]> {
  const now = Math.floor(Date.now() / 1000);
  const rows = Array.from({ length: n }, (_, i) => ({
    realm_id: t.realmId,
    sender_id: senderId,
    recipient_id: channel.recipient_id,
    type: 1,
    topic,
    topic_key: topic.toLowerCase(),
    content: `bulk ${i}`,
    rendered_content: `<p>bulk ${i}</p>`,
    rendered_content_version: 1,
    date_sent: now,
    sending_client: 'test',
  }));
  for (let i = 0; i < rows.length; i += 400) await t.ctx.db('messages').insert(rows.slice(i, i + 400));
  const ids = (
    await t.ctx.db('messages').where({ recipient_id: channel.recipient_id, topic_key: topic.toLowerCase() }).orderBy('id').pluck('id')
  ).map(Number);
  const ums = ids.flatMap((message_id) => receiverIds.map((user_id) => ({ user_id, message_id, flags: 0 })));
  for (let i = 0; i < ums.length; i += 400) await t.ctx.db('user_messages').insert(ums.slice(i, i + 400));
  await addReceivers(t.ctx.db, ids, receiverIds);
  await t.ctx
    .db('channels')
    .where({ recipient_id: channel.recipient_id })
    .whereNull('first_message_id')
    .update({ first_message_id: ids[0] });
  return ids;
}

eachDatabase('query counts of moves', (dialect) => {
  let t: TestServer;
  let from: { id: number; recipient_id: number };
  let to: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, member, guest } = t.cast;
    from = await createChannel(t, 'from', [owner, admin, member, guest]);
    to = await createChannel(t, 'to', [owner, member]);
    // One move first: the Notification Bot is created on first use, and process caches fill. It
    // leaves both channels an older first message, so the measured moves change neither's.
    const warm = await insertTopic(t, from, 'warm up', 3, member.id, [owner.id, member.id]);
    await t.api.patch(`/messages/${warm[0]}`, owner, { stream_id: to.id, send_notification_to_old_thread: true });
  });
  afterAll(() => t.close());

  const receivers = () => [t.cast.owner.id, t.cast.admin.id, t.cast.member.id, t.cast.guest.id];

  it('a change_all topic rename runs the same statements for 10 and 1,200 messages', async () => {
    const counts: number[] = [];
    for (const [topic, n] of [
      ['small', 10],
      ['large', 1200],
    ] as const) {
      const ids = await insertTopic(t, from, topic, n, t.cast.member.id, receivers());
      const { result, queries } = await countQueries(t, () =>
        t.api.patch(`/messages/${ids[0]}`, t.cast.owner, { topic: `${topic} renamed`, propagate_mode: 'change_all' }),
      );
      expect(result.status).toBe(200);
      expect(
        await t.ctx
          .db('messages')
          .where({ topic_key: `${topic} renamed` })
          .count({ n: '*' })
          .first(),
      ).toEqual({ n: n + 1 });
      counts.push(queries);
    }
    expect(counts[1]).toBe(counts[0]);
    expect(counts[0]).toBeLessThanOrEqual(45);
  });

  it('a change_all move to another channel runs the same statements for 10 and 1,200 messages, but for a block of receivers more', async () => {
    const counts: number[] = [];
    for (const [topic, n] of [
      ['away small', 10],
      ['away large', 1200],
    ] as const) {
      const ids = await insertTopic(t, from, topic, n, t.cast.member.id, receivers());
      const { result, queries } = await countQueries(t, () =>
        t.api.patch(`/messages/${ids[0]}`, t.cast.owner, {
          stream_id: to.id,
          propagate_mode: 'change_all',
          send_notification_to_old_thread: true,
        }),
      );
      expect(result.status).toBe(200);
      // Users not subscribed to the destination lose their rows.
      expect(
        await t.ctx.db('user_messages').whereIn('message_id', ids.slice(0, 500)).where({ user_id: t.cast.admin.id }).first(),
      ).toBeUndefined();
      counts.push(queries);
    }
    // The rows that go are found through the messages' receiver lists (ADR 0059): the lists
    // are read 1,000 messages a statement and the rows deleted 900 messages a block, so the
    // 1,200 messages take one more read and one more delete than 10 do.
    expect(counts[1]! - counts[0]!).toBe(2);
    expect(counts[0]).toBeLessThanOrEqual(70);
  });
});
