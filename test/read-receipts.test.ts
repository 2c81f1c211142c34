import { doDeactivateUser } from '../src/actions/users';
import { eachDatabase } from './support/databases';
import { sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import { countQueries, createMembers, subscribe, type TestServer } from './support/server';

eachDatabase('read receipts', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  beforeAll(async () => {
    ({ t, general } = await startEventsServer(dialect));
  });
  afterAll(async () => {
    await stopEventsServer(t);
  });

  const receipts = (id: number, user = t.cast.member) => t.api.get(`/messages/${id}/read_receipts`, user);
  const markRead = (user: { id: number } & Record<string, any>, ids: number[], op: 'add' | 'remove' = 'add') =>
    t.api.post('/messages/flags', user as any, { messages: ids, op, flag: 'read' });
  const readersOf = async (id: number, user = t.cast.member) => {
    const res = await receipts(id, user);
    expect(res.status).toBe(200);
    return [...(res.body.user_ids as number[])].sort((a, b) => a - b);
  };
  const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
  const invalidMessage = { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' };

  it('lists the users who read the message, never the sender, and bots too', async () => {
    const { owner, admin, moderator, member, bot } = t.cast;
    const id = await sendToChannel(t, owner, 'general', 'receipts', 'read me', { read_by_sender: true });
    // The sender's own row is read from the start, yet the sender is not listed.
    const senderRow = await t.ctx.db('user_messages').where({ user_id: owner.id, message_id: id }).first('flags');
    expect(Number(senderRow!.flags) & 1).toBe(1);
    expect(await readersOf(id)).toEqual([]);
    for (const u of [admin, member, bot]) expect((await markRead(u, [id])).status).toBe(200);
    expect(await readersOf(id)).toEqual(sorted([admin.id, member.id, bot.id]));
    const res = await receipts(id, moderator);
    expect(res.body).toEqual({ result: 'success', msg: '', user_ids: expect.any(Array) });
    // The moderator has a row, unread: not listed.
    expect(sorted(res.body.user_ids)).toEqual(sorted([admin.id, member.id, bot.id]));
  });

  it('a user who marks the message unread again is no longer listed', async () => {
    const id = await sendToChannel(t, t.cast.owner, 'general', 'receipts', 'read then unread');
    await markRead(t.cast.member, [id]);
    await markRead(t.cast.admin, [id]);
    expect(await readersOf(id)).toEqual(sorted([t.cast.member.id, t.cast.admin.id]));
    await markRead(t.cast.member, [id], 'remove');
    expect(await readersOf(id)).toEqual([t.cast.admin.id]);
  });

  it('leaves out users who turned send_read_receipts off, and puts them back when they turn it on', async () => {
    const [quiet] = await createMembers(t, 'quietreader', 1);
    await subscribe(t, general, [quiet!]);
    const id = await sendToChannel(t, t.cast.owner, 'general', 'receipts', 'private reader');
    await markRead(quiet!, [id]);
    await markRead(t.cast.admin, [id]);
    expect(await readersOf(id)).toEqual(sorted([quiet!.id, t.cast.admin.id]));
    const setting = async (on: boolean) => {
      const row = await t.ctx.db('users').where({ id: quiet!.id }).first('settings');
      const settings = { ...JSON.parse(row!.settings || '{}'), send_read_receipts: on };
      await t.ctx
        .db('users')
        .where({ id: quiet!.id })
        .update({ settings: JSON.stringify(settings) });
    };
    await setting(false);
    expect(await readersOf(id)).toEqual([t.cast.admin.id]);
    await setting(true);
    expect(await readersOf(id)).toEqual(sorted([quiet!.id, t.cast.admin.id]));
  });

  it('leaves out deactivated users', async () => {
    const [leaving] = await createMembers(t, 'leavingreader', 1);
    await subscribe(t, general, [leaving!]);
    const id = await sendToChannel(t, t.cast.owner, 'general', 'receipts', 'before leaving');
    await markRead(leaving!, [id]);
    expect(await readersOf(id)).toEqual([leaving!.id]);
    await doDeactivateUser(t.ctx, leaving!.id);
    expect(await readersOf(id)).toEqual([]);
  });

  it('works for direct messages, for their participants', async () => {
    const id = await sendDirect(t, t.cast.member, [t.cast.moderator, t.cast.admin], 'group note');
    await markRead(t.cast.moderator, [id]);
    expect(await readersOf(id, t.cast.admin)).toEqual([t.cast.moderator.id]);
    expect(await readersOf(id, t.cast.member)).toEqual([t.cast.moderator.id]);
  });

  it('a message the caller cannot read is answered as a missing one', async () => {
    const dm = await sendDirect(t, t.cast.member, [t.cast.moderator], 'just us');
    const secretId = await sendToChannel(t, t.cast.owner, 'secret', 'hidden', 'private history');
    await markRead(t.cast.moderator, [dm, secretId]);
    for (const [id, user] of [
      [dm, t.cast.admin],
      [secretId, t.cast.member],
      [secretId, t.cast.guest],
      [999999, t.cast.member],
    ] as const) {
      const res = await receipts(id, user);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(invalidMessage);
    }
    // The same messages answer their participants.
    expect(await readersOf(dm, t.cast.member)).toEqual([t.cast.moderator.id]);
    expect(await readersOf(secretId, t.cast.owner)).toEqual([t.cast.moderator.id]);
  });

  it('a public channel message answers a member who never received it (its history is readable)', async () => {
    const id = await sendToChannel(t, t.cast.owner, 'open', 'public', 'open history');
    await markRead(t.cast.owner, [id]);
    expect(await readersOf(id, t.cast.member)).toEqual([]);
  });

  it('refuses when the organization disabled read receipts, after checking the message', async () => {
    const id = await sendToChannel(t, t.cast.owner, 'general', 'receipts', 'disabled');
    await markRead(t.cast.member, [id]);
    await t.ctx.db('realms').where({ id: t.realmId }).update({ enable_read_receipts: false });
    try {
      const res = await receipts(id);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'Read receipts are disabled in this organization.', code: 'BAD_REQUEST' });
      // The message is checked first: a missing one is still "Invalid message(s)".
      expect((await receipts(999999)).body).toEqual(invalidMessage);
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ enable_read_receipts: true });
    }
    expect(await readersOf(id)).toEqual([t.cast.member.id]);
  });

  it("register's realm_enable_read_receipts follows the organization's setting", async () => {
    const { register } = await import('./support/events');
    expect((await register(t, t.cast.member, { fetch_event_types: ['realm'] })).state.realm_enable_read_receipts).toBe(true);
    await t.ctx.db('realms').where({ id: t.realmId }).update({ enable_read_receipts: false });
    try {
      expect((await register(t, t.cast.member, { fetch_event_types: ['realm'] })).state.realm_enable_read_receipts).toBe(false);
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ enable_read_receipts: true });
    }
  });

  it('answers in the same number of statements for 2 and for 20 readers', async () => {
    const readers = await createMembers(t, 'countreader', 20);
    await subscribe(t, general, readers);
    const few = await sendToChannel(t, t.cast.owner, 'general', 'counts', 'few readers');
    const many = await sendToChannel(t, t.cast.owner, 'general', 'counts', 'many readers');
    for (const u of readers.slice(0, 2)) await markRead(u, [few]);
    for (const u of readers) await markRead(u, [many]);
    await receipts(few);
    const small = await countQueries(t, () => receipts(few));
    const large = await countQueries(t, () => receipts(many));
    expect(small.result.body.user_ids).toHaveLength(2);
    expect(large.result.body.user_ids).toHaveLength(20);
    expect(large.queries).toBe(small.queries);
  });

  it('refuses a message ID that is not a number', async () => {
    const res = await receipts('abc' as unknown as number);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: 'error', msg: 'message_id is not an integer', code: 'BAD_REQUEST' });
  });
});
