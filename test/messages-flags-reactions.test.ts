import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';

eachDatabase('message flags and reactions', (dialect) => {
  let t: TestServer;
  let inGeneral: number;
  let inLobby: number;
  let dm: number;
  let lobby: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, member, guest } = t.cast;
    await createChannel(t, 'general', [owner, admin, member, guest]);
    lobby = await createChannel(t, 'lobby', [owner, admin]);
    inGeneral = (await t.api.post('/messages', owner, { type: 'channel', to: 'general', topic: 'f', content: 'flag me' })).body.id;
    inLobby = (await t.api.post('/messages', owner, { type: 'channel', to: 'lobby', topic: 'f', content: 'lobby' })).body.id;
    dm = (await t.api.post('/messages', owner, { type: 'direct', to: [admin.id], content: 'dm' })).body.id;
  });
  afterAll(() => t.close());

  const flagsOf = async (userId: number, messageId: number) =>
    (await t.ctx.db('user_messages').where({ user_id: userId, message_id: messageId }).first('flags'))?.flags;

  describe('POST /messages/flags', () => {
    it('stars and unstars, sent multipart with a JSON list', async () => {
      const res = await t.api.call(
        'post',
        '/messages/flags',
        t.cast.member,
        { messages: [inGeneral], op: 'add', flag: 'starred' },
        { multipart: true },
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '', messages: [inGeneral] });
      expect(Number(await flagsOf(t.cast.member.id, inGeneral)) & 2).toBe(2);
      const starred = await t.api.get('/messages', t.cast.member, {
        anchor: 'newest',
        num_before: 10,
        num_after: 0,
        narrow: [{ operator: 'is', operand: 'starred' }],
      });
      expect(starred.body.messages.map((m: any) => m.id)).toEqual([inGeneral]);
      await t.api.post('/messages/flags', t.cast.member, { messages: [inGeneral], op: 'remove', flag: 'starred' });
      expect(Number(await flagsOf(t.cast.member.id, inGeneral)) & 2).toBe(0);
    });

    it('marks read and unread, and publishes update_message_flags', async () => {
      const seen: any[] = [];
      const off = t.ctx.bus.subscribe((d) => seen.push(d));
      try {
        await t.api.post('/messages/flags', t.cast.member, { messages: [inGeneral], op: 'add', flag: 'read' });
        expect(Number(await flagsOf(t.cast.member.id, inGeneral)) & 1).toBe(1);
        expect(seen[0].event).toMatchObject({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [inGeneral] });
        expect(seen[0].userIds).toEqual([t.cast.member.id]);
        const res = await t.api.post('/messages/flags', t.cast.member, { messages: [inGeneral], op: 'remove', flag: 'read' });
        expect(res.body.ignored_because_not_subscribed_channels).toEqual([]);
        expect(Number(await flagsOf(t.cast.member.id, inGeneral)) & 1).toBe(0);
      } finally {
        off();
      }
    });

    it('creates a historical row when flagging public history one did not receive', async () => {
      expect(await flagsOf(t.cast.member.id, inLobby)).toBeUndefined();
      const res = await t.api.post('/messages/flags', t.cast.member, { messages: [inLobby], op: 'add', flag: 'starred' });
      expect(res.status).toBe(200);
      expect(Number(await flagsOf(t.cast.member.id, inLobby))).toBe(1024 + 2 + 1); // historical | starred | read
      const m = (await t.api.get(`/messages/${inLobby}`, t.cast.member)).body.message;
      expect(m.flags).toEqual(['read', 'starred', 'historical']);
    });

    it('skips channels one is not subscribed to when marking unread', async () => {
      const res = await t.api.post('/messages/flags', t.cast.member, { messages: [inLobby], op: 'remove', flag: 'read' });
      expect(res.body.ignored_because_not_subscribed_channels).toEqual([lobby.id]);
      expect(Number(await flagsOf(t.cast.member.id, inLobby)) & 1).toBe(1);
    });

    it.each([
      ['a flag that is not editable', { flag: 'mentioned' }, "Flag not editable: 'mentioned'"],
      ['an internal flag', { flag: 'is_private' }, "Invalid flag: 'is_private'"],
      ['an unknown flag', { flag: 'sparkly' }, "Invalid flag: 'sparkly'"],
      ['the name of an Object.prototype member', { flag: 'constructor' }, "Invalid flag: 'constructor'"],
      ['an unknown operation', { op: 'toggle' }, "Invalid message flag operation: 'toggle'"],
      ['a message one cannot read', { messagesOf: 'dm' }, 'Invalid message(s)'],
      ['a list that is not a list', { messages: 'abc' }, 'messages is not valid JSON'],
    ])('refuses %s and changes nothing', async (_what, override: any, msg) => {
      const before = await t.ctx
        .db('user_messages')
        .where({ user_id: t.cast.member.id })
        .select('message_id', 'flags')
        .orderBy('message_id');
      const messages = override.messagesOf === 'dm' ? [dm] : (override.messages ?? [inGeneral]);
      const res = await t.api.post('/messages/flags', t.cast.member, {
        messages,
        op: override.op ?? 'add',
        flag: override.flag ?? 'starred',
      });
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code: 'BAD_REQUEST' }]);
      const after = await t.ctx
        .db('user_messages')
        .where({ user_id: t.cast.member.id })
        .select('message_id', 'flags')
        .orderBy('message_id');
      expect(after).toEqual(before);
    });
  });

  describe('POST /messages/flags/narrow', () => {
    it('marks a narrow read and reports what it processed', async () => {
      for (let i = 0; i < 3; i++)
        await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: 'bulk', content: `b${i}` });
      const res = await t.api.post('/messages/flags/narrow', t.cast.member, {
        anchor: 'oldest',
        num_before: 0,
        num_after: 100,
        narrow: [
          { operator: 'channel', operand: 'general' },
          { operator: 'topic', operand: 'bulk' },
        ],
        op: 'add',
        flag: 'read',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ processed_count: 3, updated_count: 3, found_oldest: true, found_newest: true });
      expect(res.body.last_processed_id).toBeGreaterThan(res.body.first_processed_id);
      const unread = await t.api.get('/messages', t.cast.member, {
        anchor: 'newest',
        num_before: 10,
        num_after: 0,
        narrow: [
          { operator: 'topic', operand: 'bulk' },
          { operator: 'is', operand: 'unread' },
        ],
      });
      expect(unread.body.messages).toEqual([]);
    });

    it('refuses an unknown flag operation', async () => {
      const res = await t.api.post('/messages/flags/narrow', t.cast.member, {
        anchor: 'newest',
        num_before: 1,
        num_after: 0,
        narrow: [],
        op: 'x',
        flag: 'read',
      });
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg: "Invalid message flag operation: 'x'", code: 'BAD_REQUEST' }]);
    });
  });

  describe('reactions', () => {
    it('adds by name, by code, lists them oldest first, and removes them', async () => {
      const add1 = await t.api.post(`/messages/${inGeneral}/reactions`, t.cast.member, { emoji_name: 'octopus' });
      expect(add1.status).toBe(200);
      const add2 = await t.api.post(`/messages/${inGeneral}/reactions`, t.cast.guest, {
        emoji_name: 'thumbs_up',
        emoji_code: '1f44d',
        reaction_type: 'unicode_emoji',
      });
      expect(add2.status).toBe(200);
      const m = (await t.api.get(`/messages/${inGeneral}`, t.cast.member)).body.message;
      expect(m.reactions).toEqual([
        { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji', user_id: t.cast.member.id },
        { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: t.cast.guest.id },
      ]);
      const has = await t.api.get('/messages', t.cast.member, {
        anchor: 'newest',
        num_before: 50,
        num_after: 0,
        narrow: [{ operator: 'has', operand: 'reaction' }],
      });
      expect(has.body.messages.map((x: any) => x.id)).toEqual([inGeneral]);
      const removed = await t.api.delete(`/messages/${inGeneral}/reactions`, t.cast.guest, { emoji_code: '1f44d' });
      expect(removed.status).toBe(200);
      const after = (await t.api.get(`/messages/${inGeneral}`, t.cast.member)).body.message;
      expect(after.reactions.map((r: any) => r.user_id)).toEqual([t.cast.member.id]);
    });

    it('accepts an alias name for the same emoji and refuses it twice', async () => {
      const again = await t.api.post(`/messages/${inGeneral}/reactions`, t.cast.member, { emoji_name: 'octopus', emoji_code: '1f419' });
      expect(again.body).toEqual({ result: 'error', msg: 'Reaction already exists.', code: 'REACTION_ALREADY_EXISTS' });
    });

    it('reacting to public history records it as historical', async () => {
      const res = await t.api.post(`/messages/${inLobby}/reactions`, t.cast.moderator, { emoji_name: 'tada' });
      expect(res.status).toBe(200);
      expect(Number(await flagsOf(t.cast.moderator.id, inLobby)) & 1024).toBe(1024);
    });

    it('publishes reaction events to those who can see the message', async () => {
      const seen: any[] = [];
      const off = t.ctx.bus.subscribe((d) => seen.push(d));
      try {
        await t.api.post(`/messages/${dm}/reactions`, t.cast.admin, { emoji_name: 'heart' });
        expect(seen[0].event).toMatchObject({ type: 'reaction', op: 'add', message_id: dm, emoji_name: 'heart', user_id: t.cast.admin.id });
        expect([...seen[0].userIds].sort()).toEqual([t.cast.owner.id, t.cast.admin.id].sort());
      } finally {
        off();
      }
    });

    it.each([
      ['an unknown emoji name', 'post', { emoji_name: 'not_an_emoji' }, 400, "Emoji 'not_an_emoji' does not exist", 'BAD_REQUEST'],
      ['an invalid emoji code', 'post', { emoji_name: 'octopus', emoji_code: 'zzzz' }, 400, 'Invalid emoji code.', 'BAD_REQUEST'],
      ["a name that is not the code's", 'post', { emoji_name: 'octopus', emoji_code: '1f44d' }, 400, 'Invalid emoji name.', 'BAD_REQUEST'],
      [
        'an unknown custom emoji',
        'post',
        { emoji_name: 'parrot', emoji_code: '42', reaction_type: 'realm_emoji' },
        400,
        'Invalid custom emoji.',
        'BAD_REQUEST',
      ],
      [
        'an unknown reaction type',
        'post',
        { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'weird' },
        400,
        'Invalid reaction_type',
        'BAD_REQUEST',
      ],
      ['removing a reaction that is absent', 'delete', { emoji_name: 'tada' }, 400, "Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST'],
      [
        'removing with neither name nor code',
        'delete',
        {},
        400,
        'At least one of the following arguments must be present: emoji_name, emoji_code',
        'BAD_REQUEST',
      ],
    ] as const)('refuses %s', async (_what, method, fields, status, msg, code) => {
      const before = await t.ctx.db('reactions').count({ n: '*' }).first();
      const res = await t.api.call(method, `/messages/${inGeneral}/reactions`, t.cast.member, fields);
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ result: 'error', msg, code });
      expect(await t.ctx.db('reactions').count({ n: '*' }).first()).toEqual(before);
    });

    it('refuses a message one cannot read, as Invalid message(s)', async () => {
      const res = await t.api.post(`/messages/${dm}/reactions`, t.cast.member, { emoji_name: 'tada' });
      expect(res.body).toEqual({ result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    });
  });
});

eachDatabase('long id lists', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  it('accepts as many message ids as the contract allows (10,000), and refuses one more', async () => {
    const ids = Array.from({ length: 10000 }, (_, i) => i + 1);
    const remove = await t.api.post('/messages/flags', t.cast.member, { messages: ids, op: 'remove', flag: 'starred' });
    expect(remove.status).toBe(200);
    const tooMany = await t.api.post('/messages/flags', t.cast.member, { messages: [...ids, 10001], op: 'remove', flag: 'starred' });
    expect(tooMany.body).toEqual({ result: 'error', msg: 'messages has too many items', code: 'BAD_REQUEST' });
    const fetched = await t.api.get('/messages', t.cast.member, { message_ids: ids.slice(0, 1500) });
    expect(fetched.status).toBe(200);
    expect(fetched.body.messages).toEqual([]);
  });
});
