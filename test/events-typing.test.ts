import { parseSettings, UserSettings } from '../src/domain/user-settings';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { Client, pending, register, sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import { subscribe, TestServer } from './support/server';

/** POST /typing and POST /messages/{id}/typing: the right receivers, Zulip's shapes and errors. */
eachDatabase('events: typing notifications', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  beforeAll(async () => {
    ({ t, general, secret } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  const typingClient = (u: UserRow) =>
    register(t, u, { event_types: ['typing', 'typing_edit_message'], client_capabilities: { stream_typing_notifications: true } });
  const clients = (...users: UserRow[]) => Promise.all(users.map(typingClient));
  const received = async (cs: Client[]) => Promise.all(cs.map(async (c) => (await pending(t, c)).map(({ id: _id, ...e }) => e)));
  const setSetting = async (u: UserRow, change: Partial<UserSettings>) => {
    const row = await t.ctx.db('users').where({ id: u.id }).first('settings');
    await t.ctx
      .db('users')
      .where({ id: u.id })
      .update({ settings: JSON.stringify({ ...parseSettings(row!.settings), ...change }) });
  };
  const person = (u: UserRow) => ({ user_id: u.id, email: u.email });
  const ok = { result: 'success', msg: '' };

  describe('direct messages', () => {
    it('reaches the other participants, never the typist, with every participant named', async () => {
      const { owner, admin, member, moderator } = t.cast;
      const cs = await clients(member, owner, admin, moderator);
      expect((await t.api.post('/typing', member, { op: 'start', to: [owner.id, admin.id] })).body).toEqual(ok);
      expect((await t.api.post('/typing', member, { type: 'direct', op: 'stop', to: [owner.id] })).body).toEqual(ok);
      const [m, o, a, mod] = await received(cs);
      const start = {
        type: 'typing',
        op: 'start',
        message_type: 'direct',
        sender: person(member),
        recipients: [person(owner), person(admin), person(member)],
      };
      const stop = {
        type: 'typing',
        op: 'stop',
        message_type: 'direct',
        sender: person(member),
        recipients: [person(owner), person(member)],
      };
      expect(o).toEqual([start, stop]);
      expect(a).toEqual([start]);
      expect([m, mod]).toEqual([[], []]);
    });

    it('skips receivers who turned typing notifications off', async () => {
      const { owner, member } = t.cast;
      await setSetting(owner, { receives_typing_notifications: false });
      try {
        const [o] = await clients(owner);
        await t.api.post('/typing', member, { op: 'start', to: [owner.id] });
        expect(await received([o!])).toEqual([[]]);
      } finally {
        await setSetting(owner, { receives_typing_notifications: true });
      }
    });

    it.each([
      ['no op', { to: [1] }, { msg: "Missing 'op' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'op' }],
      ['a bad op', { op: 'pause', to: [1] }, { msg: 'Invalid op', code: 'BAD_REQUEST' }],
      ['a bad type', { type: 'carrier', op: 'start', to: [1] }, { msg: 'Invalid type', code: 'BAD_REQUEST' }],
      ['no to', { op: 'start' }, { msg: "Missing 'to' argument", code: 'BAD_REQUEST' }],
      ['an empty to', { op: 'start', to: [] }, { msg: "Empty 'to' list", code: 'BAD_REQUEST' }],
      ['an unknown user', { op: 'start', to: [9999999] }, { msg: 'Invalid user ID 9999999', code: 'BAD_REQUEST' }],
    ])('refuses %s and notifies nobody', async (_what, body, error) => {
      const [o] = await clients(t.cast.owner);
      const res = await t.api.post('/typing', t.cast.member, body);
      expect([res.status, res.body]).toEqual([400, { result: 'error', ...error }]);
      expect(await received([o!])).toEqual([[]]);
    });

    it('refuses a typist who turned sending them off', async () => {
      await setSetting(t.cast.member, { send_private_typing_notifications: false });
      try {
        const res = await t.api.post('/typing', t.cast.member, { op: 'start', to: [t.cast.owner.id] });
        expect(res.body).toEqual({
          result: 'error',
          msg: 'User has disabled typing notifications for direct messages',
          code: 'BAD_REQUEST',
        });
      } finally {
        await setSetting(t.cast.member, { send_private_typing_notifications: true });
      }
    });
  });

  describe('channels', () => {
    it('reaches the subscribers whose clients handle channel typing, not the typist', async () => {
      const { owner, admin, member } = t.cast;
      const [m, a, o] = await clients(member, admin, owner);
      const legacy = await register(t, admin, { event_types: ['typing'] });
      const open = (await t.ctx.db('channels').where({ name: 'open' }).first('id'))!.id;
      await t.api.post('/typing', owner, { type: 'channel', op: 'start', stream_id: general.id, topic: 'plans' });
      await t.api.post('/typing', owner, { type: 'channel', op: 'start', stream_id: open, topic: 'elsewhere' }); // member and admin are not in it
      await t.api.post('/typing', owner, { type: 'stream', op: 'stop', stream_id: general.id, topic: '(no topic)' });
      const [gotM, gotA, gotO, gotLegacy] = await received([m!, a!, o!, legacy]);
      const event = (op: string, topic: string) => ({
        type: 'typing',
        op,
        message_type: 'stream',
        sender: person(owner),
        stream_id: general.id,
        topic,
      });
      expect(gotM).toEqual([event('start', 'plans'), event('stop', 'general chat')]);
      expect(gotA).toEqual(gotM);
      expect([gotO, gotLegacy]).toEqual([[], []]);
    });

    it('keeps the empty topic as "" for clients that handle it', async () => {
      const c = await register(t, t.cast.member, {
        event_types: ['typing'],
        client_capabilities: { stream_typing_notifications: true, empty_topic_name: true },
      });
      await t.api.post('/typing', t.cast.owner, { type: 'channel', op: 'start', stream_id: general.id, topic: 'general chat' });
      expect((await received([c]))[0]!.map((e) => e.topic)).toEqual(['']);
    });

    it.each([
      ['no stream_id', { topic: 'x' }, "Missing 'stream_id' argument"],
      ['no topic', { stream_id: 999999 }, 'Missing topic'],
      ['a negative stream_id', { stream_id: -1, topic: 'x' }, 'stream_id is too small'],
      ['an unknown channel', { stream_id: 999999, topic: 'x' }, 'Invalid channel ID'],
    ])('refuses %s', async (_what, body, msg) => {
      const res = await t.api.post('/typing', t.cast.member, { type: 'channel', op: 'start', ...body });
      expect(res.body).toEqual({ result: 'error', msg, code: 'BAD_REQUEST' });
    });

    it('refuses channels the typist cannot read or post in', async () => {
      const [mod] = await clients(t.cast.moderator);
      const privateChannel = await t.api.post('/typing', t.cast.admin, { type: 'channel', op: 'start', stream_id: secret.id, topic: 'x' });
      expect([privateChannel.status, privateChannel.body]).toEqual([
        400,
        { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' },
      ]);
      const open = (await t.ctx.db('channels').where({ name: 'open' }).first('id'))!.id;
      const guest = await t.api.post('/typing', t.cast.guest, { type: 'channel', op: 'start', stream_id: open, topic: 'x' });
      expect([guest.status, guest.body]).toEqual([400, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' }]);
      const nobody = (await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:nobody' }).first('id'))!.id;
      const before = await t.ctx.db('channels').where({ id: general.id }).first('can_send_message_group');
      await t.ctx.db('channels').where({ id: general.id }).update({ can_send_message_group: nobody });
      try {
        const res = await t.api.post('/typing', t.cast.member, { type: 'channel', op: 'start', stream_id: general.id, topic: 'x' });
        expect([res.status, res.body]).toEqual([
          400,
          { result: 'error', msg: 'You do not have permission to post in this channel.', code: 'BAD_REQUEST' },
        ]);
      } finally {
        await t.ctx.db('channels').where({ id: general.id }).update(before!);
      }
      expect(await received([mod!])).toEqual([[]]);
    });

    it('refuses a typist who turned channel typing notifications off', async () => {
      await setSetting(t.cast.member, { send_stream_typing_notifications: false });
      try {
        const res = await t.api.post('/typing', t.cast.member, { type: 'channel', op: 'start', stream_id: general.id, topic: 'x' });
        expect([res.status, res.body]).toEqual([
          400,
          { result: 'error', msg: 'User has disabled typing notifications for channel messages', code: 'BAD_REQUEST' },
        ]);
      } finally {
        await setSetting(t.cast.member, { send_stream_typing_notifications: true });
      }
    });
  });

  describe('editing a message', () => {
    it('tells the channel who is editing which message', async () => {
      const { owner, member, admin } = t.cast;
      const id = await sendToChannel(t, owner, 'general', 'edits', 'typo');
      const [m, a, o] = await clients(member, admin, owner);
      expect((await t.api.post(`/messages/${id}/typing`, owner, { op: 'start' })).body).toEqual(ok);
      const event = {
        type: 'typing_edit_message',
        op: 'start',
        sender_id: owner.id,
        message_id: id,
        recipient: { type: 'channel', channel_id: general.id, topic: 'edits' },
      };
      expect(await received([m!, a!, o!])).toEqual([[event], [event], []]);
    });

    it('in a channel with protected history, only subscribers who received the message', async () => {
      const { owner, moderator, admin } = t.cast;
      const id = await sendToChannel(t, owner, 'secret', 'old', 'before you came');
      await subscribe(t, secret, [admin]);
      const [mod, a] = await clients(moderator, admin);
      await t.api.post(`/messages/${id}/typing`, owner, { op: 'stop' });
      const [gotMod, gotA] = await received([mod!, a!]);
      expect(gotMod.map((e) => e.message_id)).toEqual([id]);
      expect(gotA).toEqual([]);
    });

    it('in a conversation, the other participants, named in the event', async () => {
      const { owner, member, admin } = t.cast;
      const id = await sendDirect(t, member, [owner, admin], 'group chat');
      const [o, a, m] = await clients(owner, admin, member);
      await t.api.post(`/messages/${id}/typing`, member, { op: 'start' });
      const event = {
        type: 'typing_edit_message',
        op: 'start',
        sender_id: member.id,
        message_id: id,
        recipient: { type: 'direct', user_ids: [owner.id, admin.id].sort((x, y) => x - y) },
      };
      expect(await received([o!, a!, m!])).toEqual([[event], [event], []]);
    });

    it.each([
      ['a message one cannot read', 'secret-message', 'Invalid message(s)'],
      ["someone else's message", 'owner-message', "You don't have permission to edit this message"],
    ])('refuses %s', async (_what, which, msg) => {
      const id = await sendToChannel(t, t.cast.owner, which === 'secret-message' ? 'secret' : 'general', 'x', 'not yours');
      const res = await t.api.post(`/messages/${id}/typing`, t.cast.member, { op: 'start' });
      expect(res.body).toEqual({ result: 'error', msg, code: 'BAD_REQUEST' });
    });

    it('refuses once the edit time limit has passed', async () => {
      const id = await sendToChannel(t, t.cast.member, 'general', 'x', 'old news');
      await t.ctx
        .db('messages')
        .where({ id })
        .update({ date_sent: Math.floor(Date.now() / 1000) - 3600 });
      const res = await t.api.post(`/messages/${id}/typing`, t.cast.member, { op: 'start' });
      expect([res.status, res.body]).toEqual([
        400,
        { result: 'error', msg: 'The time limit for editing this message has passed', code: 'BAD_REQUEST' },
      ]);
    });
  });
});
