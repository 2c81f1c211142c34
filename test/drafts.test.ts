import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import type { TestServer } from './support/server';
import { createChannel, startTestServer } from './support/server';

eachDatabase('drafts', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const c = t.cast;
    general = await createChannel(t, 'drafting', [c.owner, c.admin, c.moderator, c.member, c.guest, c.bot]);
    secret = await createChannel(t, 'drafting-secret', [c.owner], { inviteOnly: true });
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const countAll = async () => Number(((await t.ctx.db('drafts').count('* as n')) as Array<{ n: number }>)[0]!.n);
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  const notFound = refusal('Draft does not exist');
  const streamDraft = (over: Record<string, unknown> = {}) => ({
    type: 'stream',
    to: [general.id],
    topic: 'plans',
    content: 'Shall we ship?',
    timestamp: 1595479019,
    ...over,
  });
  const create = async (user: UserRow, drafts: Array<Record<string, unknown>>) => {
    const res = await t.api.post('/drafts', user, { drafts });
    expect(res.body).toMatchObject({ result: 'success' });
    return res.body.ids as number[];
  };
  const list = async (user: UserRow) => (await t.api.get('/drafts', user)).body.drafts as Array<Record<string, unknown>>;
  const setSync = async (user: UserRow, on: boolean) => {
    const res = await t.api.patch('/settings', user, { enable_drafts_synchronization: on });
    expect(res.status).toBe(200);
  };

  describe('POST /drafts', () => {
    it('creates several at once, in order, keeping what Zulip keeps of each', async () => {
      const c = t.cast;
      const ids = await create(c.member, [
        streamDraft(),
        { type: 'private', to: [c.admin.id], topic: 'ignored for DMs', content: 'psst', timestamp: 1595479020 },
        { type: 'private', to: [c.owner.id, c.admin.id, c.member.id, c.admin.id], topic: '', content: 'group', timestamp: 1595479021 },
        { type: 'private', to: [c.member.id], topic: '', content: 'note to self', timestamp: 1595479022 },
        { type: 'private', to: [], topic: 'no one yet', content: 'nobody', timestamp: 1595479023 },
        { type: '', to: [general.id], topic: 'x', content: 'typeless', timestamp: 1595479024.9 },
      ]);
      expect(ids).toHaveLength(6);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      const byId = new Map((await list(c.member)).map((d) => [d.id, d]));
      expect(ids.map((id) => byId.get(id))).toEqual([
        { id: ids[0], type: 'stream', to: [general.id], topic: 'plans', content: 'Shall we ship?', timestamp: 1595479019 },
        { id: ids[1], type: 'private', to: [c.admin.id], topic: '', content: 'psst', timestamp: 1595479020 },
        // The others in the conversation, sorted, without the caller; the caller alone for a draft to themselves.
        {
          id: ids[2],
          type: 'private',
          to: [c.owner.id, c.admin.id].sort((a, b) => a - b),
          topic: '',
          content: 'group',
          timestamp: 1595479021,
        },
        { id: ids[3], type: 'private', to: [c.member.id], topic: '', content: 'note to self', timestamp: 1595479022 },
        // No recipients: stored as a draft of no type.
        { id: ids[4], type: '', to: [], topic: '', content: 'nobody', timestamp: 1595479023 },
        { id: ids[5], type: '', to: [], topic: '', content: 'typeless', timestamp: 1595479024 },
      ]);
    });

    it('stamps a draft sent without a timestamp with the current time', async () => {
      const before = Math.floor(Date.now() / 1000);
      const [id] = await create(t.cast.moderator, [{ type: '', to: [], topic: '', content: 'now' }]);
      const d = (await list(t.cast.moderator)).find((x) => x.id === id)!;
      expect(d.timestamp).toBeGreaterThanOrEqual(before);
      expect(d.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    });

    it('normalizes content and cuts a long topic as a message does, without trimming the topic', async () => {
      const [id] = await create(t.cast.moderator, [
        streamDraft({ topic: `  ${'t'.repeat(70)}`, content: '\n\n  body  \n\n' }),
        streamDraft({ topic: ' general chat ', content: 'y'.repeat(10001) }),
      ]);
      const drafts = await list(t.cast.moderator);
      const first = drafts.find((x) => x.id === id)!;
      expect(first.topic).toBe(`  ${'t'.repeat(55)}...`);
      expect(first.content).toBe('  body');
      const second = drafts.find((x) => x.id === id! + 1)!;
      expect(second.topic).toBe(' general chat ');
      expect([...(second.content as string)]).toHaveLength(10000);
      expect(second.content).toMatch(/\n\[message truncated\]$/);
    });

    it.each([
      ['blank content', () => [streamDraft({ content: ' \n ' })], 'Message must not be empty'],
      ['content with a NUL', () => [streamDraft({ content: 'a\u0000b' })], 'Message must not contain null bytes'],
      ['a negative timestamp', () => [streamDraft({ timestamp: -10.1 })], 'Timestamp must not be negative.'],
      ['a NUL in a channel draft topic', () => [streamDraft({ topic: 'a\u0000' })], 'Topic must not contain null bytes'],
      ['a channel draft without a channel', () => [streamDraft({ to: [] })], 'Must specify exactly 1 channel ID for channel messages'],
      ['a channel draft with two channels', () => [streamDraft({ to: [1, 2] })], 'Must specify exactly 1 channel ID for channel messages'],
      ['a missing channel', () => [streamDraft({ to: [99999999] })], 'Invalid channel ID'],
      ['a missing user', () => [{ type: 'private', to: [99999999], topic: '', content: 'x' }], 'Invalid user ID 99999999'],
      // Checked in order: the good first draft is not created either.
      ['a bad second draft', () => [streamDraft(), streamDraft({ content: '' })], 'Message must not be empty'],
      // Content is read before the timestamp, the timestamp before the recipient.
      ['content and recipient both wrong', () => [streamDraft({ to: [], content: ' ' })], 'Message must not be empty'],
      ['timestamp and recipient both wrong', () => [streamDraft({ to: [], timestamp: -1 })], 'Timestamp must not be negative.'],
    ])('refuses %s, creating nothing', async (_name, drafts, msg) => {
      const before = await countAll();
      const res = await t.api.post('/drafts', t.cast.member, { drafts: drafts() });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await countAll()).toBe(before);
    });

    it("refuses a private channel the caller cannot read, an archived one, and a deactivated user's DM", async () => {
      const archived = await createChannel(t, 'drafting-archived', [t.cast.member]);
      await t.ctx.db('channels').where({ id: archived.id }).update({ deactivated: true });
      for (const to of [[secret.id], [archived.id]]) {
        const res = await t.api.post('/drafts', t.cast.member, { drafts: [streamDraft({ to })] });
        expect(res.body).toEqual(refusal('Invalid channel ID'));
      }
      const dead = t.cast.deactivated;
      const res = await t.api.post('/drafts', t.cast.member, { drafts: [{ type: 'private', to: [dead.id], topic: '', content: 'x' }] });
      expect(res.body).toEqual(refusal(`'${dead.email}' is no longer using Zulip.`));
      // Every ID is looked up before any user is judged: the missing one is named.
      const both = await t.api.post('/drafts', t.cast.member, {
        drafts: [{ type: 'private', to: [dead.id, 99999998], topic: '', content: 'x' }],
      });
      expect(both.body).toEqual(refusal('Invalid user ID 99999998'));
    });

    it('refuses what the contract bounds: an unknown key, a bad type, a missing field, too many drafts', async () => {
      const before = await countAll();
      for (const drafts of [
        [{ ...streamDraft(), extra: 1 }],
        [streamDraft({ type: 'channel' })],
        [{ type: '', to: [], content: 'no topic' }],
        Array.from({ length: 1001 }, () => ({ type: '', to: [], topic: '', content: 'x' })),
      ]) {
        const res = await t.api.post('/drafts', t.cast.member, { drafts });
        expect(res.status).toBe(400);
        expect(res.body.result).toBe('error');
      }
      const missing = await t.api.post('/drafts', t.cast.member, {});
      expect(missing.body).toEqual({
        result: 'error',
        msg: "Missing 'drafts' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'drafts',
      });
      const notJson = await t.api.post('/drafts', t.cast.member, { drafts: '[{' });
      expect(notJson.status).toBe(400);
      expect(await countAll()).toBe(before);
    });

    // Every role and bots keep drafts; what a draft may address is the role's channel access.
    it.each(['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const)(
      '%s: creates drafts to a channel it reads',
      async (role) => {
        const user = t.cast[role];
        const [id] = await create(user, [streamDraft({ content: `by ${role}` })]);
        expect((await list(user)).map((d) => d.id)).toContain(id);
      },
    );

    it.each([
      ['owner', true],
      ['admin', false],
      ['member', false],
      ['guest', false],
    ] as const)("%s: a private channel's draft is allowed only to a reader (%s)", async (role, allowed) => {
      const res = await t.api.post('/drafts', t.cast[role], { drafts: [streamDraft({ to: [secret.id] })] });
      expect(res.status).toBe(allowed ? 200 : 400);
      if (!allowed) expect(res.body).toEqual(refusal('Invalid channel ID'));
    });

    it('a guest may not draft to a public channel it is not subscribed to; a member may', async () => {
      const open = await createChannel(t, 'drafting-open', [t.cast.owner]);
      const guest = await t.api.post('/drafts', t.cast.guest, { drafts: [streamDraft({ to: [open.id] })] });
      expect(guest.body).toEqual(refusal('Invalid channel ID'));
      const member = await t.api.post('/drafts', t.cast.member, { drafts: [streamDraft({ to: [open.id] })] });
      expect(member.status).toBe(200);
    });
  });

  describe('GET /drafts', () => {
    it("lists the caller's drafts only, the least recently edited first, with their count", async () => {
      const user = t.cast.admin;
      await t.ctx.db('drafts').where({ user_id: user.id }).delete();
      const [late, early, middle] = await create(user, [
        streamDraft({ timestamp: 3000, content: 'late' }),
        streamDraft({ timestamp: 1000.5, content: 'early' }),
        streamDraft({ timestamp: 2000, content: 'middle' }),
      ]);
      await create(t.cast.owner, [streamDraft({ content: 'not yours' })]);
      const res = await t.api.get('/drafts', user);
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(3);
      expect(res.body.drafts.map((d: { id: number }) => d.id)).toEqual([early, middle, late]);
    });

    it('is empty for a user with no drafts', async () => {
      await t.ctx.db('drafts').where({ user_id: t.cast.bot.id }).delete();
      expect((await t.api.get('/drafts', t.cast.bot)).body).toMatchObject({ count: 0, drafts: [] });
    });
  });

  describe('PATCH /drafts/{id}', () => {
    it('replaces every field, the timestamp included', async () => {
      const user = t.cast.member;
      const [id] = await create(user, [streamDraft()]);
      const res = await t.api.patch(`/drafts/${id}`, user, {
        draft: { type: 'private', to: [t.cast.owner.id], topic: 'dropped', content: 'changed', timestamp: 1595505800 },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect((await list(user)).find((d) => d.id === id)).toEqual({
        id,
        type: 'private',
        to: [t.cast.owner.id],
        topic: '',
        content: 'changed',
        timestamp: 1595505800,
      });
    });

    it('refuses a bad draft, changing nothing', async () => {
      const user = t.cast.member;
      const [id] = await create(user, [streamDraft({ content: 'keep me' })]);
      for (const [draft, msg] of [
        [streamDraft({ content: '' }), 'Message must not be empty'],
        [streamDraft({ topic: '\u0000' }), 'Topic must not contain null bytes'],
        [streamDraft({ to: [secret.id] }), 'Invalid channel ID'],
      ] as const) {
        const res = await t.api.patch(`/drafts/${id}`, user, { draft });
        expect(res.body).toEqual(refusal(msg));
      }
      expect((await list(user)).find((d) => d.id === id)!.content).toBe('keep me');
      const missing = await t.api.patch(`/drafts/${id}`, user, {});
      expect(missing.body).toMatchObject({ code: 'REQUEST_VARIABLE_MISSING', var_name: 'draft' });
    });

    it("answers another user's draft as a missing one (before judging the draft sent), and leaves it alone", async () => {
      const [theirs] = await create(t.cast.owner, [streamDraft({ content: 'owner only' })]);
      for (const id of [theirs!, theirs! + 100000]) {
        const good = await t.api.patch(`/drafts/${id}`, t.cast.member, { draft: streamDraft({ content: 'stolen' }) });
        expect(good.status).toBe(404);
        expect(good.body).toEqual(notFound);
        const bad = await t.api.patch(`/drafts/${id}`, t.cast.member, { draft: streamDraft({ content: ' ' }) });
        expect(bad.status).toBe(404);
      }
      expect((await list(t.cast.owner)).find((d) => d.id === theirs)!.content).toBe('owner only');
    });
  });

  describe('DELETE /drafts/{id}', () => {
    it("deletes the caller's draft; another user's and a missing one are 404", async () => {
      const [mine] = await create(t.cast.member, [streamDraft()]);
      const [theirs] = await create(t.cast.owner, [streamDraft()]);
      const other = await t.api.delete(`/drafts/${theirs}`, t.cast.member);
      expect(other.status).toBe(404);
      expect(other.body).toEqual(notFound);
      const res = await t.api.delete(`/drafts/${mine}`, t.cast.member);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(await t.ctx.db('drafts').where({ id: mine }).first()).toBeUndefined();
      expect(await t.ctx.db('drafts').where({ id: theirs }).first('id')).toEqual({ id: theirs });
      const again = await t.api.delete(`/drafts/${mine}`, t.cast.member);
      expect(again.status).toBe(404);
      expect(again.body).toEqual(notFound);
    });
  });

  describe('enable_drafts_synchronization', () => {
    it('off: every operation is refused and the drafts are deleted without an event; on again: usable, empty', async () => {
      const user = t.cast.moderator;
      const [id] = await create(user, [streamDraft()]);
      const [kept] = await create(t.cast.member, [streamDraft()]);
      const c = await register(t, user, { event_types: ['drafts', 'user_settings'] });
      await setSync(user, false);
      expect(await t.ctx.db('drafts').where({ user_id: user.id }).count('* as n')).toEqual([{ n: 0 }]);
      expect(await t.ctx.db('drafts').where({ id: kept }).first('id')).toEqual({ id: kept });
      const off = refusal('User has disabled synchronizing drafts.');
      expect((await t.api.get('/drafts', user)).body).toEqual(off);
      expect((await t.api.post('/drafts', user, { drafts: [streamDraft()] })).body).toEqual(off);
      expect((await t.api.patch(`/drafts/${id}`, user, { draft: streamDraft() })).body).toEqual(off);
      expect((await t.api.delete(`/drafts/${id}`, user)).body).toEqual(off);
      // The setting's own event, and no drafts event.
      expect((await pending(t, c)).map((e) => e.type)).toEqual(['user_settings']);
      const state = await register(t, user, { fetch_event_types: ['drafts'] });
      expect(state.state.drafts).toEqual([]);
      await setSync(user, true);
      expect((await t.api.get('/drafts', user)).body).toMatchObject({ count: 0, drafts: [] });
      await create(user, [streamDraft()]);
    });
  });

  describe('events and POST /register', () => {
    it("register's drafts: the caller's own, the most recently edited first", async () => {
      const user = t.cast.guest;
      await t.ctx.db('drafts').where({ user_id: user.id }).delete();
      const [a, b] = await create(user, [streamDraft({ timestamp: 10 }), streamDraft({ timestamp: 20 })]);
      const c = await register(t, user, { fetch_event_types: ['drafts'] });
      expect(c.state.drafts.map((d: { id: number }) => d.id)).toEqual([b, a]);
    });

    it('add, update and remove reach the owner’s queues only, with the whole drafts', async () => {
      const owner = t.cast.member;
      const mineA = await register(t, owner, { event_types: ['drafts'] });
      const mineB = await register(t, owner);
      const someoneElse = await register(t, t.cast.admin);

      const ids = await create(owner, [streamDraft(), { type: '', to: [], topic: '', content: 'second', timestamp: 5 }]);
      const added = {
        type: 'drafts',
        op: 'add',
        drafts: [
          { id: ids[0], type: 'stream', to: [general.id], topic: 'plans', content: 'Shall we ship?', timestamp: 1595479019 },
          { id: ids[1], type: '', to: [], topic: '', content: 'second', timestamp: 5 },
        ],
      };
      expect((await pending(t, mineA)).map(({ id: _, ...e }) => e)).toEqual([added]);

      await t.api.patch(`/drafts/${ids[0]}`, owner, { draft: { type: '', to: [], topic: '', content: 'edited', timestamp: 7 } });
      const updated = { type: 'drafts', op: 'update', draft: { id: ids[0], type: '', to: [], topic: '', content: 'edited', timestamp: 7 } };
      expect((await pending(t, mineA)).map(({ id: _, ...e }) => e)).toEqual([updated]);

      await t.api.delete(`/drafts/${ids[1]}`, owner);
      const removed = { type: 'drafts', op: 'remove', draft_id: ids[1] };
      expect((await pending(t, mineA)).map(({ id: _, ...e }) => e)).toEqual([removed]);

      expect((await pending(t, mineB)).map(({ id: _, ...e }) => e)).toEqual([added, updated, removed]);
      const [own] = await create(t.cast.admin, [streamDraft()]);
      expect((await pending(t, someoneElse)).map((e) => [e.op, e.drafts?.[0]?.id])).toEqual([['add', own]]);
    });

    it('a refused request publishes nothing', async () => {
      const owner = t.cast.member;
      const [id] = await create(owner, [streamDraft()]);
      const c = await register(t, owner);
      await t.api.post('/drafts', owner, { drafts: [streamDraft(), streamDraft({ to: [] })] });
      await t.api.patch(`/drafts/${id}`, owner, { draft: streamDraft({ content: '' }) });
      await t.api.delete(`/drafts/${id! + 100000}`, owner);
      await t.api.delete(`/drafts/${id}`, owner);
      expect((await pending(t, c)).map((e) => e.op)).toEqual(['remove']);
    });
  });
});
