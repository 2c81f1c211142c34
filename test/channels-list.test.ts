import { eachDatabase } from './support/databases';
import type { TestServer } from './support/server';
import { createChannel, startTestServer } from './support/server';

eachDatabase('channel lists and topics', (dialect) => {
  let t: TestServer;
  let pub: { id: number; recipient_id: number };
  let priv: { id: number; recipient_id: number };
  let protectedChan: { id: number; recipient_id: number };
  let archived: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, member, guest, moderator } = t.cast;
    pub = await createChannel(t, 'Zebra public', [owner, member]);
    priv = await createChannel(t, 'alpha private', [owner, moderator], { inviteOnly: true });
    protectedChan = await createChannel(t, 'middle protected', [owner, member], {
      inviteOnly: true,
      historyPublicToSubscribers: false,
    });
    archived = await createChannel(t, 'old archived', [owner, member]);
    await t.ctx.db('channels').where({ id: archived.id }).update({ deactivated: true });
    await createChannel(t, 'guest room', [guest, admin]);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const names = (streams: Array<Record<string, any>>) => streams.map((s) => s.name as string);
  const listAs = async (user = t.cast.member, query: Record<string, unknown> = {}) => {
    const res = await t.api.get('/streams', user, query);
    expect(res.status).toBe(200);
    return res.body.streams as Array<Record<string, any>>;
  };
  const send = async (channelId: number, topic: string, user = t.cast.owner) => {
    const res = await t.api.post('/messages', user, { type: 'channel', to: channelId, topic, content: `in ${topic}` });
    expect(res.status).toBe(200);
    return res.body.id as number;
  };

  describe('GET /streams', () => {
    it("lists public channels and the caller's own, sorted by name, without archived ones", async () => {
      expect(names(await listAs())).toEqual(['guest room', 'middle protected', 'Zebra public'].sort());
    });

    it('never lists a private channel the caller is not subscribed to, unless include_all and they may know it', async () => {
      expect(names(await listAs(t.cast.member))).not.toContain('alpha private');
      expect(names(await listAs(t.cast.member, { include_all: true }))).not.toContain('alpha private');
      expect(names(await listAs(t.cast.admin, { include_all: true }))).toContain('alpha private');
      expect(names(await listAs(t.cast.admin, { include_all_active: true }))).toContain('alpha private');
      expect(names(await listAs(t.cast.admin))).not.toContain('alpha private');
    });

    it('lets a member ask for include_all_active, the legacy name of include_all (open to all since feature level 356)', async () => {
      // Before level 356 Zulip answered "User not authorized for this query" to anyone but an
      // administrator; since then the legacy name means include_all, which every user may send.
      const res = await t.api.get('/streams', t.cast.member, { include_all_active: true });
      expect(res.status).toBe(200);
      expect(names(res.body.streams)).toEqual(names(await listAs(t.cast.member, { include_all: true })));
      expect(names(res.body.streams)).not.toContain('alpha private');
    });

    it('gives guests only their own channels, even with include_public', async () => {
      expect(names(await listAs(t.cast.guest, { include_public: true }))).toEqual(['guest room']);
    });

    it('combines the sources asked for', async () => {
      expect(names(await listAs(t.cast.member, { include_public: false }))).toEqual(['middle protected', 'Zebra public'].sort());
      expect(await listAs(t.cast.member, { include_public: false, include_subscribed: false })).toEqual([]);
      expect(names(await listAs(t.cast.moderator, { include_public: false }))).toEqual(['alpha private']);
    });

    it('lists archived channels with exclude_archived=false', async () => {
      const all = await listAs(t.cast.member, { exclude_archived: false });
      expect(all.find((s) => s.name === 'old archived')).toMatchObject({ stream_id: archived.id, is_archived: true });
    });

    it('adds is_default only with include_default', async () => {
      await t.ctx.db('channels').where({ id: pub.id }).update({ is_default: true });
      const plain = await listAs(t.cast.member);
      expect(plain.every((s) => !('is_default' in s))).toBe(true);
      const withDefault = await listAs(t.cast.member, { include_default: true });
      expect(Object.fromEntries(withDefault.map((s) => [s.name, s.is_default]))).toEqual({
        'guest room': false,
        'middle protected': false,
        'Zebra public': true,
      });
    });

    it('adds web-public channels with include_web_public', async () => {
      const web = await createChannel(t, 'web open', [t.cast.admin]);
      await t.ctx.db('channels').where({ id: web.id }).update({ is_web_public: true });
      expect(names(await listAs(t.cast.guest, { include_web_public: true }))).toEqual(['guest room', 'web open']);
      expect(names(await listAs(t.cast.guest))).toEqual(['guest room']);
    });

    it("adds the owner's channels for a bot with include_owner_subscribed", async () => {
      await t.ctx.db('users').where({ id: t.cast.bot.id }).update({ bot_owner_id: t.cast.moderator.id });
      expect(names(await listAs(t.cast.bot, { include_public: false }))).toEqual([]);
      expect(names(await listAs(t.cast.bot, { include_public: false, include_owner_subscribed: true }))).toEqual(['alpha private']);
      // Only bots have owners: for a person the option adds nothing.
      expect(names(await listAs(t.cast.member, { include_public: false, include_owner_subscribed: true }))).not.toContain('alpha private');
    });

    it('adds private channels the caller may subscribe to with include_can_access_content', async () => {
      const open = await createChannel(t, 'joinable private', [t.cast.owner], { inviteOnly: true });
      const everyone = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:members' }).first('id');
      await t.ctx.db('channels').where({ id: open.id }).update({ can_subscribe_group: everyone!.id });
      expect(names(await listAs(t.cast.member))).not.toContain('joinable private');
      expect(names(await listAs(t.cast.member, { include_can_access_content: true }))).toContain('joinable private');
    });

    it("sends each channel in the contract's shape with a live subscriber count", async () => {
      const zebra = (await listAs(t.cast.member)).find((s) => s.stream_id === pub.id)!;
      expect(zebra).toMatchObject({ name: 'Zebra public', invite_only: false, subscriber_count: 2, is_archived: false });
    });

    it('refuses a non-boolean option', async () => {
      const res = await t.api.get('/streams', t.cast.member, { include_public: 'perhaps' });
      expect(res.status).toBe(400);
      expect(res.body.result).toBe('error');
    });

    it('needs authentication', async () => {
      expect((await t.api.get('/streams', null)).status).toBe(401);
    });
  });

  describe('GET /streams/{stream_id}', () => {
    it('returns a channel the caller may know exists, archived ones included', async () => {
      const res = await t.api.get(`/streams/${pub.id}`, t.cast.guest);
      expect(res.status).toBe(400); // a guest does not see an unsubscribed public channel
      const ok = await t.api.get(`/streams/${pub.id}`, t.cast.member);
      expect(ok.status).toBe(200);
      expect(ok.body.stream).toMatchObject({ stream_id: pub.id, name: 'Zebra public' });
      const old = await t.api.get(`/streams/${archived.id}`, t.cast.member);
      expect(old.body.stream).toMatchObject({ stream_id: archived.id, is_archived: true });
    });

    it('gives the same error for a hidden private channel and a missing one', async () => {
      const hidden = await t.api.get(`/streams/${priv.id}`, t.cast.member);
      const missing = await t.api.get('/streams/999999', t.cast.member);
      expect(hidden.status).toBe(400);
      expect(hidden.body).toEqual({ result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
      expect(missing.body).toEqual(hidden.body);
      expect((await t.api.get(`/streams/${priv.id}`, t.cast.admin)).status).toBe(200);
    });
  });

  describe('GET /get_stream_id', () => {
    it('finds a channel by name, case-insensitively', async () => {
      const res = await t.api.get('/get_stream_id', t.cast.member, { stream: 'zebra PUBLIC' });
      expect(res.body).toEqual({ result: 'success', msg: '', stream_id: pub.id });
    });

    it('answers as for a missing name when the caller may not read the channel', async () => {
      const hidden = await t.api.get('/get_stream_id', t.cast.admin, { stream: 'alpha private' });
      expect(hidden.body).toEqual({ result: 'error', msg: "Invalid channel name 'alpha private'", code: 'BAD_REQUEST' });
      const missing = await t.api.get('/get_stream_id', t.cast.member, { stream: 'nowhere' });
      expect(missing.body).toEqual({ result: 'error', msg: "Invalid channel name 'nowhere'", code: 'BAD_REQUEST' });
    });

    it('needs the stream parameter', async () => {
      const res = await t.api.get('/get_stream_id', t.cast.member);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'REQUEST_VARIABLE_MISSING', var_name: 'stream' });
    });
  });

  describe('GET /users/me/{stream_id}/topics', () => {
    let topicsChannel: { id: number; recipient_id: number };
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      topicsChannel = await createChannel(t, 'topics here', [t.cast.owner, t.cast.member]);
      ids.a1 = await send(topicsChannel.id, 'Alpha');
      ids.b1 = await send(topicsChannel.id, 'beta');
      ids.a2 = await send(topicsChannel.id, 'ALPHA'); // same topic, newest spelling
      ids.e1 = await send(topicsChannel.id, '');
      ids.c1 = await send(topicsChannel.id, 'gamma');
    });

    it('lists topics newest first with their newest message and spelling', async () => {
      const res = await t.api.get(`/users/me/${topicsChannel.id}/topics`, t.cast.member);
      expect(res.body.topics).toEqual([
        { name: 'gamma', max_id: ids.c1 },
        { name: 'general chat', max_id: ids.e1 },
        { name: 'ALPHA', max_id: ids.a2 },
        { name: 'beta', max_id: ids.b1 },
      ]);
    });

    it('keeps names beyond ASCII intact, from the list first built and from its kept text or bytes', async () => {
      const chan = await createChannel(t, 'topics in many scripts', [t.cast.owner, t.cast.member]);
      // Over 4 KB of list, kept as bytes (a short list is kept as text).
      const names = ['café ☕', '話題 🎉', 'ünïcödé', ...Array.from({ length: 90 }, (_, i) => `話題 ${i} ${'ü'.repeat(12)}`)];
      const sent: number[] = [];
      for (const name of names) sent.push(await send(chan.id, name));
      const expected = names.map((name, i) => ({ name, max_id: sent[i] })).reverse();
      for (let i = 0; i < 2; i++) {
        const res = await t.api.get(`/users/me/${chan.id}/topics`, t.cast.member);
        expect(res.body.topics).toEqual(expected);
      }
    });

    it('sends the empty topic as "" with allow_empty_topic_name', async () => {
      const res = await t.api.get(`/users/me/${topicsChannel.id}/topics`, t.cast.member, { allow_empty_topic_name: true });
      expect(res.body.topics[1]).toEqual({ name: '', max_id: ids.e1 });
    });

    it("lets anyone but a guest read a public channel's topics unsubscribed", async () => {
      const res = await t.api.get(`/users/me/${topicsChannel.id}/topics`, t.cast.moderator);
      expect(res.body.topics).toHaveLength(4);
      const guest = await t.api.get(`/users/me/${topicsChannel.id}/topics`, t.cast.guest);
      expect(guest.body).toEqual({ result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    });

    it('lists only topics of received messages in a channel with protected history', async () => {
      const early = await send(protectedChan.id, 'before joining');
      const { subscribe } = await import('./support/server');
      await subscribe(t, protectedChan, [t.cast.moderator]);
      const later = await send(protectedChan.id, 'after joining');
      const mine = await t.api.get(`/users/me/${protectedChan.id}/topics`, t.cast.moderator);
      expect(mine.body.topics).toEqual([{ name: 'after joining', max_id: later }]);
      const owners = await t.api.get(`/users/me/${protectedChan.id}/topics`, t.cast.owner);
      expect(owners.body.topics).toEqual([
        { name: 'after joining', max_id: later },
        { name: 'before joining', max_id: early },
      ]);
    });

    it('refuses a private channel the caller cannot read, administrators included', async () => {
      const res = await t.api.get(`/users/me/${priv.id}/topics`, t.cast.admin);
      expect(res.body).toEqual({ result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
      expect((await t.api.get('/users/me/999999/topics', t.cast.member)).body).toEqual(res.body);
    });

    it('answers an empty list for a channel without messages', async () => {
      const empty = await createChannel(t, 'quiet', [t.cast.member]);
      expect((await t.api.get(`/users/me/${empty.id}/topics`, t.cast.member)).body.topics).toEqual([]);
    });
  });

  describe('POST /messages/render', () => {
    it('renders Markdown as sending would, storing nothing', async () => {
      const count = async () => Number(((await t.ctx.db('messages').count('* as n')) as Array<{ n: number }>)[0]!.n);
      const before = await count();
      const res = await t.api.post('/messages/render', t.cast.member, {
        content: `**foo** @**${t.cast.admin.full_name}** #**Zebra public**`,
      });
      expect(res.status).toBe(200);
      expect(res.body.rendered).toContain('<strong>foo</strong>');
      expect(res.body.rendered).toContain(`data-user-id="${t.cast.admin.id}"`);
      expect(res.body.rendered).toContain(`data-stream-id="${pub.id}"`);
      expect(await count()).toBe(before);
    });

    it('does not link a private channel the caller may not know', async () => {
      const res = await t.api.post('/messages/render', t.cast.member, { content: '#**alpha private**' });
      expect(res.body.rendered).not.toContain(`data-stream-id="${priv.id}"`);
    });

    it('renders empty content as empty, and cuts content longer than a message may be', async () => {
      expect((await t.api.post('/messages/render', t.cast.member, { content: '' })).body.rendered).toBe('');
      const long = await t.api.post('/messages/render', t.cast.member, { content: 'x'.repeat(20000) });
      expect(long.body.rendered).toContain('[message truncated]');
      expect(long.body.rendered.length).toBeLessThan(10100);
    });

    it('is a route of its own, not a message id', async () => {
      const res = await t.api.post('/messages/render', t.cast.member, {});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        msg: "Missing 'content' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'content',
      });
    });
  });
});
