import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, statementsOf, TestServer } from './support/server';
import type { UserRow } from '../src/queries/rows';
import { doAdvanceUnreadHorizon, UNREAD_HORIZON_BOUND, UNREAD_HORIZON_MARGIN_SECONDS } from '../src/actions/unread-horizon';
import { listUnreadRows } from '../src/queries/register';
import { copyUnreadRows } from '../src/queries/unread';
import { nowSeconds } from '../src/queries/ids';
import * as m026 from '../src/db/migrations/026_unread_horizons';
import { addReceivers } from '../src/queries/message-receivers';

/**
 * Unread state as a horizon per user plus a side table of older unread rows
 * (migration 026, ADR 0024), against the read bit it indexes: after every
 * kind of write, each reader (POST /register's unread_msgs, is:unread pages,
 * first_unread) finds exactly the rows whose read bit is clear, and no
 * unread row at or below a horizon lacks its side row.
 */
eachDatabase('unread horizons', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member, guest } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, moderator, member, guest]);
  });
  afterAll(() => t.close());

  const users = () => [t.cast.owner, t.cast.admin, t.cast.moderator, t.cast.member, t.cast.guest];
  const send = async (from: UserRow, content: string, topic = 'unread') => {
    const res = await t.api.post('/messages', from, { type: 'channel', to: general.id, topic, content });
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const flag = async (user: UserRow, messages: number[], op: 'add' | 'remove') =>
    expect((await t.api.post('/messages/flags', user, { messages, op, flag: 'read' })).status).toBe(200);
  const horizonOf = async (user: UserRow) =>
    Number((await t.ctx.db('unread_horizons').where('user_id', user.id).first('message_id'))?.message_id ?? 0);
  /** Moves a horizon as an advance does, past whatever margin: the unread rows it passes get their side rows. */
  const setHorizon = async (user: UserRow, id: number) => {
    await copyUnreadRows(t.ctx.db, user.id, await horizonOf(user), id);
    await t.ctx.db('unread_horizons').where('user_id', user.id).del();
    await t.ctx.db('unread_horizons').insert({ user_id: user.id, message_id: id });
  };
  const sideRows = async (user: UserRow) =>
    (await t.ctx.db('user_message_unread').where('user_id', user.id).orderBy('message_id').pluck('message_id')).map(Number);
  const truth = async (user: UserRow) =>
    (await t.ctx.db('user_messages').where('user_id', user.id).whereRaw('(flags & 1) = 0').orderBy('message_id').pluck('message_id')).map(
      Number,
    );
  const unreadPage = async (user: UserRow, narrow: unknown[] = []) => {
    const res = await t.api.get('/messages', user, {
      anchor: 'newest',
      num_before: 1000,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'unread' }, ...narrow],
    });
    expect(res.status).toBe(200);
    return res.body.messages.map((m: any) => m.id as number);
  };
  const firstUnread = async (user: UserRow, narrow: unknown[]) => {
    const res = await t.api.get('/messages', user, { anchor: 'first_unread', num_before: 0, num_after: 0, narrow });
    expect(res.status).toBe(200);
    return res.body.anchor as number;
  };
  const unreadMsgs = async (user: UserRow) => {
    const res = await t.api.post('/register', user, { fetch_event_types: ['message', 'update_message_flags'] });
    expect(res.status).toBe(200);
    const u = res.body.unread_msgs;
    return [...u.streams, ...u.pms, ...u.huddles].flatMap((b: any) => b.unread_message_ids as number[]).sort((a, b) => a - b);
  };

  /** Every reader agrees with the read bit, for every user; no unread row at or below a horizon lacks its side row. */
  async function expectConsistent(): Promise<void> {
    const missing = await t.ctx
      .db('user_messages as um')
      .leftJoin('unread_horizons as h', 'h.user_id', 'um.user_id')
      .leftJoin('user_message_unread as uu', function () {
        this.on('uu.user_id', '=', 'um.user_id').andOn('uu.message_id', '=', 'um.message_id');
      })
      .whereRaw('(um.flags & 1) = 0')
      .whereRaw('um.message_id <= COALESCE(h.message_id, 0)')
      .whereNull('uu.user_id')
      .select('um.user_id', 'um.message_id');
    expect(missing).toEqual([]);
    for (const u of users()) {
      const expected = await truth(u);
      expect([u.id, (await listUnreadRows(t.ctx.db, u.id, 50_000)).map((r) => r.message_id).reverse()]).toEqual([u.id, expected]);
      expect([u.id, await unreadPage(u)]).toEqual([u.id, expected]);
    }
  }

  it('a send writes no side row; its receivers read it as unread above their horizons', async () => {
    const before = Number((await t.ctx.db('user_message_unread').count({ n: '*' }).first())!.n);
    const id = await send(t.cast.owner, 'fresh');
    expect(Number((await t.ctx.db('user_message_unread').count({ n: '*' }).first())!.n)).toBe(before);
    expect(await unreadPage(t.cast.member)).toContain(id);
    expect(await unreadMsgs(t.cast.member)).toContain(id);
    await expectConsistent();
  });

  it('below the horizon, marking unread adds the side row and marking read removes it; readers follow', async () => {
    const a = await send(t.cast.owner, 'a');
    const b = await send(t.cast.owner, 'b');
    await flag(t.cast.member, [a, b], 'add');
    await setHorizon(t.cast.member, b);
    expect(await unreadPage(t.cast.member)).not.toContain(a);
    await flag(t.cast.member, [a], 'remove');
    expect(await sideRows(t.cast.member)).toContain(a);
    expect(await unreadPage(t.cast.member)).toContain(a);
    expect(await unreadMsgs(t.cast.member)).toContain(a);
    await expectConsistent();
    await flag(t.cast.member, [a], 'add');
    expect(await sideRows(t.cast.member)).not.toContain(a);
    expect(await unreadPage(t.cast.member)).not.toContain(a);
    await expectConsistent();
  });

  it('a side row of a message read since does not make it unread', async () => {
    const id = await send(t.cast.owner, 'stale side row');
    await setHorizon(t.cast.moderator, id);
    expect(await sideRows(t.cast.moderator)).toContain(id);
    await flag(t.cast.moderator, [id], 'add');
    expect(await sideRows(t.cast.moderator)).not.toContain(id);
    // Put back by hand: the readers must still go by the read bit.
    await t.ctx.db('user_message_unread').insert({ user_id: t.cast.moderator.id, message_id: id });
    expect(await unreadPage(t.cast.moderator)).not.toContain(id);
    expect(await unreadMsgs(t.cast.moderator)).not.toContain(id);
    await expectConsistent();
  });

  it('pages of is:unread and first_unread cross the horizon in both directions', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await send(t.cast.owner, `page ${i}`, 'paging'));
    await flag(
      t.cast.admin,
      (await truth(t.cast.admin)).filter((id) => !ids.includes(id)),
      'add',
    );
    await flag(t.cast.admin, [ids[1]!, ids[4]!], 'add');
    await setHorizon(t.cast.admin, ids[2]!);
    expect((await sideRows(t.cast.admin)).filter((id) => ids.includes(id))).toEqual([ids[0], ids[2]]);
    const unread = [ids[0]!, ids[2]!, ids[3]!, ids[5]!];
    expect(await unreadPage(t.cast.admin)).toEqual(unread);
    const topic = [
      { operator: 'channel', operand: general.id },
      { operator: 'topic', operand: 'paging' },
    ];
    expect(await firstUnread(t.cast.admin, topic)).toBe(ids[0]);
    expect(await firstUnread(t.cast.admin, [])).toBe(ids[0]);
    // One message a page, from each side of the horizon.
    const step = async (anchor: number, before: number, after: number) => {
      const res = await t.api.get('/messages', t.cast.admin, {
        anchor,
        include_anchor: false,
        num_before: before,
        num_after: after,
        narrow: [{ operator: 'is', operand: 'unread' }],
      });
      expect(res.status).toBe(200);
      return res.body.messages.map((m: any) => m.id as number);
    };
    expect(await step(ids[3]!, 1, 0)).toEqual([ids[2]]);
    expect(await step(ids[2]!, 0, 1)).toEqual([ids[3]]);
    expect(await step(ids[5]!, 3, 0)).toEqual([ids[0], ids[2], ids[3]]);
    expect(await step(ids[0]!, 0, 3)).toEqual([ids[2], ids[3], ids[5]]);
    // By explicit ids, on both sides.
    const byIds = await t.api.get('/messages', t.cast.admin, {
      message_ids: JSON.stringify(ids),
      narrow: [{ operator: 'is', operand: 'unread' }],
    });
    expect(byIds.status).toBe(200);
    expect(byIds.body.messages.map((m: any) => m.id)).toEqual(unread);
    // By date: the first unread sent at or after it, found below the horizon first.
    const byDate = await t.api.get('/messages', t.cast.admin, {
      anchor: 'date',
      anchor_date: '2000-01-01T00:00:00Z',
      num_before: 0,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'unread' }],
    });
    expect(byDate.status).toBe(200);
    expect(byDate.body.anchor).toBe(ids[0]);
    // An is:unread page on both sides of its first unread reads the horizon once.
    let horizonReads = 0;
    const onQuery = (q: { sql: string }) =>
      (horizonReads += statementsOf(q.sql).filter((s) => /from [`"]?unread_horizons/i.test(s)).length);
    t.ctx.db.on('query', onQuery);
    try {
      const around = await t.api.get('/messages', t.cast.admin, {
        anchor: 'first_unread',
        num_before: 2,
        num_after: 2,
        narrow: [{ operator: 'is', operand: 'unread' }],
      });
      expect(around.status).toBe(200);
      expect(around.body.messages.map((m: any) => m.id)).toEqual([ids[0], ids[2], ids[3]]);
    } finally {
      t.ctx.db.removeListener('query', onQuery);
    }
    expect(horizonReads).toBe(1);
    // Read on one side, the first unread moves to the other.
    await flag(t.cast.admin, [ids[0]!, ids[2]!], 'add');
    expect(await firstUnread(t.cast.admin, topic)).toBe(ids[3]);
    await expectConsistent();
  });

  it('an advance copies only the rows still unread, moves the horizon to the newest message past the margin, and never within it', async () => {
    const u = t.cast.guest;
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push(await send(t.cast.owner, `advance ${i}`));
    await flag(u, [ids[0]!, ids[2]!], 'add');
    const before = await horizonOf(u);
    expect(before).toBeLessThan(ids[0]!);
    // Every message here was sent just now: within the margin, the horizon stays,
    // and the user's rows are not even counted (marking read runs this check).
    const scans: string[] = [];
    const onQuery = (q: { sql: string }) => scans.push(...statementsOf(q.sql).filter((s) => /user_messages/.test(s)));
    t.ctx.db.on('query', onQuery);
    try {
      expect(await doAdvanceUnreadHorizon(t.ctx.db, u, { bound: 0 })).toBe(false);
    } finally {
      t.ctx.db.removeListener('query', onQuery);
    }
    expect(scans).toEqual([]);
    expect(await horizonOf(u)).toBe(before);
    // Past the margin and over the bound, it moves to the newest row and copies the unread ones it passes.
    const later = nowSeconds() + UNREAD_HORIZON_MARGIN_SECONDS + 1;
    expect(await doAdvanceUnreadHorizon(t.ctx.db, u, { now: later, bound: 100_000 })).toBe(false);
    expect(await doAdvanceUnreadHorizon(t.ctx.db, u, { now: later, bound: 0 })).toBe(true);
    // The organization's newest message: the guest need not hold a row of it.
    const newest = Number((await t.ctx.db('messages').max({ id: 'id' }).first())!.id);
    expect(await horizonOf(u)).toBe(newest);
    const side = await sideRows(u);
    expect(side).toEqual(expect.arrayContaining([ids[1]!, ids[3]!]));
    expect(side).not.toContain(ids[0]);
    expect(side).not.toContain(ids[2]);
    await expectConsistent();
    // A message sent after the advance is above the horizon, with no side row.
    const after = await send(t.cast.owner, 'after the advance');
    expect(await sideRows(u)).not.toContain(after);
    expect(await unreadPage(u)).toContain(after);
    expect(await firstUnread(u, [{ operator: 'channel', operand: general.id }])).toBe(side[0]);
    await expectConsistent();
  });

  it(`POST /register advances a horizon with more than ${UNREAD_HORIZON_BOUND} rows above it`, async () => {
    // Old messages written directly: sent a day ago, all but three read by the member.
    const u = t.cast.member;
    const day = nowSeconds() - 86_400;
    const count = UNREAD_HORIZON_BOUND + 5;
    const rows = Array.from({ length: count }, (_, i) => ({
      realm_id: u.realm_id,
      sender_id: t.cast.owner.id,
      recipient_id: general.recipient_id,
      type: 1,
      topic: 'bulk',
      topic_key: 'bulk',
      content: `old ${i}`,
      rendered_content: `<p>old ${i}</p>`,
      rendered_content_version: 1,
      date_sent: day,
      sending_client: 'test',
    }));
    for (let i = 0; i < rows.length; i += 400) await t.ctx.db('messages').insert(rows.slice(i, i + 400));
    const ids = (await t.ctx.db('messages').where('topic', 'bulk').orderBy('id').pluck('id')).map(Number);
    expect(ids).toHaveLength(count);
    const unread = new Set([ids[0]!, ids[1000]!, ids[count - 1]!]);
    const umRows = ids.map((id) => ({ user_id: u.id, message_id: id, flags: unread.has(id) ? 0 : 1 }));
    for (let i = 0; i < umRows.length; i += 400) await t.ctx.db('user_messages').insert(umRows.slice(i, i + 400));
    await addReceivers(t.ctx.db, ids, [u.id]);
    await setHorizon(u, ids[0]! - 1);
    await expectConsistent();
    const state = await unreadMsgs(u);
    for (const id of unread) expect(state).toContain(id);
    expect(await horizonOf(u)).toBe(ids[count - 1]);
    expect((await sideRows(u)).filter((id) => id >= ids[0]!)).toEqual([...unread]);
    await expectConsistent();
    // Already bounded: the next register leaves it where it is.
    await unreadMsgs(u);
    expect(await horizonOf(u)).toBe(ids[count - 1]);
    // Marking messages read bounds it too (a client connected for days does not register).
    await t.ctx
      .db('unread_horizons')
      .where('user_id', u.id)
      .update({ message_id: ids[0]! - 1 });
    await flag(u, [ids[5]!], 'add');
    expect(await horizonOf(u)).toBe(ids[count - 1]);
    // Marking unread does not.
    await t.ctx
      .db('unread_horizons')
      .where('user_id', u.id)
      .update({ message_id: ids[0]! - 1 });
    await flag(u, [ids[5]!], 'remove');
    expect(await horizonOf(u)).toBe(ids[0]! - 1);
    await flag(u, [ids[5]!], 'add');
    await expectConsistent();
  });

  it('deleting a message takes its side rows with it', async () => {
    const id = await send(t.cast.owner, 'doomed');
    await setHorizon(t.cast.moderator, id);
    expect(await sideRows(t.cast.moderator)).toContain(id);
    expect((await t.api.delete(`/messages/${id}`, t.cast.owner)).status).toBe(200);
    expect(await t.ctx.db('user_message_unread').where('message_id', id).count({ n: '*' }).first()).toEqual({ n: 0 });
    await expectConsistent();
  });

  it('migration 026 copies the unread rows and starts every horizon at the newest message; down restores the index', async () => {
    await m026.down(t.ctx.db);
    expect(await t.ctx.db.schema.hasTable('user_message_unread')).toBe(false);
    const unreadBefore = Number((await t.ctx.db('user_messages').whereRaw('is_unread = 1').count({ n: '*' }).first())!.n);
    expect(unreadBefore).toBeGreaterThan(0);
    await m026.up(t.ctx.db);
    const newest = Number((await t.ctx.db('messages').max({ id: 'id' }).first())!.id);
    for (const u of users()) {
      expect(await horizonOf(u)).toBe(newest);
      expect(await sideRows(u)).toEqual(await truth(u));
    }
    expect(await t.ctx.db.schema.hasColumn('user_messages', 'is_unread')).toBe(false);
    await expectConsistent();
    const id = await send(t.cast.owner, 'after the migration');
    expect(await unreadPage(t.cast.member)).toContain(id);
    await expectConsistent();
  });
});
