import { doRestoreArchived } from '../src/actions/archive-restore';
import { rebuildAllTopicSummaries } from '../src/queries/topic-summaries';
import { listChannelTopics, listChannelTopicsFromMessages } from '../src/queries/topics';
import { eachDatabase } from './support/databases';
import { seededRandom } from './support/random';
import { sendToChannel } from './support/events';
import { createChannel, startTestServer, type TestServer } from './support/server';

/**
 * The channels' topic rows (channel_topics, src/queries/topic-summaries.ts)
 * against the topic list grouped from the messages themselves, after every
 * step of a seeded walk through what changes a channel's topics: sends in
 * several spellings of a topic (and the empty topic), edits of one message's
 * topic and of a topic from a message on, resolving, moves to the other
 * channel, deletions of messages and of whole topics, and restores of what
 * was deleted. Through the HTTP API, as clients do it.
 */
eachDatabase('channel topic rows', (dialect) => {
  let t: TestServer;
  let channels: Array<{ id: number; recipient_id: number; name: string }>;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, member } = t.cast;
    channels = [
      { ...(await createChannel(t, 'topics one', [owner, member])), name: 'topics one' },
      { ...(await createChannel(t, 'topics two', [owner, member])), name: 'topics two' },
    ];
  });
  afterAll(() => t.close());

  const agree = async (step: string) => {
    for (const c of channels) {
      const kept = await listChannelTopics(t.ctx.db, c.recipient_id, null);
      const grouped = await listChannelTopicsFromMessages(t.ctx.db, c.recipient_id, null);
      expect([step, c.name, kept]).toEqual([step, c.name, grouped]);
    }
  };

  it('agree with the messages after every send, edit, resolve, move, deletion and restore', async () => {
    const { owner } = t.cast;
    const rand = seededRandom(7);
    const topics = ['Lunch', 'lunch', 'LUNCH', 'Deploys', 'q3 plans', ''];
    const live: Array<{ id: number; channel: number }> = [];
    const pick = () => live[rand(live.length)]!;
    // The notices a move sends are messages in the topics too: half the moves go without them.
    const notices = () => (rand(2) ? {} : { send_notification_to_new_thread: 'false', send_notification_to_old_thread: 'false' });
    const forget = async () => {
      const ids = new Set(((await t.ctx.db('messages').pluck('id')) as number[]).map(Number));
      for (let i = live.length - 1; i >= 0; i--) if (!ids.has(live[i]!.id)) live.splice(i, 1);
    };
    const channelOf = async (id: number) => {
      const row = (await t.ctx.db('messages').where({ id }).first('recipient_id', 'topic'))!;
      return { channel: channels.findIndex((c) => c.recipient_id === Number(row.recipient_id)), topic: String(row.topic) };
    };

    let done = 0;
    const kinds = new Map<string, number>();
    for (let step = 0; step < 120; step++) {
      const what = live.length < 4 ? 0 : rand(12);
      let label: string;
      if (what <= 4) {
        const channel = rand(2);
        const topic = topics[rand(topics.length)]!;
        label = `send to ${channel}/${topic}`;
        live.push({ id: await sendToChannel(t, owner, channels[channel]!.name, topic, `step ${step}`), channel });
      } else if (what <= 6) {
        const m = pick();
        const mode = ['change_one', 'change_later', 'change_all'][rand(3)]!;
        const topic = topics[rand(topics.length)]! || 'renamed';
        if ((await channelOf(m.id)).topic === topic) continue;
        label = `edit ${m.id} to ${topic} (${mode})`;
        const res = await t.api.patch(`/messages/${m.id}`, owner, { topic, propagate_mode: mode, ...notices() });
        expect([label, res.status, res.status === 200 ? '' : res.body.msg]).toEqual([label, 200, '']);
      } else if (what === 7) {
        const m = pick();
        const { topic } = await channelOf(m.id);
        if (topic.startsWith('✔ ') || topic === '') continue;
        label = `resolve ${topic}`;
        const res = await t.api.patch(`/messages/${m.id}`, owner, { topic: `✔ ${topic}`, propagate_mode: 'change_all' });
        expect([label, res.status, res.status === 200 ? '' : res.body.msg]).toEqual([label, 200, '']);
      } else if (what === 8) {
        const m = pick();
        const { channel } = await channelOf(m.id);
        const to = channels[1 - channel]!;
        const mode = ['change_one', 'change_later', 'change_all'][rand(3)]!;
        label = `move ${m.id} to ${to.name} (${mode})`;
        const res = await t.api.patch(`/messages/${m.id}`, owner, { stream_id: to.id, propagate_mode: mode, ...notices() });
        expect([label, res.status, res.status === 200 ? '' : res.body.msg]).toEqual([label, 200, '']);
        for (const l of live) l.channel = (await channelOf(l.id)).channel;
      } else if (what === 9) {
        const m = pick();
        label = `delete ${m.id}`;
        expect([label, (await t.api.delete(`/messages/${m.id}`, owner)).status]).toEqual([label, 200]);
        await forget();
      } else if (what === 10) {
        const m = pick();
        const { channel, topic } = await channelOf(m.id);
        label = `delete topic ${channel}/${topic}`;
        const res = await t.api.post(`/streams/${channels[channel]!.id}/delete_topic`, owner, { topic_name: topic });
        expect([label, res.status, res.status === 200 ? '' : res.body.msg]).toEqual([label, 200, '']);
        await forget();
      } else {
        label = 'restore what was deleted';
        await doRestoreArchived(t.ctx, { realmId: t.realmId, since: 0 });
        const ids = (
          (await t.ctx
            .db('messages')
            .whereIn(
              'recipient_id',
              channels.map((c) => c.recipient_id),
            )
            .pluck('id')) as number[]
        ).map(Number);
        for (const id of ids) if (!live.some((l) => l.id === id)) live.push({ id, channel: (await channelOf(id)).channel });
      }
      await agree(`${step}: ${label}`);
      done += 1;
      const kind = label.split(' ')[0]!;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    expect(done).toBeGreaterThan(100);
    // Every kind of step was taken, more than once.
    for (const kind of ['send', 'edit', 'resolve', 'move', 'delete', 'restore'])
      expect([kind, (kinds.get(kind) ?? 0) > 1]).toEqual([kind, true]);
    // The walk left topics in both channels, some spelled as their newest message spells them.
    expect((await listChannelTopics(t.ctx.db, channels[0]!.recipient_id, null)).length).toBeGreaterThan(0);
  });

  it('are made again from the messages by the bulk rebuild, exactly as the sends kept them', async () => {
    const before = await Promise.all(channels.map((c) => listChannelTopics(t.ctx.db, c.recipient_id, null)));
    await rebuildAllTopicSummaries(t.ctx.db);
    expect(await Promise.all(channels.map((c) => listChannelTopics(t.ctx.db, c.recipient_id, null)))).toEqual(before);
  });

  // MariaDB: a send's upsert of its topic row locks that row until COMMIT, and every send to the
  // topic takes the same lock. It is the send's last write, so a send waiting for it has written
  // its receivers' rows already. SQLite has one writer at a time: there is no such wait to order.
  (dialect === 'mysql' ? it : it.skip)('are written last in a send, so sends to one topic wait only for each other’s commit', async () => {
    const { owner } = t.cast;
    const c = channels[0]!;
    await sendToChannel(t, owner, c.name, 'one lock', 'first');
    const before = Number(
      await t.ctx
        .db('messages')
        .max({ m: 'id' })
        .first()
        .then((r) => r?.m),
    );
    const holder = await t.ctx.db.transaction();
    let send: Promise<number> | undefined;
    try {
      await holder.raw('SELECT max_id FROM channel_topics WHERE recipient_id = ? AND topic_key = ? FOR UPDATE', [
        c.recipient_id,
        'one lock',
      ]);
      send = sendToChannel(t, owner, c.name, 'One lock', 'second');
      // What the waiting send has written, read uncommitted: its message and, with the topic
      // row last, every receiver's row (two subscribers). Written first, the topic row would
      // hold the send before its receivers' rows, and they would never show here.
      const rowsWritten = await t.ctx.db.transaction(
        async (dirty) => {
          const deadline = Date.now() + 5_000;
          let rows = 0;
          while (Date.now() < deadline) {
            const m = await dirty('messages').where('recipient_id', c.recipient_id).where('id', '>', before).first('id');
            if (m) rows = Number((await dirty('user_messages').where('message_id', m.id).count({ n: '*' }))[0]!.n);
            if (rows === 2) break;
            await new Promise((r) => setTimeout(r, 20));
          }
          return rows;
        },
        { isolationLevel: 'read uncommitted' },
      );
      expect(rowsWritten).toBe(2);
    } finally {
      await holder.rollback();
    }
    const id = await send!;
    expect(await listChannelTopics(t.ctx.db, c.recipient_id, null)).toContainEqual({ topic: 'One lock', max_id: id });
  });
});
