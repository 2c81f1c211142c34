import { eachDatabase } from './support/databases';
import { pending, register, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import type { TestServer } from './support/server';

eachDatabase('topic visibility (user_topics)', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let open: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  beforeAll(async () => {
    ({ t, general, open, secret } = await startEventsServer(dialect));
  });
  afterAll(async () => {
    await stopEventsServer(t);
  });

  const rowsOf = (userId: number) =>
    t.ctx
      .db('user_topics')
      .where({ user_id: userId })
      .orderBy('id')
      .select('channel_id', 'recipient_id', 'topic', 'topic_key', 'visibility_policy')
      .then((rows: any[]) => rows.map((r) => ({ ...r, visibility_policy: Number(r.visibility_policy) })));
  const countAll = async () => Number(((await t.ctx.db('user_topics').count('* as n')) as Array<{ n: number }>)[0]!.n);
  const refusal = (msg: string, extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code: 'BAD_REQUEST', ...extra });
  const setPolicy = (user = t.cast.member, stream_id: number, topic: string, visibility_policy: number) =>
    t.api.post('/user_topics', user, { stream_id, topic, visibility_policy });
  const withoutIds = (events: Array<Record<string, any>>) => events.map(({ id: _, ...e }) => e);
  const clear = async () => {
    await t.ctx.db('user_topics').delete();
  };

  describe('POST /user_topics', () => {
    beforeEach(clear);

    it('stores each policy for the topic, with the channel and the time, and sends user_topic and muted_topics to the caller alone', async () => {
      const mine = await register(t, t.cast.member, { event_types: ['user_topic', 'muted_topics'] });
      const other = await register(t, t.cast.admin, { event_types: ['user_topic', 'muted_topics'] });
      const before = Math.floor(Date.now() / 1000);
      const res = await setPolicy(t.cast.member, general.id, 'Dinner', 1);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(await rowsOf(t.cast.member.id)).toEqual([
        { channel_id: general.id, recipient_id: general.recipient_id, topic: 'Dinner', topic_key: 'dinner', visibility_policy: 1 },
      ]);
      const row = await t.ctx.db('user_topics').where({ user_id: t.cast.member.id }).first('last_updated');
      const at = Number(row!.last_updated);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(withoutIds(await pending(t, mine))).toEqual([
        { type: 'muted_topics', muted_topics: [['general', 'Dinner', at]] },
        { type: 'user_topic', stream_id: general.id, topic_name: 'Dinner', last_updated: at, visibility_policy: 1 },
      ]);
      for (const policy of [2, 3]) {
        expect((await setPolicy(t.cast.member, general.id, 'Dinner', policy)).status).toBe(200);
        expect((await rowsOf(t.cast.member.id)).map((r) => r.visibility_policy)).toEqual([policy]);
        const events = withoutIds(await pending(t, mine));
        // Unmuted and followed topics are not muted: the legacy list is empty.
        expect(events).toEqual([
          { type: 'muted_topics', muted_topics: [] },
          expect.objectContaining({ type: 'user_topic', stream_id: general.id, topic_name: 'Dinner', visibility_policy: policy }),
        ]);
      }
      // The admin's queue is live (its own change reaches it) but got none of the member's.
      await setPolicy(t.cast.admin, general.id, 'Lunch', 3);
      expect((await pending(t, other)).map((e) => [e.type, e.topic_name])).toEqual([
        ['muted_topics', undefined],
        ['user_topic', 'Lunch'],
      ]);
    });

    it('matches the topic case-insensitively: one row per topic, taking the case last sent', async () => {
      await setPolicy(t.cast.member, general.id, 'Dinner', 1);
      await setPolicy(t.cast.member, general.id, 'DINNER', 3);
      expect(await rowsOf(t.cast.member.id)).toEqual([
        { channel_id: general.id, recipient_id: general.recipient_id, topic: 'DINNER', topic_key: 'dinner', visibility_policy: 3 },
      ]);
      await setPolicy(t.cast.member, general.id, 'dInNeR', 0);
      expect(await rowsOf(t.cast.member.id)).toEqual([]);
    });

    it('policy 0 removes the row and says so with visibility_policy 0', async () => {
      await setPolicy(t.cast.member, general.id, 'Dinner', 1);
      const c = await register(t, t.cast.member, { event_types: ['user_topic'] });
      expect((await setPolicy(t.cast.member, general.id, 'dinner', 0)).status).toBe(200);
      expect(await rowsOf(t.cast.member.id)).toEqual([]);
      expect(withoutIds(await pending(t, c))).toEqual([
        { type: 'user_topic', stream_id: general.id, topic_name: 'dinner', last_updated: expect.any(Number), visibility_policy: 0 },
      ]);
    });

    it('setting the current policy, or removing an absent one, succeeds and changes and sends nothing', async () => {
      await setPolicy(t.cast.member, general.id, 'Dinner', 1);
      const row = await t.ctx.db('user_topics').where({ user_id: t.cast.member.id }).first();
      const c = await register(t, t.cast.member, { event_types: ['user_topic', 'muted_topics'] });
      expect((await setPolicy(t.cast.member, general.id, 'DINNER', 1)).body).toEqual({ result: 'success', msg: '' });
      expect((await setPolicy(t.cast.member, general.id, 'Breakfast', 0)).body).toEqual({ result: 'success', msg: '' });
      expect(await t.ctx.db('user_topics').where({ user_id: t.cast.member.id })).toEqual([row]);
      expect(await pending(t, c)).toEqual([]);
      // The queue is live: a real change arrives.
      await setPolicy(t.cast.member, general.id, 'Dinner', 3);
      expect((await pending(t, c)).map((e) => e.type)).toEqual(['muted_topics', 'user_topic']);
    });

    it('a topic needs no message, and bots have preferences too', async () => {
      expect((await setPolicy(t.cast.bot, general.id, 'never used', 3)).status).toBe(200);
      expect((await rowsOf(t.cast.bot.id)).map((r) => r.topic)).toEqual(['never used']);
    });

    it('"general chat" and "" both name the empty topic', async () => {
      await setPolicy(t.cast.member, general.id, 'general chat', 1);
      expect((await rowsOf(t.cast.member.id)).map((r) => r.topic)).toEqual(['']);
      await setPolicy(t.cast.member, general.id, '', 3);
      expect((await rowsOf(t.cast.member.id)).map((r) => [r.topic, r.visibility_policy])).toEqual([['', 3]]);
    });

    it('a policy can be set in a public channel one is not subscribed to (members), and in a private one while subscribed', async () => {
      expect((await setPolicy(t.cast.member, open.id, 'x', 1)).status).toBe(200);
      expect((await setPolicy(t.cast.moderator, secret.id, 'y', 3)).status).toBe(200);
      expect((await rowsOf(t.cast.member.id)).map((r) => r.channel_id)).toEqual([open.id]);
      expect((await rowsOf(t.cast.moderator.id)).map((r) => r.channel_id)).toEqual([secret.id]);
    });

    it.each([
      ['a missing channel', () => ({ user: t.cast.member, stream_id: 999999 })],
      ['a private channel the caller is not subscribed to', () => ({ user: t.cast.member, stream_id: secret.id })],
      ['a private channel, for an administrator who is not subscribed', () => ({ user: t.cast.admin, stream_id: secret.id })],
      ['a public channel a guest is not subscribed to', () => ({ user: t.cast.guest, stream_id: open.id })],
    ])('setting a policy in %s is "Invalid channel ID", storing nothing', async (_name, who) => {
      const { user, stream_id } = who();
      for (const policy of [1, 2, 3]) {
        const res = await setPolicy(user, stream_id, 'x', policy);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(refusal('Invalid channel ID'));
      }
      expect(await countAll()).toBe(0);
    });

    it('an archived channel takes no new policy', async () => {
      const { createChannel } = await import('./support/server');
      const old = await createChannel(t, 'archived-ut', [t.cast.member]);
      await t.ctx.db('channels').where({ id: old.id }).update({ deactivated: true });
      const res = await setPolicy(t.cast.member, old.id, 'x', 1);
      expect(res.body).toEqual(refusal('Invalid channel ID'));
      expect(await countAll()).toBe(0);
    });

    it('removing (0) needs only a channel of the organization: a topic muted before losing access can be cleared', async () => {
      const { createChannel, subscribe } = await import('./support/server');
      const hidden = await createChannel(t, 'hidden-ut', [t.cast.owner], { inviteOnly: true });
      await subscribe(t, hidden, [t.cast.member]);
      await setPolicy(t.cast.member, hidden.id, 'x', 1);
      await t.ctx.db('subscriptions').where({ user_id: t.cast.member.id, recipient_id: hidden.recipient_id }).update({ active: false });
      expect((await setPolicy(t.cast.member, hidden.id, 'x', 1)).body).toEqual(refusal('Invalid channel ID'));
      expect((await setPolicy(t.cast.member, hidden.id, 'x', 0)).status).toBe(200);
      expect(await rowsOf(t.cast.member.id)).toEqual([]);
      const missing = await setPolicy(t.cast.member, 999999, 'x', 0);
      expect(missing.body).toEqual(refusal('Invalid channel ID'));
    });

    it.each([
      ['visibility_policy 4', { stream_id: 0, topic: 'x', visibility_policy: 4 }, refusal('Invalid visibility_policy')],
      ['visibility_policy -1', { stream_id: 0, topic: 'x', visibility_policy: -1 }, refusal('Invalid visibility_policy')],
      [
        'a topic of 61 characters',
        { stream_id: 0, topic: 'é'.repeat(61), visibility_policy: 1 },
        refusal('topic is too long (limit: 60 characters)'),
      ],
      [
        'no topic',
        { stream_id: 0, visibility_policy: 1 },
        { result: 'error', msg: "Missing 'topic' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'topic' },
      ],
      [
        'no visibility_policy',
        { stream_id: 0, topic: 'x' },
        { result: 'error', msg: "Missing 'visibility_policy' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'visibility_policy' },
      ],
      ['a stream_id that is not a number', { stream_id: 'abc', topic: 'x', visibility_policy: 1 }, refusal('stream_id is not valid JSON')],
    ])('refuses %s', async (_name, fields, body) => {
      const res = await t.api.post('/user_topics', t.cast.member, {
        ...fields,
        stream_id: fields.stream_id === 0 ? general.id : fields.stream_id,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(body);
      expect(await countAll()).toBe(0);
    });

    it('takes a topic of exactly 60 characters', async () => {
      expect((await setPolicy(t.cast.member, general.id, '😀'.repeat(60), 1)).status).toBe(200);
      expect((await rowsOf(t.cast.member.id)).map((r) => r.topic)).toEqual(['😀'.repeat(60)]);
    });
  });

  describe('PATCH /users/me/subscriptions/muted_topics (legacy)', () => {
    beforeEach(clear);
    const mute = (fields: Record<string, unknown>, user = t.cast.member) =>
      t.api.patch('/users/me/subscriptions/muted_topics', user, fields);

    it('add mutes by channel name or ID, remove drops the policy; repeating either succeeds and sends nothing', async () => {
      const c = await register(t, t.cast.member, { event_types: ['user_topic', 'muted_topics'] });
      expect((await mute({ stream: 'General', topic: 'Dinner', op: 'add' })).body).toEqual({ result: 'success', msg: '' });
      expect((await rowsOf(t.cast.member.id)).map((r) => [r.channel_id, r.topic, r.visibility_policy])).toEqual([
        [general.id, 'Dinner', 1],
      ]);
      expect((await pending(t, c)).map((e) => [e.type, e.visibility_policy])).toEqual([
        ['muted_topics', undefined],
        ['user_topic', 1],
      ]);
      expect((await mute({ stream_id: general.id, topic: 'dinner', op: 'add' })).status).toBe(200);
      expect(await pending(t, c)).toEqual([]);
      expect((await mute({ stream_id: general.id, topic: 'DINNER', op: 'remove' })).status).toBe(200);
      expect(await rowsOf(t.cast.member.id)).toEqual([]);
      expect((await pending(t, c)).map((e) => [e.type, e.visibility_policy])).toEqual([
        ['muted_topics', undefined],
        ['user_topic', 0],
      ]);
      expect((await mute({ stream: 'general', topic: 'Dinner', op: 'remove' })).status).toBe(200);
      expect(await pending(t, c)).toEqual([]);
    });

    it('add replaces an unmuted or followed policy with muted', async () => {
      await setPolicy(t.cast.member, general.id, 'Dinner', 3);
      await mute({ stream_id: general.id, topic: 'Dinner', op: 'add' });
      expect((await rowsOf(t.cast.member.id)).map((r) => r.visibility_policy)).toEqual([1]);
    });

    it.each([
      ['neither stream_id nor stream', () => ({ topic: 'x', op: 'add' }), refusal("Missing 'stream_id' argument")],
      [
        'both stream_id and stream',
        () => ({ stream_id: general.id, stream: 'general', topic: 'x', op: 'add' }),
        refusal('Unsupported parameter combination: stream_id, stream', { parameters: 'stream_id, stream' }),
      ],
      ['add in a missing channel (by ID)', () => ({ stream_id: 999999, topic: 'x', op: 'add' }), refusal('Invalid channel ID')],
      [
        'add in a missing channel (by name)',
        () => ({ stream: 'nowhere', topic: 'x', op: 'add' }),
        refusal("Invalid channel name 'nowhere'"),
      ],
      [
        'add in a private channel the caller is not in',
        () => ({ stream: 'secret', topic: 'x', op: 'add' }),
        refusal("Invalid channel name 'secret'"),
      ],
      [
        'add by ID in a private channel the caller is not in',
        () => ({ stream_id: secret.id, topic: 'x', op: 'add' }),
        refusal('Invalid channel ID'),
      ],
      ['remove in a missing channel (by name)', () => ({ stream: 'nowhere', topic: 'x', op: 'remove' }), refusal('Topic is not muted')],
      ['remove in a missing channel (by ID)', () => ({ stream_id: 999999, topic: 'x', op: 'remove' }), refusal('Topic is not muted')],
      ['an unknown op', () => ({ stream_id: general.id, topic: 'x', op: 'toggle' }), refusal('Invalid op')],
      [
        'a topic of 61 characters',
        () => ({ stream_id: general.id, topic: 'a'.repeat(61), op: 'add' }),
        refusal('topic is too long (limit: 60 characters)'),
      ],
    ])('refuses %s, storing nothing', async (_name, fields, body) => {
      const res = await mute(fields());
      expect(res.status).toBe(400);
      expect(res.body).toEqual(body);
      expect(await countAll()).toBe(0);
    });
  });

  describe('POST /register', () => {
    beforeEach(clear);

    it('user_topics lists the policies of channels that are not archived; muted_topics the muted ones, in the legacy form', async () => {
      await setPolicy(t.cast.member, general.id, 'Dinner', 1);
      await setPolicy(t.cast.member, general.id, 'Lunch', 3);
      await setPolicy(t.cast.member, open.id, 'Tea', 2);
      await setPolicy(t.cast.admin, general.id, 'Admin only', 1);
      const { createChannel } = await import('./support/server');
      const old = await createChannel(t, 'archived-reg', [t.cast.member]);
      await setPolicy(t.cast.member, old.id, 'Gone', 1);
      await t.ctx.db('channels').where({ id: old.id }).update({ deactivated: true });
      const rows = await t.ctx.db('user_topics').where({ user_id: t.cast.member.id }).orderBy('id').select('topic', 'last_updated');
      const at = (topic: string) => Number(rows.find((r: any) => r.topic === topic)!.last_updated);

      const c = await register(t, t.cast.member, { fetch_event_types: ['user_topic', 'muted_topics'] });
      expect(c.state.user_topics).toEqual([
        { stream_id: general.id, topic_name: 'Dinner', last_updated: at('Dinner'), visibility_policy: 1 },
        { stream_id: general.id, topic_name: 'Lunch', last_updated: at('Lunch'), visibility_policy: 3 },
        { stream_id: open.id, topic_name: 'Tea', last_updated: at('Tea'), visibility_policy: 2 },
      ]);
      // Asked for with user_topic, the legacy list is left out, as Zulip does; alone, it comes.
      expect(c.state).not.toHaveProperty('muted_topics');
      const legacy = await register(t, t.cast.member, { fetch_event_types: ['muted_topics'] });
      expect(legacy.state.muted_topics).toEqual([['general', 'Dinner', at('Dinner')]]);
      const only = await register(t, t.cast.member, { fetch_event_types: ['realm_emoji'] });
      expect(only.state.user_topics).toBeUndefined();
      expect(only.state.muted_topics).toBeUndefined();
    });

    it('register reads the policies in the same number of statements for 1 and for 30 of them', async () => {
      const fields = { fetch_event_types: ['user_topic', 'muted_topics', 'message', 'update_message_flags'] };
      await setPolicy(t.cast.member, general.id, 'only one', 1);
      await register(t, t.cast.member, fields);
      const { countQueries } = await import('./support/server');
      const small = await countQueries(t, () => register(t, t.cast.member, fields));
      for (let i = 0; i < 29; i++) await setPolicy(t.cast.member, general.id, `topic ${i}`, (i % 3) + 1);
      const large = await countQueries(t, () => register(t, t.cast.member, fields));
      expect(small.result.state.user_topics).toHaveLength(1);
      expect(large.result.state.user_topics).toHaveLength(30);
      expect(large.queries).toBe(small.queries);
    });

    it('the empty topic is "" with the empty_topic_name capability and "general chat" without, in the state and in events', async () => {
      const modern = await register(t, t.cast.member, {
        fetch_event_types: ['user_topic', 'muted_topics'],
        event_types: ['user_topic', 'muted_topics'],
        client_capabilities: { empty_topic_name: true },
      });
      const legacy = await register(t, t.cast.member, { fetch_event_types: ['user_topic'], event_types: ['user_topic', 'muted_topics'] });
      await setPolicy(t.cast.member, general.id, '', 1);
      expect((await pending(t, modern)).map((e) => (e.type === 'user_topic' ? e.topic_name : e.muted_topics[0][1]))).toEqual(['', '']);
      expect((await pending(t, legacy)).map((e) => (e.type === 'user_topic' ? e.topic_name : e.muted_topics[0][1]))).toEqual([
        'general chat',
        'general chat',
      ]);
      // muted_topics comes only without user_topic: one registration for each.
      const names = async (client_capabilities: Record<string, boolean>) => {
        const topics = await register(t, t.cast.member, { fetch_event_types: ['user_topic'], client_capabilities });
        const muted = await register(t, t.cast.member, { fetch_event_types: ['muted_topics'], client_capabilities });
        return [topics.state.user_topics[0].topic_name, muted.state.muted_topics[0][1]];
      };
      expect(await names({ empty_topic_name: true })).toEqual(['', '']);
      expect(await names({})).toEqual(['general chat', 'general chat']);
    });
  });

  describe('unread counts and narrows', () => {
    let quiet: { id: number; recipient_id: number };
    const ids: Record<string, number> = {};
    let baseline = 0;
    beforeAll(async () => {
      const { createChannel } = await import('./support/server');
      quiet = await createChannel(t, 'quiet', [t.cast.owner, t.cast.member]);
      await t.ctx.db('user_topics').delete();
      // #quiet is muted by the member; in it "loud" is unmuted and "star" followed; in #general "hush" is muted.
      const muteRes = await t.api.post('/users/me/subscriptions/properties', t.cast.member, {
        subscription_data: [{ stream_id: quiet.id, property: 'is_muted', value: true }],
      });
      expect(muteRes.status).toBe(200);
      baseline = (await unread()).count; // unread messages the member had before (e.g. notices)
      ids.quietPlain = await sendToChannel(t, t.cast.owner, 'quiet', 'plain', 'in a muted channel');
      ids.quietLoud = await sendToChannel(t, t.cast.owner, 'quiet', 'Loud', 'unmuted topic');
      ids.quietStar = await sendToChannel(t, t.cast.owner, 'quiet', 'star', 'followed topic');
      ids.hush = await sendToChannel(t, t.cast.owner, 'general', 'Hush', 'muted topic');
      ids.hushWildcard = await sendToChannel(t, t.cast.owner, 'general', 'hush', '@**all** muted wildcard');
      ids.talk = await sendToChannel(t, t.cast.owner, 'general', 'talk', 'ordinary');
      ids.talkWildcard = await sendToChannel(t, t.cast.owner, 'general', 'talk', '@**all** ordinary wildcard');
      for (const [channel, topic, policy] of [
        [quiet.id, 'loud', 2],
        [quiet.id, 'STAR', 3],
        [general.id, 'hush', 1],
      ] as const) {
        expect((await setPolicy(t.cast.member, channel, topic, policy)).status).toBe(200);
      }
    });

    const mine = () => new Set(Object.values(ids));
    const unread = async () =>
      (await register(t, t.cast.member, { fetch_event_types: ['message', 'update_message_flags'] })).state.unread_msgs;

    it('count leaves out muted topics and muted channels, but counts unmuted and followed topics of a muted channel', async () => {
      const u = await unread();
      const listed = new Set<number>(u.streams.flatMap((s: any) => s.unread_message_ids));
      for (const id of mine()) expect(listed.has(id)).toBe(true); // every message stays listed, muted or not
      // quietPlain (muted channel), hush and hushWildcard (muted topic) are left out.
      expect(u.count - baseline).toBe(4);
      // A wildcard mention counts as a mention only outside muted topics.
      expect(u.mentions).toContain(ids.talkWildcard);
      expect(u.mentions).not.toContain(ids.hushWildcard);
    });

    it('count changes with the policy: muting a topic takes its messages out, unmuting puts them back', async () => {
      const before = (await unread()).count;
      await setPolicy(t.cast.member, general.id, 'talk', 1);
      expect((await unread()).count).toBe(before - 2);
      expect((await unread()).mentions).not.toContain(ids.talkWildcard);
      await setPolicy(t.cast.member, general.id, 'talk', 0);
      expect((await unread()).count).toBe(before);
      // Unmuting "plain" in the muted channel counts its message.
      await setPolicy(t.cast.member, quiet.id, 'plain', 2);
      expect((await unread()).count).toBe(before + 1);
      await setPolicy(t.cast.member, quiet.id, 'plain', 0);
      expect((await unread()).count).toBe(before);
    });

    it('marking a muted-topic message unread says unmuted_stream_msg false; an unmuted topic of a muted channel true', async () => {
      const c = await register(t, t.cast.member, { event_types: ['update_message_flags'] });
      await t.api.post('/messages/flags', t.cast.member, { messages: [ids.hush, ids.quietLoud, ids.talk], op: 'add', flag: 'read' });
      await t.api.post('/messages/flags', t.cast.member, { messages: [ids.hush, ids.quietLoud, ids.talk], op: 'remove', flag: 'read' });
      const removed = (await pending(t, c)).find((e) => e.op === 'remove');
      expect(removed!.message_details[String(ids.hush)].unmuted_stream_msg).toBe(false);
      expect(removed!.message_details[String(ids.quietLoud)].unmuted_stream_msg).toBe(true);
      expect(removed!.message_details[String(ids.talk)].unmuted_stream_msg).toBe(true);
    });

    const fetch = async (narrow: unknown[]) => {
      const res = await t.api.get('/messages', t.cast.member, { narrow, anchor: 'newest', num_before: 100, num_after: 0 });
      expect(res.status).toBe(200);
      return (res.body.messages as Array<{ id: number }>).map((m) => m.id).filter((id) => mine().has(id));
    };

    it('is:muted holds muted topics and the muted channel less its unmuted and followed topics; -is:muted the rest', async () => {
      expect((await fetch([{ operator: 'is', operand: 'muted' }])).sort()).toEqual([ids.quietPlain, ids.hush, ids.hushWildcard].sort());
      expect((await fetch([{ operator: 'is', operand: 'muted', negated: true }])).sort()).toEqual(
        [ids.quietLoud, ids.quietStar, ids.talk, ids.talkWildcard].sort(),
      );
    });

    it('in:home leaves out what is muted, as -is:muted does', async () => {
      expect((await fetch([{ operator: 'in', operand: 'home' }])).sort()).toEqual(
        [ids.quietLoud, ids.quietStar, ids.talk, ids.talkWildcard].sort(),
      );
    });

    it('is:followed holds the followed topics (any case); -is:followed the rest', async () => {
      expect(await fetch([{ operator: 'is', operand: 'followed' }])).toEqual([ids.quietStar]);
      expect(await fetch([{ operator: 'is', operand: 'followed', negated: true }])).not.toContain(ids.quietStar);
      expect((await fetch([{ operator: 'is', operand: 'followed', negated: true }])).length).toBe(mine().size - 1);
    });
  });

  describe('moving a topic carries the policies', () => {
    let n = 0;
    const fresh = () => `move ${Date.now().toString(36)} ${n++}`;
    const policiesOf = async (channelId: number, topic: string) => {
      const rows = await t.ctx
        .db('user_topics')
        .where({ channel_id: channelId, topic_key: topic.toLowerCase() })
        .orderBy('user_id')
        .select('user_id', 'topic', 'visibility_policy');
      return rows.map((r: any) => [Number(r.user_id), r.topic, Number(r.visibility_policy)]);
    };
    const move = async (id: number, user: any, fields: Record<string, unknown>) => {
      const res = await t.api.patch(`/messages/${id}`, user, fields);
      expect(res.body).toEqual(expect.objectContaining({ result: 'success' }));
    };

    it('change_all to a new topic moves every policy, with the events Zulip sends', async () => {
      const [a, b] = [fresh(), fresh()];
      const first = await sendToChannel(t, t.cast.owner, 'general', a, 'one');
      await sendToChannel(t, t.cast.owner, 'general', a, 'two');
      await setPolicy(t.cast.owner, general.id, a, 1);
      await setPolicy(t.cast.admin, general.id, a, 3);
      const owner = await register(t, t.cast.owner, { event_types: ['user_topic', 'muted_topics'] });
      await move(first, t.cast.member, { topic: b, propagate_mode: 'change_all', send_notification_to_new_thread: false });
      expect(await policiesOf(general.id, a)).toEqual([]);
      expect(await policiesOf(general.id, b)).toEqual([
        [t.cast.owner.id, b, 1],
        [t.cast.admin.id, b, 3],
      ]);
      // The removal leaves out the legacy list; the set that follows sends it.
      expect((await pending(t, owner)).map((e) => [e.type, e.topic_name, e.visibility_policy])).toEqual([
        ['user_topic', a, 0],
        ['muted_topics', undefined, undefined],
        ['user_topic', b, 1],
      ]);
    });

    it('a move that leaves messages behind (change_one of several) keeps the policies where they are', async () => {
      const [a, b] = [fresh(), fresh()];
      const first = await sendToChannel(t, t.cast.owner, 'general', a, 'one');
      await sendToChannel(t, t.cast.owner, 'general', a, 'two');
      await setPolicy(t.cast.owner, general.id, a, 1);
      await move(first, t.cast.member, { topic: b, propagate_mode: 'change_one' });
      expect(await policiesOf(general.id, a)).toEqual([[t.cast.owner.id, a, 1]]);
      expect(await policiesOf(general.id, b)).toEqual([]);
    });

    it('into a topic that has messages, the policies merge and the more visible one wins', async () => {
      const [a, c] = [fresh(), fresh()];
      const first = await sendToChannel(t, t.cast.owner, 'general', a, 'moving');
      await sendToChannel(t, t.cast.owner, 'general', c, 'already here');
      for (const [user, pa, pc] of [
        [t.cast.owner, 1, 2], // muted + unmuted: unmuted
        [t.cast.admin, 1, 0], // muted + none: none
        [t.cast.moderator, 3, 1], // followed + muted: followed
        [t.cast.guest, 0, 1], // none + muted: none
        [t.cast.bot, 1, 1], // muted + muted: muted
      ] as const) {
        if (pa) await setPolicy(user, general.id, a, pa);
        if (pc) await setPolicy(user, general.id, c, pc);
      }
      await move(first, t.cast.member, { topic: c, propagate_mode: 'change_all' });
      expect(await policiesOf(general.id, a)).toEqual([]);
      expect((await policiesOf(general.id, c)).map(([u, , p]) => [u, p])).toEqual(
        [
          [t.cast.owner.id, 2],
          [t.cast.moderator.id, 3],
          [t.cast.bot.id, 1],
        ].sort((x, y) => x[0]! - y[0]!),
      );
    });

    it('to a channel a user cannot read, that user loses the policy; the others keep theirs there', async () => {
      const a = fresh();
      const first = await sendToChannel(t, t.cast.owner, 'general', a, 'going private');
      await setPolicy(t.cast.admin, general.id, a, 1);
      await setPolicy(t.cast.moderator, general.id, a, 3);
      await move(first, t.cast.owner, { stream_id: secret.id, propagate_mode: 'change_all' });
      expect(await policiesOf(general.id, a)).toEqual([]);
      // The owner follows the topic they started (automatically_follow_topics_policy) and can read the channel too.
      expect(await policiesOf(secret.id, a)).toEqual([
        [t.cast.owner.id, a, 3],
        [t.cast.moderator.id, a, 3],
      ]);
    });

    it('resolving keeps the policies on the resolved topic, and the notice stays unread for its followers under "except_followed"', async () => {
      const a = fresh();
      const first = await sendToChannel(t, t.cast.moderator, 'general', a, 'to resolve');
      await setPolicy(t.cast.owner, general.id, a, 3);
      // Starting the topic made the moderator follow it (automatically_follow_topics_policy): undone.
      await setPolicy(t.cast.moderator, general.id, a, 0);
      await move(first, t.cast.member, { topic: `✔ ${a}`, propagate_mode: 'change_all' });
      expect(await policiesOf(general.id, `✔ ${a}`)).toEqual([[t.cast.owner.id, `✔ ${a}`, 3]]);
      const notice = await t.ctx
        .db('messages')
        .where({ recipient_id: general.recipient_id, topic_key: `✔ ${a}`.toLowerCase() })
        .orderBy('id', 'desc')
        .first('id');
      const readOf = async (userId: number) =>
        Number((await t.ctx.db('user_messages').where({ user_id: userId, message_id: notice!.id }).first('flags'))!.flags) & 1;
      // Both have the default policy, except_followed: the follower keeps it unread, the other reads it.
      expect([await readOf(t.cast.owner.id), await readOf(t.cast.moderator.id)]).toEqual([0, 1]);
    });
  });
});
