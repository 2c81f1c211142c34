import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { pending, register, sendDirect, sendToChannel } from './support/events';
import { createChannel, startTestServer, type TestServer } from './support/server';

eachDatabase('bulk mark as read', (dialect) => {
  let t: TestServer;
  let lobby: { id: number; recipient_id: number };
  let hidden: { id: number; recipient_id: number };
  let defaults: { batch: number; budget: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const c = t.cast;
    lobby = await createChannel(t, 'lobby', [c.owner, c.admin, c.moderator, c.member, c.guest, c.bot]);
    await createChannel(t, 'side', [c.owner, c.admin, c.moderator, c.member, c.bot]);
    hidden = await createChannel(t, 'hidden', [c.owner], { inviteOnly: true });
    defaults = { batch: t.ctx.config.markReadBatchSize, budget: t.ctx.config.markReadTimeBudgetMs };
  });
  afterEach(() => {
    t.ctx.config.markReadBatchSize = defaults.batch;
    t.ctx.config.markReadTimeBudgetMs = defaults.budget;
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const unreadIds = async (user: UserRow, narrow: unknown[] = []) => {
    const res = await t.api.get('/messages', user, {
      anchor: 'newest',
      num_before: 1000,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'unread' }, ...narrow],
    });
    expect(res.status).toBe(200);
    return (res.body.messages as Array<{ id: number }>).map((m) => m.id);
  };
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  /** Messages from the owner to everyone: some in lobby (two topics), some in side, one DM to `to`. */
  const sendSome = async (to: UserRow, n = 2) => {
    const ids: Record<string, number[]> = { plans: [], other: [], side: [], dm: [] };
    for (let i = 0; i < n; i++) {
      ids.plans!.push(await sendToChannel(t, t.cast.owner, 'lobby', 'Plans', `plan ${i}`));
      ids.other!.push(await sendToChannel(t, t.cast.owner, 'lobby', 'other', `other ${i}`));
      ids.side!.push(await sendToChannel(t, t.cast.owner, 'side', 'x', `side ${i}`));
    }
    ids.dm!.push(await sendDirect(t, t.cast.owner, [to], 'a direct message'));
    return ids;
  };

  describe('POST /mark_all_as_read', () => {
    it('marks every unread message read and tells the clients once, with all: true', async () => {
      const user = t.cast.member;
      await sendSome(user);
      expect((await unreadIds(user)).length).toBeGreaterThanOrEqual(7);
      const c = await register(t, user, { event_types: ['update_message_flags'] });
      const res = await t.api.post('/mark_all_as_read', user);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '', complete: true });
      expect(await unreadIds(user)).toEqual([]);
      expect((await pending(t, c)).map(({ id: _, ...e }) => e)).toEqual([
        { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: true },
      ]);
      // Nothing else was touched: the sender's and another reader's flags are theirs.
      expect((await unreadIds(t.cast.moderator)).length).toBeGreaterThan(0);
    });

    it('works in batches: out of time it answers complete:false, keeps what it marked, sends nothing; called again it finishes', async () => {
      const user = t.cast.moderator;
      await t.api.post('/mark_all_as_read', user);
      await sendSome(user, 4); // 13 unread
      const before = await unreadIds(user);
      expect(before).toHaveLength(13);
      t.ctx.config.markReadBatchSize = 3;
      t.ctx.config.markReadTimeBudgetMs = 1; // one batch per request
      const c = await register(t, user, { event_types: ['update_message_flags'] });
      const first = await t.api.post('/mark_all_as_read', user);
      expect(first.body).toEqual({ result: 'success', msg: '', complete: false });
      // The newest first, as Zulip's batches go.
      expect(await unreadIds(user)).toEqual(before.slice(0, 10));
      let calls = 1;
      let complete = false;
      while (!complete && calls < 20) {
        complete = (await t.api.post('/mark_all_as_read', user)).body.complete;
        calls++;
      }
      expect(complete).toBe(true);
      expect(calls).toBe(5); // 3 + 3 + 3 + 3 + the last one, which finds 1 (fewer than a batch)
      expect(await unreadIds(user)).toEqual([]);
      expect((await pending(t, c)).map((e) => [e.all, e.messages])).toEqual([[true, []]]);
    });

    it('with a budget to spare, one request runs every batch', async () => {
      const user = t.cast.admin;
      await t.api.post('/mark_all_as_read', user);
      await sendSome(user, 3);
      t.ctx.config.markReadBatchSize = 2;
      const res = await t.api.post('/mark_all_as_read', user);
      expect(res.body.complete).toBe(true);
      expect(await unreadIds(user)).toEqual([]);
    });

    it.each(['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const)('%s may mark its own messages read', async (role) => {
      const user = t.cast[role];
      if (role !== 'owner') await sendDirect(t, t.cast.owner, [user], 'hi');
      const res = await t.api.post('/mark_all_as_read', user);
      expect(res.body).toEqual({ result: 'success', msg: '', complete: true });
      expect(await unreadIds(user)).toEqual([]);
    });

    it('needs credentials', async () => {
      expect((await t.api.post('/mark_all_as_read', null)).status).toBe(401);
    });
  });

  describe('POST /mark_stream_as_read', () => {
    it("marks the channel's unread messages only, with events listing them as POST /messages/flags does", async () => {
      const user = t.cast.member;
      await t.api.post('/mark_all_as_read', user);
      const ids = await sendSome(user);
      const c = await register(t, user, { event_types: ['update_message_flags'] });
      const res = await t.api.post('/mark_stream_as_read', user, { stream_id: lobby.id });
      expect(res.body).toEqual({ result: 'success', msg: '' });
      const lobbyIds = [...ids.plans!, ...ids.other!].sort((a, b) => a - b);
      expect((await unreadIds(user)).sort((a, b) => a - b)).toEqual([...ids.side!, ...ids.dm!].sort((a, b) => a - b));
      expect((await pending(t, c)).map(({ id: _, ...e }) => e)).toEqual([
        { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: lobbyIds, all: false },
      ]);
    });

    it('marks in batches until none is left, one event per batch', async () => {
      const user = t.cast.member;
      await t.api.post('/mark_all_as_read', user);
      const ids = await sendSome(user, 3);
      t.ctx.config.markReadBatchSize = 4;
      const c = await register(t, user, { event_types: ['update_message_flags'] });
      await t.api.post('/mark_stream_as_read', user, { stream_id: lobby.id });
      expect(await unreadIds(user, [{ operator: 'channel', operand: lobby.id }])).toEqual([]);
      const events = await pending(t, c);
      expect(events.map((e) => e.messages.length)).toEqual([4, 2]);
      expect(events.flatMap((e) => e.messages).sort((a: number, b: number) => a - b)).toEqual(
        [...ids.plans!, ...ids.other!].sort((a, b) => a - b),
      );
    });

    it('refuses a channel the caller may not read, a missing one and an archived one', async () => {
      const archived = await createChannel(t, 'old-lobby', [t.cast.member]);
      await t.ctx.db('channels').where({ id: archived.id }).update({ deactivated: true });
      for (const [user, id] of [
        [t.cast.member, hidden.id],
        [t.cast.admin, hidden.id],
        [t.cast.member, 99999999],
        [t.cast.member, archived.id],
      ] as const) {
        const res = await t.api.post('/mark_stream_as_read', user, { stream_id: id });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(refusal('Invalid channel ID'));
      }
      // A guest reads only the channels it is subscribed to.
      const side = await t.ctx.db('channels').where({ name: 'side' }).first('id');
      expect((await t.api.post('/mark_stream_as_read', t.cast.guest, { stream_id: side!.id })).body).toEqual(refusal('Invalid channel ID'));
      expect((await t.api.post('/mark_stream_as_read', t.cast.guest, { stream_id: lobby.id })).status).toBe(200);
      expect((await t.api.post('/mark_stream_as_read', t.cast.owner, { stream_id: hidden.id })).status).toBe(200);
    });

    it('refuses bad input', async () => {
      const missing = await t.api.post('/mark_stream_as_read', t.cast.member, {});
      expect(missing.body).toEqual({
        result: 'error',
        msg: "Missing 'stream_id' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'stream_id',
      });
      expect((await t.api.post('/mark_stream_as_read', t.cast.member, { stream_id: 'abc' })).status).toBe(400);
      expect((await t.api.post('/mark_stream_as_read', t.cast.member, { stream_id: -1 })).status).toBe(400);
    });
  });

  describe('POST /mark_topic_as_read', () => {
    it("marks the topic's unread messages only, the topic compared ignoring case", async () => {
      const user = t.cast.member;
      await t.api.post('/mark_all_as_read', user);
      const ids = await sendSome(user);
      const c = await register(t, user, { event_types: ['update_message_flags'] });
      const res = await t.api.post('/mark_topic_as_read', user, { stream_id: lobby.id, topic_name: 'PLANS' });
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect((await unreadIds(user)).sort((a, b) => a - b)).toEqual([...ids.other!, ...ids.side!, ...ids.dm!].sort((a, b) => a - b));
      expect((await pending(t, c)).map((e) => e.messages)).toEqual([ids.plans]);
    });

    it('"general chat" means the empty topic', async () => {
      const user = t.cast.member;
      await t.api.post('/mark_all_as_read', user);
      const empty = await sendToChannel(t, t.cast.owner, 'lobby', '', 'in the empty topic');
      const named = await sendToChannel(t, t.cast.owner, 'lobby', 'named', 'elsewhere');
      const res = await t.api.post('/mark_topic_as_read', user, { stream_id: lobby.id, topic_name: 'general chat' });
      expect(res.status).toBe(200);
      const left = await unreadIds(user);
      expect(left).toContain(named);
      expect(left).not.toContain(empty);
    });

    it('refuses a topic in which the caller received no message, and a channel it may not read', async () => {
      const user = t.cast.member;
      const res = await t.api.post('/mark_topic_as_read', user, { stream_id: lobby.id, topic_name: 'never used' });
      expect(res.body).toEqual(refusal("No such topic 'never used'"));
      expect((await t.api.post('/mark_topic_as_read', user, { stream_id: hidden.id, topic_name: 'x' })).body).toEqual(
        refusal('Invalid channel ID'),
      );
      const missing = await t.api.post('/mark_topic_as_read', user, { stream_id: lobby.id });
      expect(missing.body).toMatchObject({ code: 'REQUEST_VARIABLE_MISSING', var_name: 'topic_name' });
    });
  });
});
