import { eachDatabase } from './support/databases';
import { pending, register, startEventsServer, stopEventsServer, type Client } from './support/events';
import { createChannel, type TestServer } from './support/server';
import type { UserRow } from '../src/queries/rows';
import { AuditEventType } from '../src/domain/audit';

type Ref = { id: number; recipient_id: number };

eachDatabase('channel administration: subscribers, default channels, archiving', (dialect) => {
  let t: TestServer;
  let general: Ref;
  let open: Ref;
  let secret: Ref;
  beforeAll(async () => {
    ({ t, general, open, secret } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  const auditRows = async (channelId: number, eventType: number) =>
    t.ctx.db('audit_log').where({ modified_channel_id: channelId, event_type: eventType }).select('acting_user_id', 'extra_data');
  const registerAll = async (users: UserRow[], fields: Record<string, unknown> = {}) => {
    const out: Client[] = [];
    for (const u of users) out.push(await register(t, u, fields));
    return out;
  };

  describe('GET /streams/{stream_id}/members', () => {
    it('lists the active subscribers of a channel the caller may know exists', async () => {
      const res = await t.api.get(`/streams/${general.id}/members`, t.cast.member);
      expect(res.status).toBe(200);
      const { owner, admin, moderator, member, guest, bot } = t.cast;
      expect(res.body.subscribers).toEqual([owner.id, admin.id, moderator.id, member.id, guest.id, bot.id].sort((a, b) => a - b));
    });

    it.each([
      ['owner', 200],
      ['admin', 200],
      ['moderator', 200],
      ['member', 400],
      ['guest', 400],
    ])('a private channel: %s answers %i', async (role, status) => {
      const res = await t.api.get(`/streams/${secret.id}/members`, t.cast[role as 'owner']);
      expect(res.status).toBe(status);
      if (status === 200) expect(res.body.subscribers).toEqual([t.cast.owner.id, t.cast.moderator.id].sort((a, b) => a - b));
      else expect(res.body).toEqual({ result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    });

    it('hides a public channel from a guest who is not subscribed, and a missing one from anyone', async () => {
      expect((await t.api.get(`/streams/${open.id}/members`, t.cast.guest)).body.msg).toBe('Invalid channel ID');
      expect((await t.api.get(`/streams/999999/members`, t.cast.owner)).body.msg).toBe('Invalid channel ID');
    });
  });

  describe('GET /users/{user_id}/subscriptions/{stream_id}', () => {
    it('says whether the user is subscribed', async () => {
      const yes = await t.api.get(`/users/${t.cast.owner.id}/subscriptions/${open.id}`, t.cast.member);
      expect(yes.body).toEqual({ result: 'success', msg: '', is_subscribed: true });
      const no = await t.api.get(`/users/${t.cast.member.id}/subscriptions/${open.id}`, t.cast.member);
      expect(no.body.is_subscribed).toBe(false);
    });

    it.each([
      ['an unknown user', () => `/users/999999/subscriptions/${general.id}`, 'No such user'],
      ['a bot', () => `/users/${t.cast.bot.id}/subscriptions/${general.id}`, 'No such user'],
      ['a deactivated user', () => `/users/${t.cast.deactivated.id}/subscriptions/${general.id}`, 'User is deactivated'],
      ['an unknown channel', () => `/users/${t.cast.owner.id}/subscriptions/999999`, 'Invalid channel ID'],
      ['a private channel the caller may not see', () => `/users/${t.cast.owner.id}/subscriptions/${secret.id}`, 'Invalid channel ID'],
    ])('refuses %s', async (_what, path, msg) => {
      const res = await t.api.get(path(), t.cast.member);
      expect(res.status).toBe(400);
      expect(res.body.msg).toBe(msg);
    });

    it('checks the user before the channel', async () => {
      expect((await t.api.get(`/users/999999/subscriptions/999999`, t.cast.member)).body.msg).toBe('No such user');
    });
  });

  describe('POST and DELETE /default_streams', () => {
    it.each([
      ['owner', 200],
      ['admin', 200],
      ['moderator', 400],
      ['member', 400],
      ['guest', 400],
    ])('adding: %s answers %i', async (role, status) => {
      const c = await createChannel(t, `dflt-${role}`, [t.cast.owner, t.cast.admin, t.cast.guest]);
      const res = await t.api.post('/default_streams', t.cast[role as 'owner'], { stream_id: c.id });
      expect(res.status).toBe(status);
      const row = await t.ctx.db('channels').where({ id: c.id }).first('is_default');
      expect(Boolean(row!.is_default)).toBe(status === 200);
      if (status !== 200)
        expect(res.body).toEqual({ result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
    });

    it('sends the full list to everyone but guests, and register reports it', async () => {
      const c = await createChannel(t, 'dflt-events', [t.cast.owner]);
      const [owner, member, guest] = await registerAll([t.cast.owner, t.cast.member, t.cast.guest]);
      expect((await t.api.post('/default_streams', t.cast.admin, { stream_id: c.id })).status).toBe(200);
      const ids: number[] = (
        await t.ctx.db('channels').where({ realm_id: t.realmId, is_default: true, deactivated: false }).orderBy('id').pluck('id')
      ).map(Number);
      expect(ids).toContain(c.id);
      for (const client of [owner!, member!]) {
        expect(await pending(t, client)).toEqual([expect.objectContaining({ type: 'default_streams', default_streams: ids })]);
      }
      expect(await pending(t, guest!)).toEqual([]);
      expect((await register(t, t.cast.member)).state.realm_default_streams).toEqual(ids);

      // Adding it again changes nothing and tells nobody.
      expect((await t.api.post('/default_streams', t.cast.admin, { stream_id: c.id })).status).toBe(200);
      expect(await pending(t, owner!)).toEqual([]);

      expect((await t.api.delete('/default_streams', t.cast.admin, { stream_id: c.id })).status).toBe(200);
      const [event] = await pending(t, member!);
      expect(event).toMatchObject({ type: 'default_streams' });
      expect(event!.default_streams).not.toContain(c.id);
      expect(Boolean((await t.ctx.db('channels').where({ id: c.id }).first('is_default'))!.is_default)).toBe(false);
    });

    it('refuses private channels, archived ones and ones the administrator may not read', async () => {
      const priv = await createChannel(t, 'dflt-private', [t.cast.admin], { inviteOnly: true });
      expect((await t.api.post('/default_streams', t.cast.admin, { stream_id: priv.id })).body).toEqual({
        result: 'error',
        msg: 'Private channels cannot be made default.',
        code: 'BAD_REQUEST',
      });
      // The secret channel's content is closed to an administrator who is not subscribed.
      expect((await t.api.post('/default_streams', t.cast.admin, { stream_id: secret.id })).body.msg).toBe('Invalid channel ID');
      expect((await t.api.post('/default_streams', t.cast.admin, { stream_id: 999999 })).body.msg).toBe('Invalid channel ID');
      const gone = await createChannel(t, 'dflt-archived', [t.cast.owner]);
      await t.ctx.db('channels').where({ id: gone.id }).update({ deactivated: true });
      expect((await t.api.post('/default_streams', t.cast.admin, { stream_id: gone.id })).body.msg).toBe('Invalid channel ID');
      expect((await t.api.delete('/default_streams', t.cast.admin, { stream_id: gone.id })).body.msg).toBe('Invalid channel ID');
    });

    it('needs stream_id', async () => {
      const res = await t.api.post('/default_streams', t.cast.admin, {});
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('REQUEST_VARIABLE_MISSING');
    });
  });

  describe('DELETE /streams/{stream_id}', () => {
    it.each([
      ['owner', 200, ''],
      ['admin', 200, ''],
      ['moderator', 400, 'You do not have permission to administer this channel.'],
      ['member', 400, 'You do not have permission to administer this channel.'],
      ['guest', 400, 'You do not have permission to administer this channel.'],
    ])('a public channel others created: %s answers %i', async (role, status, msg) => {
      const c = await createChannel(t, `arch-${role}`, [t.cast.owner, t.cast.guest], { creator: t.cast.owner });
      const res = await t.api.delete(`/streams/${c.id}`, t.cast[role as 'owner']);
      expect(res.status).toBe(status);
      if (msg) expect(res.body).toEqual({ result: 'error', msg, code: 'CANNOT_ADMINISTER_CHANNEL' });
      expect(Boolean((await t.ctx.db('channels').where({ id: c.id }).first('deactivated'))!.deactivated)).toBe(status === 200);
    });

    it('lets the channel administrator (its creator) archive it, and hides private channels from others', async () => {
      const mine = await createChannel(t, 'arch-mine', [t.cast.member], { creator: t.cast.member });
      expect((await t.api.delete(`/streams/${mine.id}`, t.cast.member)).status).toBe(200);
      expect((await t.api.delete(`/streams/${secret.id}`, t.cast.member)).body.msg).toBe('Invalid channel ID');
      expect((await t.api.delete(`/streams/999999`, t.cast.owner)).body.msg).toBe('Invalid channel ID');
    });

    it("clears the organization's settings that named the channel, with one realm update_dict", async () => {
      const c = await createChannel(t, 'arch-announce', [t.cast.owner]);
      const other = await createChannel(t, 'arch-other', [t.cast.owner]);
      await t.ctx
        .db('realms')
        .where({ id: t.realmId })
        .update({ new_stream_announcements_stream_id: c.id, signup_announcements_stream_id: other.id });
      const watcher = await register(t, t.cast.member, { event_types: ['realm'] });
      expect((await t.api.delete(`/streams/${c.id}`, t.cast.admin)).status).toBe(200);
      const realm = (await t.ctx.db('realms').where({ id: t.realmId }).first())!;
      expect([realm.new_stream_announcements_stream_id, Number(realm.signup_announcements_stream_id)]).toEqual([null, other.id]);
      expect((await pending(t, watcher)).map(({ id: _id, ...e }) => e)).toEqual([
        { type: 'realm', op: 'update_dict', property: 'default', data: { new_stream_announcements_stream_id: -1 } },
      ]);
      const state = await t.api.post('/register', t.cast.member, { fetch_event_types: ['realm'] });
      expect(state.body.realm_new_stream_announcements_stream_id).toBe(-1);
      await t.ctx.db('realms').where({ id: t.realmId }).update({ signup_announcements_stream_id: null });
    });

    it('keeps messages and subscriptions, drops default status, tells each client its way, writes one audit row', async () => {
      const c = await createChannel(t, 'arch-events', [t.cast.owner, t.cast.member, t.cast.guest]);
      await t.api.post('/default_streams', t.cast.admin, { stream_id: c.id });
      const sent = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'arch-events', topic: 't', content: 'kept' });
      expect(sent.status).toBe(200);
      const modern = await register(t, t.cast.member, { client_capabilities: { archived_channels: true } });
      const legacy = await register(t, t.cast.owner);
      const guest = await register(t, t.cast.guest);
      const adminClient = await register(t, t.cast.admin);

      const res = await t.api.delete(`/streams/${c.id}`, t.cast.admin);
      expect(res.body).toEqual({ result: 'success', msg: '' });

      const row = (await t.ctx.db('channels').where({ id: c.id }).first())!;
      expect(Boolean(row.deactivated)).toBe(true);
      expect(Boolean(row.is_default)).toBe(false);
      expect(row.name).toBe('arch-events');
      expect(Number((await t.ctx.db('messages').where({ id: sent.body.id }).count({ n: '*' }).first())!.n)).toBe(1);
      expect(
        Number((await t.ctx.db('subscriptions').where({ recipient_id: c.recipient_id, active: true }).count({ n: '*' }).first())!.n),
      ).toBe(3);

      const update = { type: 'stream', op: 'update', stream_id: c.id, name: 'arch-events', property: 'is_archived', value: true };
      const deletion = { type: 'stream', op: 'delete', stream_ids: [c.id], streams: [{ stream_id: c.id }] };
      const modernEvents = await pending(t, modern);
      expect(modernEvents).toEqual([expect.objectContaining({ type: 'default_streams' }), expect.objectContaining(update)]);
      expect(await pending(t, legacy)).toEqual([expect.objectContaining({ type: 'default_streams' }), expect.objectContaining(deletion)]);
      // Guests hear of the channel as subscribers, not of default channels.
      expect(await pending(t, guest)).toEqual([expect.objectContaining(deletion)]);
      expect((await pending(t, adminClient)).map((e) => e.type)).toEqual(['default_streams', 'stream']);

      expect(await auditRows(c.id, AuditEventType.CHANNEL_DEACTIVATED)).toEqual([{ acting_user_id: t.cast.admin.id, extra_data: null }]);

      // Archived: listed on request, still readable by id, not archived twice, not postable.
      const listed = await t.api.get('/streams', t.cast.member, { exclude_archived: false });
      expect(listed.body.streams.find((s: any) => s.stream_id === c.id)).toMatchObject({ is_archived: true });
      expect((await t.api.get('/streams', t.cast.member)).body.streams.map((s: any) => s.stream_id)).not.toContain(c.id);
      expect((await t.api.get(`/streams/${c.id}`, t.cast.member)).body.stream.is_archived).toBe(true);
      expect((await t.api.get(`/streams/${c.id}/members`, t.cast.member)).body.subscribers).toHaveLength(3);
      expect((await t.api.delete(`/streams/${c.id}`, t.cast.admin)).body).toEqual({
        result: 'error',
        msg: 'Channel is already deactivated',
        code: 'BAD_REQUEST',
      });
      expect((await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'arch-events', topic: 't', content: 'no' })).status).toBe(
        400,
      );
    });
  });

  describe('PATCH /streams/{stream_id} is_archived=false (feature level 388)', () => {
    const unarchive = (id: number, who: UserRow, extra: Record<string, unknown> = {}) =>
      t.api.patch(`/streams/${id}`, who, { is_archived: false, ...extra });
    const archived = async (name: string, subscribers: UserRow[], opts: { inviteOnly?: boolean } = {}) => {
      const c = await createChannel(t, name, subscribers, { creator: t.cast.owner, ...opts });
      expect((await t.api.delete(`/streams/${c.id}`, t.cast.owner)).status).toBe(200);
      return c;
    };
    const row = async (id: number) => (await t.ctx.db('channels').where({ id }).first())!;

    it.each([
      ['owner', 200, ''],
      ['admin', 200, ''],
      ['moderator', 400, 'You do not have permission to administer this channel.'],
      ['member', 400, 'You do not have permission to administer this channel.'],
      ['guest', 400, 'You do not have permission to administer this channel.'],
    ])('an archived public channel others created: %s answers %i', async (role, status, msg) => {
      const c = await archived(`unarch-${role}`, [t.cast.owner, t.cast.guest]);
      const res = await unarchive(c.id, t.cast[role as 'owner']);
      expect(res.status).toBe(status);
      if (msg) expect(res.body).toEqual({ result: 'error', msg, code: 'CANNOT_ADMINISTER_CHANNEL' });
      expect(Boolean((await row(c.id)).deactivated)).toBe(status !== 200);
    });

    it('brings the channel back as it was, tells each client its way, writes an audit row without an actor', async () => {
      const c = await archived('unarch-events', [t.cast.owner, t.cast.member, t.cast.guest]);
      const modern = await register(t, t.cast.member, { client_capabilities: { archived_channels: true } });
      const legacy = await register(t, t.cast.moderator);
      const guest = await register(t, t.cast.guest);
      const outsider = await register(t, t.cast.guest, { event_types: ['stream'] });
      await t.ctx.db('subscriptions').where({ recipient_id: c.recipient_id, user_id: t.cast.guest.id }).update({ active: false });
      const res = await unarchive(c.id, t.cast.admin);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      const after = await row(c.id);
      expect([Boolean(after.deactivated), after.name, Boolean(after.invite_only), Boolean(after.is_default)]).toEqual([
        false,
        'unarch-events',
        false,
        false,
      ]);
      expect(await pending(t, modern)).toEqual([
        expect.objectContaining({
          type: 'stream',
          op: 'update',
          stream_id: c.id,
          name: 'unarch-events',
          property: 'is_archived',
          value: false,
        }),
      ]);
      const created = await pending(t, legacy);
      expect(created).toEqual([expect.objectContaining({ type: 'stream', op: 'create' })]);
      expect(created[0]!.streams).toEqual([expect.objectContaining({ stream_id: c.id, name: 'unarch-events', is_archived: false })]);
      // The guest is no longer subscribed to this public channel: it does not hear of it.
      expect(await pending(t, guest)).toEqual([]);
      expect(await pending(t, outsider)).toEqual([]);
      expect(await auditRows(c.id, AuditEventType.CHANNEL_REACTIVATED)).toEqual([{ acting_user_id: null, extra_data: null }]);
      expect((await t.api.get('/streams', t.cast.member)).body.streams.map((s: any) => s.stream_id)).toContain(c.id);
      expect(
        (await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'unarch-events', topic: 't', content: 'back' })).status,
      ).toBe(200);
    });

    it("refuses a channel that is not archived and a private one nobody is subscribed to, in Zulip's words, changing nothing", async () => {
      const live = await createChannel(t, 'unarch-live', [t.cast.owner]);
      expect((await unarchive(live.id, t.cast.admin)).body).toEqual({
        result: 'error',
        msg: 'Channel is not currently deactivated',
        code: 'BAD_REQUEST',
      });
      const lonely = await archived('unarch-lonely', [t.cast.owner], { inviteOnly: true });
      await t.ctx.db('subscriptions').where({ recipient_id: lonely.recipient_id }).update({ active: false });
      const watcher = await register(t, t.cast.owner);
      // Nothing of the request is written: neither the unarchive nor the description beside it.
      expect((await unarchive(lonely.id, t.cast.owner, { description: 'new' })).body).toEqual({
        result: 'error',
        msg: 'Channel is private and have no subscribers',
        code: 'BAD_REQUEST',
      });
      expect([Boolean((await row(lonely.id)).deactivated), (await row(lonely.id)).description]).toEqual([true, '']);
      expect(await pending(t, watcher)).toEqual([]);
      expect(await auditRows(lonely.id, AuditEventType.CHANNEL_REACTIVATED)).toEqual([]);
      // A deactivated user's subscription counts, as Zulip's.
      const ghost = await archived('unarch-ghost', [t.cast.owner, t.cast.deactivated], { inviteOnly: true });
      await t.ctx.db('subscriptions').where({ recipient_id: ghost.recipient_id, user_id: t.cast.owner.id }).update({ active: false });
      expect((await unarchive(ghost.id, t.cast.owner)).status).toBe(200);
    });

    it('does nothing with is_archived=true (archiving is DELETE), and unarchives a private channel with its privacy', async () => {
      const c = await archived('unarch-private', [t.cast.owner], { inviteOnly: true });
      expect((await t.api.patch(`/streams/${c.id}`, t.cast.owner, { is_archived: true })).body).toEqual({ result: 'success', msg: '' });
      expect(Boolean((await row(c.id)).deactivated)).toBe(true);
      const live = await createChannel(t, 'unarch-true-live', [t.cast.owner]);
      expect((await t.api.patch(`/streams/${live.id}`, t.cast.owner, { is_archived: true })).status).toBe(200);
      expect(Boolean((await row(live.id)).deactivated)).toBe(false);
      expect((await unarchive(c.id, t.cast.owner)).status).toBe(200);
      expect([Boolean((await row(c.id)).deactivated), Boolean((await row(c.id)).invite_only)]).toEqual([false, true]);
    });
  });

  describe('PATCH /users/me/subscriptions', () => {
    it('joins and leaves in one request, answering both answers merged', async () => {
      const leave = await createChannel(t, 'bulk-leave', [t.cast.member]);
      const client = await register(t, t.cast.member);
      const res = await t.api.patch('/users/me/subscriptions', t.cast.member, {
        add: [{ name: 'general' }, { name: 'bulk-new', description: 'made here' }],
        delete: ['bulk-leave', 'open'],
      });
      expect(res.body).toEqual({
        result: 'success',
        msg: '',
        subscribed: { [String(t.cast.member.id)]: ['bulk-new'] },
        already_subscribed: { [String(t.cast.member.id)]: ['general'] },
        removed: ['bulk-leave'],
        not_removed: ['open'],
      });
      const active = async (recipientId: number) =>
        Boolean((await t.ctx.db('subscriptions').where({ user_id: t.cast.member.id, recipient_id: recipientId }).first('active'))?.active);
      expect(await active(leave.recipient_id)).toBe(false);
      const created = (await t.ctx.db('channels').where({ realm_id: t.realmId, name: 'bulk-new' }).first())!;
      expect(created.description).toBe('made here');
      expect(await active(created.recipient_id!)).toBe(true);
      expect((await pending(t, client)).map((e) => `${e.type}:${e.op}`)).toEqual([
        'stream:create',
        'subscription:add',
        'subscription:remove',
      ]);
    });

    it('answers all four lists, empty for a part not given (Zulip composes both answers)', async () => {
      const res = await t.api.patch('/users/me/subscriptions', t.cast.member, { delete: ['bulk-new'] });
      expect(res.body).toEqual({
        result: 'success',
        msg: '',
        subscribed: {},
        already_subscribed: {},
        removed: ['bulk-new'],
        not_removed: [],
      });
    });

    it.each([
      ['nothing', {}, 'Nothing to do. Specify at least one of "add" or "delete".'],
      ['empty lists', { add: [], delete: [] }, 'Nothing to do. Specify at least one of "add" or "delete".'],
      ['a private channel to join', { add: [{ name: 'secret' }] }, 'Unable to access channel (secret).'],
    ])('refuses %s', async (_what, body, msg) => {
      const res = await t.api.patch('/users/me/subscriptions', t.cast.member, body);
      expect(res.status).toBe(400);
      expect(res.body.msg).toBe(msg);
    });

    it('refuses a channel to leave that the caller may not know, before joining anything', async () => {
      const res = await t.api.patch('/users/me/subscriptions', t.cast.member, { add: [{ name: 'bulk-never' }], delete: ['secret'] });
      expect(res.body).toEqual({ result: 'error', msg: 'Channel(s) (secret) do not exist', code: 'BAD_REQUEST' });
      expect(await t.ctx.db('channels').where({ realm_id: t.realmId, name: 'bulk-never' }).first()).toBeUndefined();
    });

    it('refuses a guest joining a public channel, as POST /users/me/subscriptions does', async () => {
      expect((await t.api.patch('/users/me/subscriptions', t.cast.guest, { add: [{ name: 'open' }] })).status).toBe(400);
    });
  });
});
