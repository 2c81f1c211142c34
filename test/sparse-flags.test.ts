import { SPARSE_FLAGS } from '../src/domain/sparse-flags';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';
import type { UserRow } from '../src/queries/rows';
import * as m022 from '../src/db/migrations/022_sparse_flags';

/**
 * The side tables of starred, mentioned and DM rows (migration 022) against
 * the flags column they index: after every kind of write, each table holds
 * exactly the (user, message) pairs whose flags have one of its bits.
 */
eachDatabase('sparse flag tables', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member, guest } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, moderator, member, guest]);
    secret = await createChannel(t, 'secret', [owner, member], { inviteOnly: true });
  });
  afterAll(() => t.close());

  const key = (u: unknown, m: unknown) => `${Number(u)}:${Number(m)}`;

  /** Every side table equals the rows of user_messages with its bits. */
  async function expectConsistent(): Promise<void> {
    for (const f of SPARSE_FLAGS) {
      const side = (await t.ctx.db(f.table).select('user_id', 'message_id')).map((r: any) => key(r.user_id, r.message_id)).sort();
      const flagged = (await t.ctx.db('user_messages').whereRaw('(flags & ?) <> 0', [f.mask]).select('user_id', 'message_id'))
        .map((r: any) => key(r.user_id, r.message_id))
        .sort();
      expect([f.table, side]).toEqual([f.table, flagged]);
    }
  }
  const holders = async (table: string, messageId: number) =>
    (await t.ctx.db(table).where({ message_id: messageId }).pluck('user_id')).map(Number).sort((a, b) => a - b);
  const ids = (...users: UserRow[]) => users.map((u) => u.id).sort((a, b) => a - b);
  const send = async (from: UserRow, content: string, to: string | number = 'general', topic = 'sparse') =>
    (await t.api.post('/messages', from, { type: 'channel', to, topic, content })).body.id as number;
  const narrowIds = async (user: UserRow, narrow: unknown[]) => {
    const res = await t.api.get('/messages', user, { anchor: 'newest', num_before: 100, num_after: 0, narrow });
    expect(res.status).toBe(200);
    return res.body.messages.map((m: any) => m.id as number);
  };
  const mention = (u: UserRow) => `@**${u.full_name}|${u.id}**`;

  it('a channel message without mentions writes no side row', async () => {
    const before = await Promise.all(SPARSE_FLAGS.map((f) => t.ctx.db(f.table).count({ n: '*' }).first()));
    await send(t.cast.owner, 'nothing special');
    const after = await Promise.all(SPARSE_FLAGS.map((f) => t.ctx.db(f.table).count({ n: '*' }).first()));
    expect(after.map((r: any) => Number(r.n))).toEqual(before.map((r: any) => Number(r.n)));
    await expectConsistent();
  });

  it('a DM gives each participant a dm row, which is:dm reads', async () => {
    const res = await t.api.post('/messages', t.cast.owner, { type: 'direct', to: [t.cast.member.id, t.cast.admin.id], content: 'three' });
    expect(res.status).toBe(200);
    expect(await holders('user_message_dm', res.body.id)).toEqual(ids(t.cast.owner, t.cast.member, t.cast.admin));
    expect(await narrowIds(t.cast.member, [{ operator: 'is', operand: 'dm' }])).toEqual([res.body.id]);
    expect(await narrowIds(t.cast.moderator, [{ operator: 'is', operand: 'dm' }])).toEqual([]);
    // dm-including also narrows to DMs through the side table.
    expect(await narrowIds(t.cast.member, [{ operator: 'dm-including', operand: t.cast.admin.id }])).toEqual([res.body.id]);
    await expectConsistent();
  });

  it('a mention writes a row for the mentioned user only, which is:mentioned reads', async () => {
    const id = await send(t.cast.owner, `hello ${mention(t.cast.member)}`);
    expect(await holders('user_message_mentioned', id)).toEqual([t.cast.member.id]);
    expect((await narrowIds(t.cast.member, [{ operator: 'is', operand: 'mentioned' }])).at(-1)).toBe(id);
    expect(await narrowIds(t.cast.moderator, [{ operator: 'is', operand: 'mentioned' }])).not.toContain(id);
    const wildcard = await send(t.cast.owner, 'all of you @**all**');
    expect(await holders('user_message_mentioned', wildcard)).toEqual(
      ids(t.cast.owner, t.cast.admin, t.cast.moderator, t.cast.member, t.cast.guest),
    );
    await expectConsistent();
  });

  it('starring adds the row and unstarring removes it; is:starred pages from them', async () => {
    const a = await send(t.cast.owner, 'star a');
    const b = await send(t.cast.owner, 'star b');
    await send(t.cast.owner, 'not starred');
    const star = (op: string, messages: number[]) => t.api.post('/messages/flags', t.cast.member, { messages, op, flag: 'starred' });
    expect((await star('add', [a, b])).status).toBe(200);
    expect(await holders('user_message_starred', a)).toEqual([t.cast.member.id]);
    expect(await narrowIds(t.cast.member, [{ operator: 'is', operand: 'starred' }])).toEqual([a, b]);
    // Combined with another narrow, and paged one message at a time.
    expect(
      await narrowIds(t.cast.member, [
        { operator: 'is', operand: 'starred' },
        { operator: 'channel', operand: general.id },
      ]),
    ).toEqual([a, b]);
    const page = await t.api.get('/messages', t.cast.member, {
      anchor: b,
      include_anchor: false,
      num_before: 1,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'starred' }],
    });
    expect(page.body.messages.map((m: any) => m.id)).toEqual([a]);
    expect((await star('remove', [a])).status).toBe(200);
    expect(await holders('user_message_starred', a)).toEqual([]);
    expect(await narrowIds(t.cast.member, [{ operator: 'is', operand: 'starred' }])).toEqual([b]);
    // Negated: everything else, b left out.
    const notStarred = await narrowIds(t.cast.member, [{ operator: 'is', operand: 'starred', negated: true }]);
    expect(notStarred).toContain(a);
    expect(notStarred).not.toContain(b);
    await expectConsistent();
  });

  it('starring channel history one did not receive stars the new historical row', async () => {
    const pub = await createChannel(t, 'public-history', [t.cast.owner]);
    const history = await send(t.cast.owner, 'public history', pub.id);
    const starred = await t.api.post('/messages/flags', t.cast.guest, { messages: [history], op: 'add', flag: 'starred' });
    expect(starred.status).toBe(400); // guests cannot read unsubscribed public channels
    const byMember = await t.api.post('/messages/flags', t.cast.member, { messages: [history], op: 'add', flag: 'starred' });
    expect(byMember.status).toBe(200);
    expect(await holders('user_message_starred', history)).toEqual([t.cast.member.id]);
    await expectConsistent();
  });

  it('marking read and unread leaves the side rows as they are', async () => {
    const id = await send(t.cast.owner, `read me ${mention(t.cast.member)}`);
    await t.api.post('/messages/flags', t.cast.member, { messages: [id], op: 'add', flag: 'starred' });
    await t.api.post('/messages/flags', t.cast.member, { messages: [id], op: 'add', flag: 'read' });
    await t.api.post('/messages/flags', t.cast.member, { messages: [id], op: 'remove', flag: 'read' });
    const narrowRead = await t.api.post('/messages/flags/narrow', t.cast.member, {
      anchor: 'newest',
      num_before: 50,
      num_after: 0,
      narrow: JSON.stringify([{ operator: 'channel', operand: general.id }]),
      op: 'add',
      flag: 'read',
    });
    expect(narrowRead.status).toBe(200);
    expect(await holders('user_message_starred', id)).toEqual([t.cast.member.id]);
    expect(await holders('user_message_mentioned', id)).toEqual([t.cast.member.id]);
    await expectConsistent();
  });

  it('an edit that adds a mention adds the row; one that removes it removes the row', async () => {
    const id = await send(t.cast.owner, 'no mention yet');
    expect(await holders('user_message_mentioned', id)).toEqual([]);
    const add = await t.api.patch(`/messages/${id}`, t.cast.owner, { content: `now ${mention(t.cast.moderator)}` });
    expect(add.status).toBe(200);
    expect(await holders('user_message_mentioned', id)).toEqual([t.cast.moderator.id]);
    expect((await narrowIds(t.cast.moderator, [{ operator: 'is', operand: 'mentioned' }])).at(-1)).toBe(id);
    const swap = await t.api.patch(`/messages/${id}`, t.cast.owner, { content: `instead ${mention(t.cast.guest)}` });
    expect(swap.status).toBe(200);
    expect(await holders('user_message_mentioned', id)).toEqual([t.cast.guest.id]);
    const none = await t.api.patch(`/messages/${id}`, t.cast.owner, { content: 'nobody' });
    expect(none.status).toBe(200);
    expect(await holders('user_message_mentioned', id)).toEqual([]);
    expect(await narrowIds(t.cast.guest, [{ operator: 'is', operand: 'mentioned' }])).not.toContain(id);
    await expectConsistent();
  });

  it('deleting a message removes its side rows', async () => {
    const id = await send(t.cast.owner, `doomed ${mention(t.cast.member)}`);
    await t.api.post('/messages/flags', t.cast.admin, { messages: [id], op: 'add', flag: 'starred' });
    expect(await holders('user_message_starred', id)).toEqual([t.cast.admin.id]);
    const res = await t.api.delete(`/messages/${id}`, t.cast.owner);
    expect(res.status).toBe(200);
    for (const f of SPARSE_FLAGS) expect(await holders(f.table, id)).toEqual([]);
    expect(await narrowIds(t.cast.admin, [{ operator: 'is', operand: 'starred' }])).not.toContain(id);
    await expectConsistent();
  });

  it('a move keeps the rows of those who keep the message and drops the others', async () => {
    const id = await send(t.cast.owner, `moving ${mention(t.cast.member)} ${mention(t.cast.moderator)}`, 'general', 'to move');
    for (const u of [t.cast.member, t.cast.moderator])
      await t.api.post('/messages/flags', u, { messages: [id], op: 'add', flag: 'starred' });
    // Another topic first: the ids stay, so every row stays.
    expect((await t.api.patch(`/messages/${id}`, t.cast.owner, { topic: 'moved', propagate_mode: 'change_one' })).status).toBe(200);
    expect(await holders('user_message_starred', id)).toEqual(ids(t.cast.member, t.cast.moderator));
    // Into a private channel: the moderator, not subscribed there, loses the message and its rows.
    const res = await t.api.patch(`/messages/${id}`, t.cast.owner, { stream_id: secret.id, send_notification_to_new_thread: false });
    expect(res.status).toBe(200);
    expect(await holders('user_message_starred', id)).toEqual([t.cast.member.id]);
    expect(await holders('user_message_mentioned', id)).toEqual([t.cast.member.id]);
    expect((await narrowIds(t.cast.member, [{ operator: 'is', operand: 'starred' }])).at(-1)).toBe(id);
    expect(await narrowIds(t.cast.moderator, [{ operator: 'is', operand: 'starred' }])).not.toContain(id);
    await expectConsistent();
  });

  it('migration 022 moves the flagged rows of an older schema into the side tables, batch by batch', async () => {
    const snapshot = async () =>
      Promise.all(
        SPARSE_FLAGS.map(async (f) =>
          (await t.ctx.db(f.table).select('user_id', 'message_id')).map((r: any) => key(r.user_id, r.message_id)).sort(),
        ),
      );
    const before = await snapshot();
    expect(before.every((rows) => rows.length > 0)).toBe(true);
    await m022.down(t.ctx.db);
    // The old schema: flags in indexed generated columns, no side tables.
    expect(Number((await t.ctx.db('user_messages').whereRaw('is_starred = 1').count({ n: '*' }).first())!.n)).toBe(before[0]!.length);
    expect(await t.ctx.db.schema.hasTable('user_message_starred')).toBe(false);
    // Two rows a batch: every user with more than two flagged rows takes several.
    await m022.up(t.ctx.db, 2);
    expect(await snapshot()).toEqual(before);
    expect(await t.ctx.db.schema.hasColumn('user_messages', 'is_starred')).toBe(false);
    await expectConsistent();
    // And the server goes on using them.
    const id = await send(t.cast.owner, 'after the migration');
    await t.api.post('/messages/flags', t.cast.member, { messages: [id], op: 'add', flag: 'starred' });
    expect((await narrowIds(t.cast.member, [{ operator: 'is', operand: 'starred' }])).at(-1)).toBe(id);
    await expectConsistent();
  });
});
