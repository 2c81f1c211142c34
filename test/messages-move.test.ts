import type { Delivery } from '../src/events/bus';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, subscribe, TestServer } from './support/server';

/** PATCH /messages/{id}: topic edits, channel moves, resolving. */
eachDatabase('moving messages', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let other: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, member, moderator, guest } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, member, moderator, guest]);
    other = await createChannel(t, 'other', [owner, admin, member, moderator]);
    secret = await createChannel(t, 'secret', [owner, member], { inviteOnly: true, historyPublicToSubscribers: true });
  });
  afterAll(() => t.close());

  let topicNo = 0;
  const freshTopic = () => `topic ${++topicNo}`;
  const send = async (topic: string, content = 'hello', user = t.cast.member, to = 'general') =>
    (await t.api.post('/messages', user, { type: 'channel', to, topic, content })).body.id as number;
  const sendMany = async (topic: string, n: number, to = 'general') => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push(await send(topic, `m${i}`, t.cast.member, to));
    return ids;
  };
  const rowsOf = (ids: number[]) => t.ctx.db('messages').whereIn('id', ids).orderBy('id').select('id', 'topic', 'recipient_id', 'type');
  const topicOf = async (id: number) => (await t.ctx.db('messages').where({ id }).first('topic'))!.topic as string;
  const topicIds = async (recipientId: number, topic: string) =>
    (await t.ctx.db('messages').where({ recipient_id: recipientId, topic_key: topic.toLowerCase() }).orderBy('id').pluck('id')).map(Number);
  const setRealm = (values: Record<string, unknown>) => t.ctx.db('realms').where({ id: t.realmId }).update(values);
  const setChannel = (id: number, values: Record<string, unknown>) => t.ctx.db('channels').where({ id }).update(values);
  const group = async (name: string) => (await t.ctx.db('user_groups').where({ realm_id: t.realmId, name }).first('id'))!.id as number;
  const backdate = (ids: number[], seconds: number) =>
    t.ctx
      .db('messages')
      .whereIn('id', ids)
      .update({ date_sent: Math.floor(Date.now() / 1000) - seconds });
  const capture = () => {
    const seen: Delivery[] = [];
    const off = t.ctx.bus.subscribe((d) => seen.push(d));
    return { seen, off };
  };
  const notices = async (recipientId: number, topic: string) => {
    const bot = await t.ctx.db('users').where({ realm_id: t.realmId, email: 'notification-bot@parley.invalid' }).first('id');
    if (!bot) return [];
    return t.ctx
      .db('messages')
      .where({ recipient_id: recipientId, topic_key: topic.toLowerCase(), sender_id: bot.id })
      .orderBy('id')
      .select('content', 'type');
  };
  const withRealm = async (values: Record<string, unknown>, work: () => Promise<void>) => {
    const before = await t.ctx
      .db('realms')
      .where({ id: t.realmId })
      .first(...Object.keys(values));
    await setRealm(values);
    try {
      await work();
    } finally {
      await setRealm(before!);
    }
  };

  describe('topic edits', () => {
    it('change_one moves only the target; edit history and last_moved_timestamp, no last_edit_timestamp', async () => {
      const topic = freshTopic();
      const [a, b, c] = await sendMany(topic, 3);
      const res = await t.api.patch(`/messages/${b}`, t.cast.member, { topic: 'renamed one' });
      expect(res.body).toEqual({ result: 'success', msg: '', detached_uploads: [] });
      expect((await rowsOf([a!, b!, c!])).map((r) => r.topic)).toEqual([topic, 'renamed one', topic]);
      const m = (await t.api.get(`/messages/${b}`, t.cast.member)).body.message;
      expect(m.subject).toBe('renamed one');
      expect(m.last_edit_timestamp).toBeUndefined();
      expect(m.last_moved_timestamp).toEqual(expect.any(Number));
      expect(m.edit_history).toEqual([
        { user_id: t.cast.member.id, timestamp: m.last_moved_timestamp, prev_topic: topic, topic: 'renamed one' },
      ]);
    });

    it('change_later moves the target and what follows; change_all the whole topic', async () => {
      const topic = freshTopic();
      const ids = await sendMany(topic, 4);
      await t.api.patch(`/messages/${ids[2]}`, t.cast.member, { topic: `${topic} later`, propagate_mode: 'change_later' });
      expect(await topicIds(general.recipient_id, topic)).toEqual(ids.slice(0, 2));
      // The new-thread notice follows (send_notification_to_new_thread defaults to true).
      expect(await topicIds(general.recipient_id, `${topic} later`)).toEqual([...ids.slice(2), expect.any(Number)]);
      const all = freshTopic();
      const more = await sendMany(all, 3);
      await t.api.patch(`/messages/${more[1]}`, t.cast.member, {
        topic: `${all} whole`,
        propagate_mode: 'change_all',
        send_notification_to_new_thread: false,
      });
      expect(await topicIds(general.recipient_id, all)).toEqual([]);
      expect(await topicIds(general.recipient_id, `${all} whole`)).toEqual(more);
      // Every moved message records the move.
      expect(await t.ctx.db('message_edits').whereIn('message_id', more).count({ n: '*' }).first()).toEqual({ n: 3 });
    });

    it('narrows and search see the new topic at once, and unread messages stay unread', async () => {
      const topic = freshTopic();
      const ids = await sendMany(topic, 2);
      await t.api.patch(`/messages/${ids[0]}`, t.cast.member, { topic: 'xylophonezz', propagate_mode: 'change_all' });
      const narrow = async (terms: unknown[]) =>
        (await t.api.get('/messages', t.cast.owner, { anchor: 'newest', num_before: 50, num_after: 0, narrow: terms })).body.messages.map(
          (m: any) => m.id,
        );
      expect(
        await narrow([
          { operator: 'channel', operand: 'general' },
          { operator: 'topic', operand: 'xylophonezz' },
        ]),
      ).toEqual(expect.arrayContaining(ids));
      expect(await narrow([{ operator: 'search', operand: 'xylophonezz' }])).toEqual(expect.arrayContaining(ids));
      expect(await narrow([{ operator: 'topic', operand: topic }])).toEqual([]);
      expect(
        await narrow([
          { operator: 'topic', operand: 'xylophonezz' },
          { operator: 'is', operand: 'unread' },
        ]),
      ).toEqual(expect.arrayContaining(ids));
    });

    it('truncates a topic beyond max_topic_length', async () => {
      const id = await send(freshTopic());
      await t.api.patch(`/messages/${id}`, t.cast.member, { topic: 'y'.repeat(70) });
      expect(await topicOf(id)).toBe('y'.repeat(57) + '...');
    });

    it('follows can_move_messages_between_topics_group, or the channel’s can_move_messages_within_channel_group', async () => {
      const topic = freshTopic();
      const id = await send(topic);
      const nobody = await group('role:nobody');
      await withRealm({ can_move_messages_between_topics_group: nobody }, async () => {
        const res = await t.api.patch(`/messages/${id}`, t.cast.member, { topic: 'denied' });
        expect(res.body).toEqual({ result: 'error', msg: "You don't have permission to edit this message", code: 'BAD_REQUEST' });
        expect(await topicOf(id)).toBe(topic);
        // Organization administrators may move within any channel.
        expect((await t.api.patch(`/messages/${id}`, t.cast.admin, { topic: 'by admin' })).status).toBe(200);
        await setChannel(general.id, { can_move_messages_within_channel_group: await group('role:members') });
        try {
          expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: 'by channel permission' })).status).toBe(200);
        } finally {
          await setChannel(general.id, { can_move_messages_within_channel_group: nobody });
        }
      });
    });

    it('applies move_messages_within_stream_limit_seconds to members, not moderators', async () => {
      const topic = freshTopic();
      const id = await send(topic);
      await backdate([id], 200);
      await withRealm({ move_messages_within_stream_limit_seconds: 100 }, async () => {
        const res = await t.api.patch(`/messages/${id}`, t.cast.member, { topic: 'late' });
        expect(res.body.msg).toBe("The time limit for editing this message's topic has passed.");
        expect(await topicOf(id)).toBe(topic);
        expect((await t.api.patch(`/messages/${id}`, t.cast.moderator, { topic: 'by moderator' })).status).toBe(200);
      });
    });

    it('refuses change_all past the time limit with MOVE_MESSAGES_TIME_LIMIT_EXCEEDED, moving nothing', async () => {
      const topic = freshTopic();
      const ids = await sendMany(topic, 5);
      await backdate(ids.slice(0, 3), 1000);
      await withRealm({ move_messages_within_stream_limit_seconds: 600 }, async () => {
        const res = await t.api.patch(`/messages/${ids[4]}`, t.cast.member, { topic: 'all of it', propagate_mode: 'change_all' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          result: 'error',
          msg: 'You only have permission to move the 2/5 most recent messages in this topic.',
          code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
          first_message_id_allowed_to_move: ids[3],
          total_messages_in_topic: 5,
          total_messages_allowed_to_move: 2,
        });
        expect(await topicIds(general.recipient_id, topic)).toEqual(ids);
        expect(await t.ctx.db('message_edits').whereIn('message_id', ids).first()).toBeUndefined();
        // The suggested retry works.
        const retry = await t.api.patch(`/messages/${ids[3]}`, t.cast.member, { topic: 'recent part', propagate_mode: 'change_later' });
        expect(retry.status).toBe(200);
        expect(await topicIds(general.recipient_id, 'recent part')).toEqual([...ids.slice(3), expect.any(Number)]);
        // Moderators are not bound.
        expect(
          (await t.api.patch(`/messages/${ids[0]}`, t.cast.moderator, { topic: 'old part', propagate_mode: 'change_all' })).status,
        ).toBe(200);
      });
    });

    it('applies the destination topics_policy', async () => {
      const id = await send(freshTopic());
      await withRealm({ topics_policy: 'disable_empty_topic' }, async () => {
        const res = await t.api.patch(`/messages/${id}`, t.cast.member, { topic: '' });
        expect(res.body.msg).toBe('Topics are required in this organization.');
      });
      await setChannel(general.id, { topics_policy: 'empty_topic_only' });
      try {
        expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: 'named' })).body.msg).toBe(
          'Only the general chat topic is allowed in this channel.',
        );
      } finally {
        await setChannel(general.id, { topics_policy: 'inherit' });
      }
      expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: 'general chat' })).status).toBe(200);
      expect(await topicOf(id)).toBe('');
    });

    it('posts the old- and new-thread notices as the Notification Bot', async () => {
      const topic = freshTopic();
      const ids = await sendMany(topic, 2);
      await t.api.patch(`/messages/${ids[0]}`, t.cast.member, {
        topic: `${topic} moved`,
        propagate_mode: 'change_all',
        send_notification_to_old_thread: true,
      });
      const who = `@_**${t.cast.member.full_name}|${t.cast.member.id}**`;
      expect(await notices(general.recipient_id, `${topic} moved`)).toEqual([
        { content: `This topic was moved here from #**general>${topic}** by ${who}.`, type: 1 },
      ]);
      expect(await notices(general.recipient_id, topic)).toEqual([
        { content: `This topic was moved to #**general>${topic} moved** by ${who}.`, type: 1 },
      ]);
      // The actor's copy of a notice about their own action is read; others' are not.
      const [breadcrumb] = await topicIds(general.recipient_id, topic);
      const readOf = async (userId: number) =>
        Number((await t.ctx.db('user_messages').where({ user_id: userId, message_id: breadcrumb }).first('flags'))!.flags) & 1;
      expect([await readOf(t.cast.member.id), await readOf(t.cast.owner.id)]).toEqual([1, 0]);
      const one = freshTopic();
      const [x] = await sendMany(one, 2);
      await t.api.patch(`/messages/${x}`, t.cast.member, { topic: `${one} part`, send_notification_to_old_thread: true });
      expect((await notices(general.recipient_id, one))[0].content).toBe(
        `A message was moved from this topic to #**general>${one} part** by ${who}.`,
      );
      expect((await notices(general.recipient_id, `${one} part`))[0].content).toMatch(
        /^\[A message\]\(\/#narrow\/channel\/\d+-general\/topic\/.+\/near\/\d+\) was moved here from/,
      );
    });
  });

  describe('resolving', () => {
    it('resolves with a resolve notice (type 2) and no move notice; unresolves likewise; not a move', async () => {
      const topic = freshTopic();
      const admin = await t.ctx.db('users').where({ id: t.cast.admin.id }).first('settings');
      const settings = { ...JSON.parse(admin!.settings || '{}'), resolved_topic_notice_auto_read_policy: 'never' };
      await t.ctx
        .db('users')
        .where({ id: t.cast.admin.id })
        .update({ settings: JSON.stringify(settings) });
      const ids = await sendMany(topic, 2);
      const res = await t.api.patch(`/messages/${ids[0]}`, t.cast.member, { topic: `✔ ${topic}`, propagate_mode: 'change_all' });
      expect(res.status).toBe(200);
      expect(await topicIds(general.recipient_id, `✔ ${topic}`)).toHaveLength(3);
      const who = `@_**${t.cast.member.full_name}|${t.cast.member.id}**`;
      expect(await notices(general.recipient_id, `✔ ${topic}`)).toEqual([
        { content: `${who} has marked this topic as resolved.`, type: 2 },
      ]);
      // The notice starts read, except for users whose resolved_topic_notice_auto_read_policy is "never".
      const noticeId = (await topicIds(general.recipient_id, `✔ ${topic}`)).at(-1)!;
      const readOf = async (userId: number) =>
        Number((await t.ctx.db('user_messages').where({ user_id: userId, message_id: noticeId }).first('flags'))!.flags) & 1;
      expect([await readOf(t.cast.member.id), await readOf(t.cast.owner.id), await readOf(t.cast.admin.id)]).toEqual([1, 1, 0]);
      const m = (await t.api.get(`/messages/${ids[0]}`, t.cast.member)).body.message;
      expect(m.last_moved_timestamp).toBeUndefined();
      // Not a move, but an edit-history entry all the same.
      expect(m.edit_history).toEqual([expect.objectContaining({ user_id: t.cast.member.id, prev_topic: topic, topic: `✔ ${topic}` })]);
      const resolved = await t.api.get('/messages', t.cast.member, {
        anchor: 'newest',
        num_before: 50,
        num_after: 0,
        narrow: [{ operator: 'is', operand: 'resolved' }],
      });
      expect(resolved.body.messages.map((x: any) => x.id)).toEqual(expect.arrayContaining(ids));
      await t.api.patch(`/messages/${ids[0]}`, t.cast.member, { topic, propagate_mode: 'change_all' });
      expect((await notices(general.recipient_id, topic)).map((n) => n.content)).toEqual([
        `${who} has marked this topic as resolved.`,
        `${who} has marked this topic as unresolved.`,
      ]);
    });

    it("shows only moves in GET /messages' edit_history under the 'moves' policy, without content", async () => {
      const topic = freshTopic();
      const id = await send(topic, 'first words');
      expect((await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'second words' })).status).toBe(200);
      expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: `${topic} moved` })).status).toBe(200);
      const history = async () => (await t.api.get(`/messages/${id}`, t.cast.owner)).body.message.edit_history;
      expect(await history()).toHaveLength(2);
      await withRealm({ message_edit_history_visibility_policy: 'moves' }, async () => {
        const entries = await history();
        expect(entries).toEqual([{ user_id: t.cast.member.id, timestamp: expect.any(Number), prev_topic: topic, topic: `${topic} moved` }]);
        expect(JSON.stringify(entries)).not.toContain('first words');
      });
      await withRealm({ message_edit_history_visibility_policy: 'none' }, async () => {
        expect(await history()).toBeUndefined();
      });
    });

    it('refuses to resolve the empty topic', async () => {
      const id = await send('');
      for (const topic of ['✔ ', '✔ general chat']) {
        const res = await t.api.patch(`/messages/${id}`, t.cast.member, { topic, propagate_mode: 'change_all' });
        expect(res.body.msg).toBe('General chat cannot be marked as resolved');
      }
      expect(await topicOf(id)).toBe('');
    });

    it('counts resolving as its own permission (can_resolve_topics_group)', async () => {
      const topic = freshTopic();
      const id = await send(topic);
      const nobody = await group('role:nobody');
      await withRealm({ can_resolve_topics_group: nobody }, async () => {
        const res = await t.api.patch(`/messages/${id}`, t.cast.member, { topic: `✔ ${topic}`, propagate_mode: 'change_all' });
        expect(res.body.msg).toBe("You don't have permission to resolve topics in this channel.");
        expect(await topicOf(id)).toBe(topic);
        // A rename is still allowed (between-topics permission).
        expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: `${topic} renamed` })).status).toBe(200);
      });
      await withRealm({ can_move_messages_between_topics_group: nobody }, async () => {
        expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: `✔ ${topic} renamed` })).status).toBe(200);
      });
    });
  });

  describe('channel moves', () => {
    it('moves a topic to another channel: events, first_message_id, access rules', async () => {
      const { seen, off } = capture();
      try {
        // A fresh pair of channels so first_message_id changes visibly.
        const from = await createChannel(t, 'from here', [t.cast.owner, t.cast.member, t.cast.guest, t.cast.admin]);
        const to = await createChannel(t, 'to there', [t.cast.owner, t.cast.member]);
        const ids: number[] = [];
        for (let i = 0; i < 3; i++) ids.push(await send('travel', `t${i}`, t.cast.member, 'from here'));
        seen.length = 0;
        const res = await t.api.patch(`/messages/${ids[0]}`, t.cast.member, {
          stream_id: to.id,
          propagate_mode: 'change_all',
          send_notification_to_new_thread: false,
        });
        expect(res.status).toBe(200);
        expect((await rowsOf(ids)).every((r) => r.recipient_id === to.recipient_id)).toBe(true);
        const channels = await t.ctx.db('channels').whereIn('id', [from.id, to.id]).orderBy('id').pluck('first_message_id');
        expect(channels.map((v) => (v === null ? null : Number(v)))).toEqual([null, ids[0]]);
        const update = seen.find((d) => d.event.type === 'update_message')!;
        expect(update.event).toMatchObject({
          message_ids: ids,
          stream_id: from.id,
          new_stream_id: to.id,
          propagate_mode: 'change_all',
          orig_subject: 'travel',
        });
        expect(update.event.subject).toBeUndefined();
        // Public destination: only guests who are not subscribed lose access, and get delete_message.
        const deleted = seen.find((d) => d.event.type === 'delete_message')!;
        expect(deleted.userIds).toEqual([t.cast.guest.id]);
        expect(deleted.event).toEqual({
          type: 'delete_message',
          message_ids: ids,
          message_type: 'stream',
          stream_id: from.id,
          topic: 'travel',
        });
        expect(update.userIds).not.toContain(t.cast.guest.id);
        expect(await t.ctx.db('user_messages').where({ user_id: t.cast.guest.id }).whereIn('message_id', ids).first()).toBeUndefined();
        const firstIds = seen.filter((d) => d.event.type === 'stream').map((d) => [d.event.stream_id, d.event.value]);
        expect(firstIds).toEqual([
          [from.id, null],
          [to.id, ids[0]],
        ]);
        const m = (await t.api.get(`/messages/${ids[1]}`, t.cast.member)).body.message;
        expect(m.edit_history[0]).toMatchObject({ prev_stream: from.id, stream: to.id });
        expect(m.display_recipient).toBe('to there');
      } finally {
        off();
      }
    });

    it('moving into a private channel takes the messages from those not subscribed there', async () => {
      const topic = freshTopic();
      const id = await send(topic);
      const { seen, off } = capture();
      try {
        const res = await t.api.patch(`/messages/${id}`, t.cast.owner, { stream_id: secret.id, send_notification_to_new_thread: false });
        expect(res.status).toBe(200);
        const holders = (await t.ctx.db('user_messages').where({ message_id: id }).pluck('user_id')).map(Number).sort();
        expect(holders).toEqual([t.cast.owner.id, t.cast.member.id].sort());
        const deleted = seen.find((d) => d.event.type === 'delete_message')!;
        expect([...deleted.userIds].sort()).toEqual([t.cast.admin.id, t.cast.moderator.id, t.cast.guest.id].sort());
        expect((await t.api.get(`/messages/${id}`, t.cast.moderator)).body.msg).toBe('Invalid message(s)');
      } finally {
        off();
      }
    });

    it('refuses moves the caller may not make, changing nothing', async () => {
      const topic = freshTopic();
      const id = await send(topic);
      const check = async (user: UserRow, fields: Record<string, unknown>, msg: string) => {
        const res = await t.api.patch(`/messages/${id}`, user, fields);
        expect([res.status, res.body.msg]).toEqual([400, msg]);
        const row = await t.ctx.db('messages').where({ id }).first('recipient_id', 'topic');
        expect([row!.recipient_id, row!.topic]).toEqual([general.recipient_id, topic]);
      };
      await check(t.cast.member, { stream_id: 987654 }, 'Invalid channel ID');
      await check(t.cast.moderator, { stream_id: secret.id }, 'Invalid channel ID');
      await check(t.cast.guest, { stream_id: other.id }, 'Invalid channel ID');
      const nobody = await group('role:nobody');
      await withRealm({ can_move_messages_between_channels_group: nobody }, () =>
        check(t.cast.member, { stream_id: other.id }, "You don't have permission to move this message"),
      );
      await setChannel(other.id, { can_send_message_group: await group('role:administrators') });
      try {
        await check(t.cast.member, { stream_id: other.id }, 'You do not have permission to post in this channel.');
      } finally {
        await setChannel(other.id, { can_send_message_group: await group('role:everyone') });
      }
      await backdate([id], 500);
      await withRealm({ move_messages_between_streams_limit_seconds: 100 }, () =>
        check(t.cast.member, { stream_id: other.id }, "The time limit for editing this message's channel has passed"),
      );
    });
  });

  describe('protected history', () => {
    it('moves, counts and limits only the messages the caller can access', async () => {
      const vault = await createChannel(t, 'vault', [t.cast.owner], { inviteOnly: true, historyPublicToSubscribers: false });
      const early: number[] = [];
      for (let i = 0; i < 2; i++) early.push(await send('plans', `early ${i}`, t.cast.owner, 'vault'));
      await subscribe(t, vault, [t.cast.member]);
      const late: number[] = [];
      for (let i = 0; i < 3; i++) late.push(await send('plans', `late ${i}`, t.cast.owner, 'vault'));
      await backdate([late[0]!], 1000);
      await withRealm({ move_messages_within_stream_limit_seconds: 600 }, async () => {
        const res = await t.api.patch(`/messages/${late[2]}`, t.cast.member, { topic: 'moved plans', propagate_mode: 'change_all' });
        expect(res.body).toMatchObject({
          code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
          first_message_id_allowed_to_move: late[1],
          total_messages_in_topic: 3,
          total_messages_allowed_to_move: 2,
        });
      });
      const res = await t.api.patch(`/messages/${late[2]}`, t.cast.member, {
        topic: 'moved plans',
        propagate_mode: 'change_all',
        send_notification_to_old_thread: true,
      });
      expect(res.status).toBe(200);
      expect(await topicIds(vault.recipient_id, 'plans')).toEqual([...early, expect.any(Number)]);
      expect(await topicIds(vault.recipient_id, 'moved plans')).toEqual([...late, expect.any(Number)]);
      // The whole topic as the member sees it moved: the notices say so without revealing the rest.
      const who = `@_**${t.cast.member.full_name}|${t.cast.member.id}**`;
      expect((await notices(vault.recipient_id, 'moved plans'))[0].content).toBe(
        `This topic was moved here from #**vault>plans** by ${who}.`,
      );
    });
  });
});
