import { eachDatabase } from './support/databases';
import { createChannel, createMembers, startTestServer, TestServer } from './support/server';
import type { UserRow } from '../src/queries/rows';

eachDatabase('channels and subscriptions', (dialect) => {
  let t: TestServer;
  let groups: Record<string, number>;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member } = t.cast;
    await createChannel(t, 'general', [owner, admin, moderator, member, t.cast.guest]);
    await createChannel(t, 'private-club', [owner], { inviteOnly: true, historyPublicToSubscribers: true });
    const rows = await t.ctx.db('user_groups').where({ realm_id: t.realmId, is_system_group: true }).select('id', 'name');
    groups = Object.fromEntries(rows.map((r: any) => [r.name, r.id]));
  });
  afterAll(() => t.close());

  const channelCount = async () => Number((await t.ctx.db('channels').count({ n: '*' }).first())!.n);
  const subscriptionRows = async () =>
    t.ctx.db('subscriptions').orderBy('id').select('user_id', 'recipient_id', 'active', 'color', 'is_muted', 'pin_to_top');
  const subscribedNames = async (u: UserRow) =>
    (
      await t.ctx
        .db('subscriptions as s')
        .join('channels as c', 'c.recipient_id', 's.recipient_id')
        .where({ 's.user_id': u.id, 's.active': true })
        .pluck('c.name')
    ).sort();

  describe('POST /channels/create', () => {
    it('creates a channel with its settings and subscribers', async () => {
      const res = await t.api.post('/channels/create', t.cast.member, {
        name: 'design',
        description: 'Pixels **matter**',
        subscribers: [t.cast.member.id, t.cast.moderator.id],
        can_send_message_group: groups['role:members'],
        can_remove_subscribers_group: { direct_members: [t.cast.member.id], direct_subgroups: [groups['role:administrators']] },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '', id: expect.any(Number) });
      const row = await t.ctx.db('channels').where({ id: res.body.id }).first();
      expect(row!.rendered_description).toBe('<p>Pixels <strong>matter</strong></p>');
      expect(row!.can_send_message_group).toBe(groups['role:members']);
      const anon = await t.ctx.db('user_groups').where({ id: row!.can_remove_subscribers_group }).first();
      expect(anon!.name).toBeNull();
      expect(await t.ctx.db('group_members').where({ group_id: anon!.id }).pluck('user_id')).toEqual([t.cast.member.id]);
      // By default the creator alone administers the channel.
      expect(await t.ctx.db('group_members').where({ group_id: row!.can_administer_channel_group }).pluck('user_id')).toEqual([
        t.cast.member.id,
      ]);
      expect(await subscribedNames(t.cast.moderator)).toContain('design');
      expect(row!.subscriber_count).toBe(2);
    });

    it('answers a taken name, in any case, with 409 CHANNEL_ALREADY_EXISTS', async () => {
      const res = await t.api.post('/channels/create', t.cast.member, { name: 'DESIGN', subscribers: [t.cast.member.id] });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ result: 'error', msg: "Channel 'DESIGN' already exists", code: 'CHANNEL_ALREADY_EXISTS' });
    });

    it.each([
      ['a guest', 'guest', {}, 'Not allowed for guest users'],
      ['an empty name', 'member', { name: '   ' }, "Channel name can't be empty."],
      ['a name too long', 'member', { name: 'n'.repeat(61) }, 'Channel name too long (limit: 60 characters).'],
      ['a control character in the name', 'member', { name: 'bad\u0007name' }, 'Invalid character in channel name, at position 4.'],
      ['a description too long', 'member', { description: 'd'.repeat(1025) }, 'description is too long (limit: 1024 characters)'],
      ['a default channel from a member', 'member', { is_default_stream: true }, 'Must be an organization administrator'],
      ['a private default channel', 'admin', { is_default_stream: true, invite_only: true }, 'A default channel cannot be private.'],
      ['a retention period from an administrator', 'admin', { message_retention_days: 30 }, 'Must be an organization owner'],
      ['a retention period that is no period', 'owner', { message_retention_days: -5 }, "Bad value for 'message_retention_days': -5"],
      ['a web-public channel where spectators are off', 'owner', { is_web_public: true }, 'Web-public channels are not enabled.'],
      [
        'role:everyone for can_subscribe_group',
        'member',
        { can_subscribe_group: 'EVERYONE' },
        "'can_subscribe_group' setting cannot be set to 'role:everyone' group.",
      ],
      ['an unknown group', 'member', { can_send_message_group: 999999 }, 'Invalid user group ID: 999999'],
      [
        'an unknown user in an anonymous group',
        'member',
        { can_send_message_group: { direct_members: [999999], direct_subgroups: [] } },
        'Invalid user ID: 999999',
      ],
      ['a group setting of the wrong shape', 'member', { can_send_message_group: 'all' }, 'Invalid can_send_message_group'],
      [
        'a restricted topic creator in a protected private channel',
        'member',
        { invite_only: true, history_public_to_subscribers: false, can_create_topic_group: 'MEMBERS' },
        "'can_create_topic_group' must be the role:everyone group in private channels with protected history.",
      ],
      ['an unknown folder', 'member', { folder_id: 4242 }, 'Invalid channel folder ID'],
      ['an unknown subscriber', 'member', { subscribers: [999999] }, 'No such user'],
    ] as const)('refuses %s and creates nothing', async (_what, who, override: any, msg) => {
      const before = await channelCount();
      const fields: Record<string, unknown> = { name: 'refused-channel', subscribers: [t.cast[who].id], ...override };
      if (fields.can_subscribe_group === 'EVERYONE') fields.can_subscribe_group = groups['role:everyone'];
      if (fields.can_create_topic_group === 'MEMBERS') fields.can_create_topic_group = groups['role:members'];
      const res = await t.api.post('/channels/create', t.cast[who], fields);
      expect([res.status, res.body]).toEqual([
        400,
        { result: 'error', msg, code: msg.startsWith('Must be an organization') ? 'UNAUTHORIZED_PRINCIPAL' : 'BAD_REQUEST' },
      ]);
      expect(await channelCount()).toBe(before);
    });

    it('lets the owner set a retention period and make a private channel with protected history', async () => {
      const res = await t.api.post('/channels/create', t.cast.owner, {
        name: 'vault',
        subscribers: [t.cast.owner.id],
        invite_only: true,
        history_public_to_subscribers: false,
        message_retention_days: 'unlimited',
      });
      expect(res.status).toBe(200);
      const row = await t.ctx.db('channels').where({ id: res.body.id }).first();
      expect([Boolean(row!.invite_only), Boolean(row!.history_public_to_subscribers), row!.message_retention_days]).toEqual([
        true,
        false,
        -1,
      ]);
    });

    it('announces a new channel in the announcements channel when asked', async () => {
      const general = await t.ctx.db('channels').where({ name: 'general' }).first('id', 'recipient_id');
      await t.ctx.db('realms').where({ id: t.realmId }).update({ new_stream_announcements_stream_id: general!.id });
      const res = await t.api.post('/channels/create', t.cast.admin, { name: 'announced', subscribers: [t.cast.admin.id], announce: true });
      expect(res.status).toBe(200);
      const last = await t.ctx.db('messages').where({ recipient_id: general!.recipient_id }).orderBy('id', 'desc').first();
      expect(last!.topic).toBe('new channels');
      expect(last!.content).toBe(`@_**Test Admin|${t.cast.admin.id}** created a new channel #**announced**.`);
    });
  });

  describe('POST /users/me/subscriptions', () => {
    it('subscribes the caller to an existing channel and creates a missing one, keyed by user id', async () => {
      const res = await t.api.post('/users/me/subscriptions', t.cast.moderator, {
        subscriptions: [{ name: 'general' }, { name: 'brand-new', description: 'fresh' }],
      });
      expect(res.status).toBe(200);
      expect(res.body.subscribed).toEqual({ [String(t.cast.moderator.id)]: ['brand-new'] });
      expect(res.body.already_subscribed).toEqual({ [String(t.cast.moderator.id)]: ['general'] });
      const row = await t.ctx.db('channels').where({ name: 'brand-new' }).first();
      expect(row!.description).toBe('fresh');
    });

    it('subscribes others by id or email and tells them', async () => {
      const res = await t.api.post('/users/me/subscriptions', t.cast.member, {
        subscriptions: [{ name: 'general' }, { name: 'brand-new' }],
        principals: [t.cast.admin.email],
      });
      expect(res.status).toBe(200);
      expect(res.body.subscribed).toEqual({ [String(t.cast.admin.id)]: ['brand-new'] });
      expect(res.body.new_subscription_messages_sent).toBe(true);
      const note = await t.ctx
        .db('messages as m')
        .join('user_messages as um', 'um.message_id', 'm.id')
        .where('um.user_id', t.cast.admin.id)
        .orderBy('m.id', 'desc')
        .first('m.content');
      expect(note.content).toContain('subscribed you to the channel #**brand-new**');
    });

    it('keeps private channels to those with access, fatally or listing them', async () => {
      const before = await subscriptionRows();
      const fatal = await t.api.post('/users/me/subscriptions', t.cast.member, {
        subscriptions: [{ name: 'general' }, { name: 'private-club' }],
      });
      expect([fatal.status, fatal.body]).toEqual([
        400,
        { result: 'error', msg: 'Unable to access channel (private-club).', code: 'BAD_REQUEST' },
      ]);
      expect(await subscriptionRows()).toEqual(before);
      const lenient = await t.api.post('/users/me/subscriptions', t.cast.member, {
        subscriptions: [{ name: 'private-club' }, { name: 'design' }],
        authorization_errors_fatal: false,
      });
      expect(lenient.status).toBe(200);
      expect(lenient.body.unauthorized).toEqual(['private-club']);
    });

    it('does not let guests join public channels by themselves', async () => {
      const res = await t.api.post('/users/me/subscriptions', t.cast.guest, { subscriptions: [{ name: 'design' }] });
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' }]);
    });

    it('subscribes to none when any channel fails', async () => {
      const before = await subscriptionRows();
      const channels = await channelCount();
      const res = await t.api.post('/users/me/subscriptions', t.cast.admin, {
        subscriptions: [{ name: 'ok-one' }, { name: 'x'.repeat(61) }],
      });
      expect([res.status, res.body]).toEqual([
        400,
        { result: 'error', msg: 'Channel name too long (limit: 60 characters).', code: 'BAD_REQUEST' },
      ]);
      expect(await subscriptionRows()).toEqual(before);
      expect(await channelCount()).toBe(channels);
    });

    it.each([
      ['an unknown principal', { subscriptions: [{ name: 'general' }], principals: ['ghost@example.com'] }, 'No such user'],
      ['a deactivated principal', { subscriptions: [{ name: 'general' }], principals: ['deactivated@example.com'] }, 'No such user'],
      ['a color that is not hex', { subscriptions: [{ name: 'colorful', color: 'blue' }] }, 'blue is not a valid hex color code'],
      [
        'no subscriptions argument',
        {},
        "Missing 'subscriptions' argument",
        { code: 'REQUEST_VARIABLE_MISSING', var_name: 'subscriptions' },
      ],
    ])('refuses %s', async (_what, fields, msg, code: Record<string, string> = { code: 'BAD_REQUEST' }) => {
      const before = await subscriptionRows();
      const res = await t.api.post('/users/me/subscriptions', t.cast.admin, fields);
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg, ...code }]);
      expect(await subscriptionRows()).toEqual(before);
    });
  });

  describe('DELETE /users/me/subscriptions', () => {
    it('unsubscribes the caller and reports what was not subscribed', async () => {
      const res = await t.api.delete('/users/me/subscriptions', t.cast.moderator, { subscriptions: ['brand-new', 'private-club'] });
      // private-club is invisible to the moderator
      expect([res.status, res.body]).toEqual([
        400,
        { result: 'error', msg: 'Channel(s) (private-club) do not exist', code: 'BAD_REQUEST' },
      ]);
      const ok = await t.api.delete('/users/me/subscriptions', t.cast.moderator, { subscriptions: ['brand-new', 'design'] });
      expect(ok.body).toMatchObject({ removed: ['brand-new', 'design'], not_removed: [] });
      const again = await t.api.delete('/users/me/subscriptions', t.cast.moderator, { subscriptions: ['brand-new'] });
      expect(again.body).toMatchObject({ removed: [], not_removed: ['brand-new'] });
      // The row stays (inactive) so settings survive a later re-subscribe.
      const row = await t.ctx
        .db('subscriptions as s')
        .join('channels as c', 'c.recipient_id', 's.recipient_id')
        .where({ 's.user_id': t.cast.moderator.id, 'c.name': 'brand-new' })
        .first('s.active');
      expect(Boolean(row.active)).toBe(false);
    });

    it('lets only those in can_remove_subscribers_group remove others', async () => {
      const refused = await t.api.delete('/users/me/subscriptions', t.cast.member, {
        subscriptions: ['general'],
        principals: [t.cast.guest.id],
      });
      expect([refused.status, refused.body]).toEqual([400, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' }]);
      const ok = await t.api.delete('/users/me/subscriptions', t.cast.admin, { subscriptions: ['general'], principals: [t.cast.guest.id] });
      expect(ok.body.removed).toEqual(['general']);
    });
  });

  describe('subscription properties', () => {
    let designId: number;
    beforeAll(async () => {
      designId = (await t.ctx.db('channels').where({ name: 'design' }).first('id'))!.id;
    });

    it('sets pin_to_top and a color, and mutes through in_home_view with two events', async () => {
      expect(
        (await t.api.patch(`/users/me/subscriptions/${designId}`, t.cast.member, { property: 'pin_to_top', value: true })).status,
      ).toBe(200);
      expect(
        (await t.api.patch(`/users/me/subscriptions/${designId}`, t.cast.member, { property: 'color', value: '#A1B2C3' })).status,
      ).toBe(200);
      const seen: any[] = [];
      const off = t.ctx.bus.subscribe((d) => seen.push(d.event));
      try {
        await t.api.post('/users/me/subscriptions/properties', t.cast.member, {
          subscription_data: [{ stream_id: designId, property: 'in_home_view', value: false }],
        });
      } finally {
        off();
      }
      expect(seen).toEqual([
        { type: 'subscription', op: 'update', stream_id: designId, property: 'in_home_view', value: false },
        { type: 'subscription', op: 'update', stream_id: designId, property: 'is_muted', value: true },
      ]);
      const row = await t.ctx
        .db('subscriptions as s')
        .join('channels as c', 'c.recipient_id', 's.recipient_id')
        .where({ 's.user_id': t.cast.member.id, 'c.id': designId })
        .first('s.pin_to_top', 's.color', 's.is_muted');
      expect([Boolean(row.pin_to_top), row.color, Boolean(row.is_muted)]).toEqual([true, '#a1b2c3', true]);
    });

    it.each([
      ['an unknown property', { property: 'sparkle', value: true }, 'Unknown subscription property: sparkle'],
      ['a color that is not hex', { property: 'color', value: 'red' }, 'color is not a valid hex color code'],
      ['a boolean property given text', { property: 'pin_to_top', value: 'yes' }, 'pin_to_top is not a boolean'],
    ])('refuses %s', async (_what, fields, msg) => {
      const before = await subscriptionRows();
      const res = await t.api.patch(`/users/me/subscriptions/${designId}`, t.cast.member, fields);
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code: 'BAD_REQUEST' }]);
      expect(await subscriptionRows()).toEqual(before);
    });

    it('refuses channels one is not subscribed to, and applies a bulk change entirely or not at all', async () => {
      const club = (await t.ctx.db('channels').where({ name: 'private-club' }).first('id'))!.id;
      const invisible = await t.api.patch(`/users/me/subscriptions/${club}`, t.cast.member, { property: 'pin_to_top', value: true });
      expect([invisible.status, invisible.body]).toEqual([400, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' }]);
      const vault = (await t.ctx.db('channels').where({ name: 'announced' }).first('id'))!.id;
      const before = await subscriptionRows();
      const res = await t.api.post('/users/me/subscriptions/properties', t.cast.member, {
        subscription_data: [{ stream_id: vault, property: 'pin_to_top', value: true }],
      });
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg: `Not subscribed to channel ID ${vault}`, code: 'BAD_REQUEST' }]);
      const bulk = await t.api.post('/users/me/subscriptions/properties', t.cast.member, {
        subscription_data: [
          { stream_id: designId, property: 'pin_to_top', value: false },
          { stream_id: designId, property: 'nope', value: true },
        ],
      });
      expect([bulk.status, bulk.body]).toEqual([400, { result: 'error', msg: 'Unknown subscription property: nope', code: 'BAD_REQUEST' }]);
      expect(await subscriptionRows()).toEqual(before);
    });
  });
  describe('GET /users/me/subscriptions', () => {
    it("lists the caller's channels with every field and personal settings", async () => {
      const res = await t.api.get('/users/me/subscriptions', t.cast.member);
      expect(res.status).toBe(200);
      const design = res.body.subscriptions.find((s: any) => s.name === 'design');
      expect(design).toMatchObject({
        description: 'Pixels **matter**',
        invite_only: false,
        is_muted: true,
        in_home_view: false,
        pin_to_top: true,
        color: '#a1b2c3',
        desktop_notifications: null,
        is_archived: false,
        stream_weekly_traffic: null,
        is_recently_active: true,
        topics_policy: 'inherit',
        subscriber_count: expect.any(Number),
      });
      expect(design).not.toHaveProperty('subscribers');
      expect(res.body.subscriptions.map((s: any) => s.name)).not.toContain('private-club');
      // The anonymous group behind can_remove_subscribers_group comes back as its contents.
      expect(design.can_remove_subscribers_group).toEqual({
        direct_members: [t.cast.member.id],
        direct_subgroups: [groups['role:administrators']],
      });
      expect(design.can_send_message_group).toBe(groups['role:members']);
    });

    it('computes weekly traffic from the last four weeks of messages', async () => {
      const general = await t.ctx.db('channels').where({ name: 'general' }).first('id', 'recipient_id');
      const now = Math.floor(Date.now() / 1000);
      await t.ctx
        .db('channels')
        .where({ id: general!.id })
        .update({ date_created: now - 60 * 86400 });
      const inWindow = await t.ctx.db('messages').where({ recipient_id: general!.recipient_id }).count({ n: '*' }).first();
      for (let i = 0; i < 8 - Number(inWindow!.n); i++) {
        await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: 'traffic', content: `m${i}` });
      }
      const res = await t.api.get('/users/me/subscriptions', t.cast.member);
      expect(res.body.subscriptions.find((s: any) => s.name === 'general').stream_weekly_traffic).toBe(2);
    });

    it('includes subscribers on request, and partial lists for big channels', async () => {
      const full = await t.api.get('/users/me/subscriptions', t.cast.member, { include_subscribers: 'true' });
      const design = full.body.subscriptions.find((s: any) => s.name === 'design');
      expect(design.subscribers).toEqual(expect.arrayContaining([t.cast.member.id]));
      const crowd = await createMembers(t, 'crowd', 250);
      const big = await createChannel(t, 'big-room', [t.cast.member, ...crowd]);
      await t.api.post('/messages', crowd[0]!, { type: 'channel', to: 'big-room', topic: 'hi', content: 'active now' });
      const partial = await t.api.get('/users/me/subscriptions', t.cast.member, { include_subscribers: 'partial' });
      const room = partial.body.subscriptions.find((s: any) => s.stream_id === big.id);
      expect(room).not.toHaveProperty('subscribers');
      expect(room.partial_subscribers).toContain(crowd[0]!.id);
      expect(room.partial_subscribers).not.toContain(crowd[1]!.id);
      const small = partial.body.subscriptions.find((s: any) => s.name === 'design');
      expect(small.subscribers).toBeDefined();
    });
  });
});
