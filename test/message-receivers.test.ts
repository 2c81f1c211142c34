import { doRestoreArchived } from '../src/actions/archive-restore';
import { doSoftDeactivateUsers } from '../src/actions/soft-deactivation';
import { addReceivers, eachPairBlock, listHolderIds, listRowsOfMessage, PAIRS_PER_STATEMENT } from '../src/queries/message-receivers';
import { eachDatabase } from './support/databases';
import { sendDirect, sendToChannel } from './support/events';
import { createChannel, startTestServer, type TestServer } from './support/server';
import { freshUser } from './users-fixtures';

/**
 * message_receivers (ADR 0059): every user_messages row's user is listed for
 * its message, after each kind of write that gives rows (a send, history
 * rows of a star or a reaction, a move's read rows, a restore); and the
 * readers that go through the lists find exactly the rows.
 */
eachDatabase('message receivers', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  /** Rows whose user is not in their message's list: must stay empty. */
  const unlisted = async () => {
    const lists = new Map<number, Set<number>>();
    for (const r of await t.ctx.db('message_receivers').select('message_id', 'user_ids'))
      lists.set(Number(r.message_id), new Set(String(r.user_ids).split(',').map(Number)));
    const rows: Array<{ user_id: number; message_id: number }> = await t.ctx.db('user_messages').select('user_id', 'message_id');
    return rows.filter((r) => !lists.get(Number(r.message_id))?.has(Number(r.user_id))).map((r) => `${r.user_id}:${r.message_id}`);
  };
  const holdersByRows = async (messageId: number) =>
    ((await t.ctx.db('user_messages').where({ message_id: messageId }).orderBy('user_id').pluck('user_id')) as number[]).map(Number);

  it('list every holder after sends, history rows, moves, deletions and restores', async () => {
    const { owner, member, guest } = t.cast;
    const outsider = await freshUser(t, { name: 'Receivers Outsider' });
    await createChannel(t, 'receivers open', [owner, member]);
    await createChannel(t, 'receivers closed', [owner, guest], { inviteOnly: true, historyPublicToSubscribers: false });

    const sent = await sendToChannel(t, owner, 'receivers open', 'lists', 'to the channel');
    const dm = await sendDirect(t, member, [owner, guest], 'a group DM');
    expect(await unlisted()).toEqual([]);
    expect(await listHolderIds(t.ctx.db, [sent])).toEqual([owner.id, member.id].sort((a, b) => a - b));
    expect(await listHolderIds(t.ctx.db, [dm])).toEqual([owner.id, member.id, guest.id].sort((a, b) => a - b));

    // History rows: an outsider stars a public channel's message, another reacts to one.
    const starred = await sendToChannel(t, member, 'receivers open', 'lists', 'starred by an outsider');
    const reacted = await sendToChannel(t, member, 'receivers open', 'lists', 'reacted to by an outsider');
    expect(
      (await t.api.post('/messages/flags', outsider, { messages: JSON.stringify([starred]), op: 'add', flag: 'starred' })).status,
    ).toBe(200);
    expect((await t.api.post(`/messages/${reacted}/reactions`, outsider, { emoji_name: 'octopus' })).status).toBe(200);
    expect(await unlisted()).toEqual([]);
    expect(await listHolderIds(t.ctx.db, [starred])).toContain(outsider.id);
    expect((await listRowsOfMessage(t.ctx.db, reacted)).map((r) => r.user_id)).toContain(outsider.id);

    // A move into a private channel without shared history: its subscribers get read rows,
    // and those who cannot read it there lose theirs (their ids stay listed: a superset).
    const moved = await sendToChannel(t, owner, 'receivers open', 'moving', 'to be moved');
    const closed = (await t.ctx.db('channels').where({ name: 'receivers closed' }).first('id'))!;
    const res = await t.api.patch(`/messages/${moved}`, owner, { stream_id: closed.id, propagate_mode: 'change_all' });
    expect([res.status, res.body.msg]).toEqual([200, '']);
    expect(await unlisted()).toEqual([]);
    expect(await listHolderIds(t.ctx.db, [moved])).toEqual(await holdersByRows(moved));
    expect(await listHolderIds(t.ctx.db, [moved])).toContain(guest.id);
    expect(await listHolderIds(t.ctx.db, [moved])).not.toContain(member.id);

    // Deleted, then restored: the archive's JSON carried the rows (flags included), the list comes back.
    const before = await listRowsOfMessage(t.ctx.db, starred);
    expect((await t.api.delete(`/messages/${starred}`, owner)).status).toBe(200);
    expect(await t.ctx.db('message_receivers').where({ message_id: starred }).first()).toBeUndefined();
    expect(await holdersByRows(starred)).toEqual([]);
    await doRestoreArchived(t.ctx, { realmId: t.realmId, since: 0 });
    expect(await unlisted()).toEqual([]);
    const byUser = (rows: Array<{ user_id: number; flags: number }>) => [...rows].sort((a, b) => a.user_id - b.user_id);
    expect(byUser(await listRowsOfMessage(t.ctx.db, starred))).toEqual(byUser(before));
  });

  it('are supersets: listed users without a row are probed and not found, past 900 ids in one list', async () => {
    const { owner, member } = t.cast;
    const id = await sendToChannel(t, owner, 'receivers open', 'long list', 'a long list');
    // 1,200 more ids, most of them no user at all: a list longer than a block's 900 users.
    const phantom = Array.from({ length: 1200 }, (_, i) => 1_000_000 + i);
    await addReceivers(t.ctx.db, [id], phantom);
    await addReceivers(t.ctx.db, [id], [member.id]); // listed twice
    expect((await listRowsOfMessage(t.ctx.db, id)).map((r) => r.user_id).sort((a, b) => a - b)).toEqual(
      [owner.id, member.id].sort((a, b) => a - b),
    );
    expect(await listHolderIds(t.ctx.db, [id])).toEqual(await holdersByRows(id));
  });

  it('do not grow when edits give idle subscribers rows they have already', async () => {
    const { owner } = t.cast;
    const idle = await freshUser(t, { name: 'Receivers Idle' });
    await createChannel(t, 'receivers idle', [owner, idle]);
    expect(await doSoftDeactivateUsers(t.ctx, [idle.id])).toBe(1);
    const id = await sendToChannel(t, owner, 'receivers idle', 'quiet', 'plain at first');
    expect(await holdersByRows(id)).toEqual([owner.id]);
    const listed = async () =>
      String((await t.ctx.db('message_receivers').where({ message_id: id }).first('user_ids'))!.user_ids)
        .split(',')
        .map(Number);
    // Each edit that mentions them first gives the idle subscriber the row their catch-up would (ADR 0058).
    for (const n of [1, 2, 3]) {
      const res = await t.api.patch(`/messages/${id}`, owner, { content: `@**${idle.full_name}** edit ${n}` });
      expect([res.status, res.body.msg]).toEqual([200, '']);
    }
    expect(await holdersByRows(id)).toEqual([owner.id, idle.id].sort((a, b) => a - b));
    expect((await listed()).sort((a, b) => a - b)).toEqual([owner.id, idle.id].sort((a, b) => a - b));
    expect(await unlisted()).toEqual([]);
  });

  it('do not grow when moves into a private channel give its subscribers read rows they have already', async () => {
    const { owner, member, guest } = t.cast;
    await createChannel(t, 'receivers back', [owner, member]);
    await createChannel(t, 'receivers forth', [owner, guest], { inviteOnly: true, historyPublicToSubscribers: false });
    const forth = (await t.ctx.db('channels').where({ name: 'receivers forth' }).first('id'))!.id;
    const back = (await t.ctx.db('channels').where({ name: 'receivers back' }).first('id'))!.id;
    const id = await sendToChannel(t, owner, 'receivers back', 'travels', 'back and forth');
    for (const to of [forth, back, forth]) {
      const res = await t.api.patch(`/messages/${id}`, owner, { stream_id: to, propagate_mode: 'change_all' });
      expect([res.status, res.body.msg]).toEqual([200, '']);
    }
    const listed = String((await t.ctx.db('message_receivers').where({ message_id: id }).first('user_ids'))!.user_ids)
      .split(',')
      .map(Number);
    // Each holder once: the owner held a row from the send, the guest from the first move on.
    expect(listed.sort((a, b) => a - b)).toEqual([...new Set(listed)].sort((a, b) => a - b));
    expect(await holdersByRows(id)).toEqual([owner.id, guest.id].sort((a, b) => a - b));
    expect(await unlisted()).toEqual([]);
  });

  it('are read in blocks that cover every pair and stay within what MariaDB probes by key', async () => {
    for (const [users, messages] of [
      [1, 5000],
      [100, 1000],
      [900, 30],
      [901, 3],
      [45_000, 2],
    ] as const) {
      const u = Array.from({ length: users }, (_, i) => i + 1);
      const m = Array.from({ length: messages }, (_, i) => i + 1);
      let pairs = 0;
      await eachPairBlock(u, m, async (bu, bm) => {
        pairs += bu.length * bm.length;
        // Two lists under 1,000 within the pair bound, or one message beside any users.
        if (bm.length > 1)
          expect([bu.length < 1000, bm.length < 1000, bu.length * bm.length <= PAIRS_PER_STATEMENT]).toEqual([true, true, true]);
        else expect(bu.length).toBeLessThanOrEqual(PAIRS_PER_STATEMENT);
      });
      expect(pairs).toBe(users * messages);
    }
  });
});
