import type { Delivery } from '../src/events/bus';
import { getArchivedMessages } from '../src/queries/archive';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { snapshotDigest } from './support/db-snapshot';
import { pending, register, sendDirect, sendToChannel } from './support/events';
import { createChannel, startTestServer, TestServer } from './support/server';

eachDatabase('DELETE /messages/{message_id}', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let groups: Record<string, number>;

  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member, guest, bot } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, moderator, member, guest, bot]);
    await createChannel(t, 'open', [owner]);
    // The bot belongs to the member (a fixture: bots are created by owners through the API elsewhere).
    await t.ctx.db('users').where({ id: bot.id }).update({ bot_owner_id: member.id });
    const rows = await t.ctx.db('user_groups').where({ realm_id: t.realmId, is_system_group: true });
    groups = Object.fromEntries(rows.map((g) => [g.name!, Number(g.id)]));
  });
  afterAll(() => t.close());

  /** Realm and channel settings back to Parley's defaults between tests. */
  afterEach(async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({
      message_content_delete_limit_seconds: null,
      can_delete_any_message_group: groups['role:administrators'],
      can_delete_own_message_group: groups['role:everyone'],
    });
    await t.ctx.db('channels').where({ realm_id: t.realmId }).update({
      can_delete_any_message_group: groups['role:nobody'],
      can_delete_own_message_group: groups['role:nobody'],
    });
  });

  const send = (who: UserRow, content = 'to delete', topic = 'deletions', to = 'general') => sendToChannel(t, who, to, topic, content);
  const del = (who: UserRow, id: number) => t.api.delete(`/messages/${id}`, who);
  const exists = async (id: number) => (await t.ctx.db('messages').where({ id }).first('id')) !== undefined;

  /** Runs `work` while recording the bus's deliveries. */
  async function recording(work: () => Promise<unknown>): Promise<Delivery[]> {
    const seen: Delivery[] = [];
    const off = t.ctx.bus.subscribe((d) => seen.push(d));
    try {
      await work();
    } finally {
      off();
    }
    return seen;
  }

  /** Asserts that `work` answers this error and leaves every table as it was. */
  async function refusedWithoutChange(work: () => Promise<{ status: number; body: Record<string, any> }>, msg: string) {
    const before = await snapshotDigest(t.ctx.db);
    let res: { status: number; body: Record<string, any> } | undefined;
    const seen = await recording(async () => {
      res = await work();
    });
    expect(res!.status).toBe(400);
    expect(res!.body).toEqual({ result: 'error', msg, code: 'BAD_REQUEST' });
    expect(await snapshotDigest(t.ctx.db)).toEqual(before);
    expect(seen).toEqual([]);
  }

  it('lets an administrator delete anyone’s message, archiving it with its rows, reactions, edits and upload links', async () => {
    const { admin, member, owner, guest } = t.cast;
    const id = await send(member, 'archive me');
    await t.api.post(`/messages/${id}/reactions`, owner, { emoji_name: 'smile' });
    await t.api.post('/messages/flags', guest, { messages: [id], op: 'add', flag: 'starred' });
    // Fixtures for what other features write: an edit-history row and an upload the message links.
    await t.ctx
      .db('message_edits')
      .insert({ message_id: id, user_id: member.id, timestamp: 1_700_000_000, prev_content: 'before', prev_topic: null, topic: null });
    await t.ctx.db('messages').where({ id }).update({ last_edit_time: 1_700_000_000 });
    const [attachmentId] = await t.ctx.db('attachments').insert({
      realm_id: t.realmId,
      owner_id: member.id,
      file_name: 'notes.txt',
      path_id: `${t.realmId}/ab/deleteme${dialect}/notes.txt`,
      size: 12,
      create_time: 1_700_000_000,
    });
    const attachment = Number(attachmentId ?? (await t.ctx.db('attachments').max('id as id').first())!.id);
    await t.ctx.db('attachment_messages').insert({ attachment_id: attachment, message_id: id });
    const rowsBefore = (await t.ctx.db('user_messages').where({ message_id: id }).orderBy('user_id').select('user_id', 'flags')).map(
      (r: { user_id: number; flags: number | string }) => [Number(r.user_id), Number(r.flags)],
    );
    expect(rowsBefore.length).toBeGreaterThan(3);

    const seen = await recording(async () => {
      const res = await del(admin, id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
    });

    expect(await exists(id)).toBe(false);
    expect(await t.ctx.db('user_messages').where({ message_id: id })).toEqual([]);
    expect(await t.ctx.db('reactions').where({ message_id: id })).toEqual([]);
    expect(await t.ctx.db('message_edits').where({ message_id: id })).toEqual([]);
    expect(await t.ctx.db('attachment_messages').where({ message_id: id })).toEqual([]);
    // The upload itself stays: its owner decides about the file.
    expect(await t.ctx.db('attachments').where({ id: attachment }).first('id')).toBeDefined();
    expect((await t.api.get(`/messages/${id}`, member)).body.msg).toBe('Invalid message(s)');

    const [archived] = await getArchivedMessages(t.ctx.db, [id]);
    expect(archived).toMatchObject({
      id,
      sender_id: member.id,
      recipient_id: general.recipient_id,
      topic: 'deletions',
      content: 'archive me',
      last_edit_time: 1_700_000_000,
      archive_type: 2,
      user_messages: rowsBefore,
      reactions: [{ user_id: owner.id, emoji_name: 'smile', reaction_type: 'unicode_emoji' }],
      edits: [{ user_id: member.id, prev_content: 'before' }],
      attachment_ids: [attachment],
    });
    expect(archived!.rendered_content).toContain('archive me');

    const deletes = seen.filter((d) => d.event.type === 'delete_message');
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.event).toEqual({
      type: 'delete_message',
      message_type: 'stream',
      message_ids: [id],
      stream_id: general.id,
      topic: 'deletions',
    });
    expect([...deletes[0]!.userIds].sort((a, b) => a - b)).toEqual(rowsBefore.map(([u]) => u));
  });

  it('sends the event to those who had the message and the deleting administrator, nobody else', async () => {
    const { admin, member, owner } = t.cast;
    const id = await send(owner, 'only the owner has it', 'quiet', 'open');
    const seen = await recording(async () => expect((await del(admin, id)).status).toBe(200));
    const event = seen.find((d) => d.event.type === 'delete_message')!;
    expect([...event.userIds].sort((a, b) => a - b)).toEqual([owner.id, admin.id].sort((a, b) => a - b));
    expect(event.userIds).not.toContain(member.id);
  });

  it('lets authors delete their own messages, and their bots’', async () => {
    const { member, bot } = t.cast;
    const own = await send(member);
    expect((await del(member, own)).status).toBe(200);
    expect(await exists(own)).toBe(false);
    const botMessage = await send(bot, 'from the bot');
    expect((await del(member, botMessage)).status).toBe(200);
    expect(await exists(botMessage)).toBe(false);
  });

  it('refuses a member deleting someone else’s message, changing nothing', async () => {
    const id = await send(t.cast.owner);
    await refusedWithoutChange(() => del(t.cast.member, id), "You don't have permission to delete this message");
    await refusedWithoutChange(() => del(t.cast.moderator, id), "You don't have permission to delete this message");
    expect(await exists(id)).toBe(true);
  });

  it('refuses the author past message_content_delete_limit_seconds, but not a member of can_delete_any_message_group', async () => {
    const { member, admin } = t.cast;
    await t.ctx.db('realms').where({ id: t.realmId }).update({ message_content_delete_limit_seconds: 600 });
    const recent = await send(member, 'recent');
    const old = await send(member, 'old');
    await t.ctx
      .db('messages')
      .where({ id: old })
      .update({ date_sent: Math.floor(Date.now() / 1000) - 700 });
    await refusedWithoutChange(() => del(member, old), 'The time limit for deleting this message has passed');
    expect((await del(member, recent)).status).toBe(200);
    expect((await del(admin, old)).status).toBe(200);
    expect(await exists(old)).toBe(false);
  });

  it('binds an administrator by the time limit once can_delete_any_message_group no longer holds them', async () => {
    const { admin } = t.cast;
    await t.ctx.db('realms').where({ id: t.realmId }).update({
      message_content_delete_limit_seconds: 600,
      can_delete_any_message_group: groups['role:owners'],
    });
    const old = await send(admin, 'old admin message');
    await t.ctx
      .db('messages')
      .where({ id: old })
      .update({ date_sent: Math.floor(Date.now() / 1000) - 700 });
    await refusedWithoutChange(() => del(admin, old), 'The time limit for deleting this message has passed');
  });

  it('needs can_delete_own_message_group, from the organization or the channel', async () => {
    const { member } = t.cast;
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_delete_own_message_group: groups['role:nobody'] });
    const id = await send(member);
    await refusedWithoutChange(() => del(member, id), "You don't have permission to delete this message");
    const dm = await sendDirect(t, member, [t.cast.owner], 'a direct message');
    await refusedWithoutChange(() => del(member, dm), "You don't have permission to delete this message");
    // The channel's own setting (feature level 407) grants it for that channel's messages.
    await t.ctx.db('channels').where({ id: general.id }).update({ can_delete_own_message_group: groups['role:members'] });
    expect((await del(member, id)).status).toBe(200);
    await refusedWithoutChange(() => del(member, dm), "You don't have permission to delete this message");
  });

  it('lets a member of the channel’s can_delete_any_message_group delete others’ messages there', async () => {
    const { member, owner } = t.cast;
    const id = await send(owner);
    await refusedWithoutChange(() => del(member, id), "You don't have permission to delete this message");
    await t.ctx.db('channels').where({ id: general.id }).update({ can_delete_any_message_group: groups['role:members'] });
    expect((await del(member, id)).status).toBe(200);
    expect(await exists(id)).toBe(false);
  });

  it('lets guests delete their own messages only, and only where they can read', async () => {
    const { guest, owner } = t.cast;
    const own = await send(guest, 'guest message');
    const other = await send(owner, 'not the guest’s');
    const elsewhere = await send(owner, 'in a channel the guest is not in', 'x', 'open');
    await refusedWithoutChange(() => del(guest, other), "You don't have permission to delete this message");
    await refusedWithoutChange(() => del(guest, elsewhere), 'Invalid message(s)');
    expect((await del(guest, own)).status).toBe(200);
  });

  it('answers Invalid message(s) in an archived channel, and in a private channel one has left', async () => {
    const { owner, admin, member } = t.cast;
    const archivedChannel = await createChannel(t, 'archived', [owner, admin, member]);
    const inArchived = await send(member, 'in a channel about to be archived', 't', 'archived');
    // A fixture: archiving channels has no endpoint yet.
    await t.ctx.db('channels').where({ id: archivedChannel.id }).update({ deactivated: true });
    await refusedWithoutChange(() => del(member, inArchived), 'Invalid message(s)');
    await refusedWithoutChange(() => del(admin, inArchived), 'Invalid message(s)');

    await createChannel(t, 'left', [owner, member], { inviteOnly: true, historyPublicToSubscribers: false });
    const mine = await send(member, 'said before leaving', 't', 'left');
    const left = await t.api.delete('/users/me/subscriptions', member, { subscriptions: ['left'] });
    expect(left.status).toBe(200);
    // The member still holds the row (and may read it), but changing it needs the channel.
    await refusedWithoutChange(() => del(member, mine), 'Invalid message(s)');
    expect((await del(owner, mine)).status).toBe(200);
  });

  it('answers Invalid message(s) for a missing or already deleted message', async () => {
    await refusedWithoutChange(() => del(t.cast.admin, 999_999), 'Invalid message(s)');
    const id = await send(t.cast.member);
    expect((await del(t.cast.admin, id)).status).toBe(200);
    await refusedWithoutChange(() => del(t.cast.admin, id), 'Invalid message(s)');
  });

  it('deletes a message once when several requests race for it', async () => {
    const id = await send(t.cast.member, 'raced');
    let answers: Array<{ status: number; body: Record<string, any> }> = [];
    const seen = await recording(async () => {
      answers = await Promise.all([1, 2, 3, 4].map(() => del(t.cast.admin, id)));
    });
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of answers.filter((a) => a.status !== 200)) {
      expect(r.status).toBe(400);
      expect(['Invalid message(s)', 'Message already deleted']).toContain(r.body.msg);
    }
    expect(await getArchivedMessages(t.ctx.db, [id])).toHaveLength(1);
    expect(seen.filter((d) => d.event.type === 'delete_message')).toHaveLength(1);
  });

  it('deletes direct messages with a private delete_message event to the participants', async () => {
    const { member, owner, admin } = t.cast;
    const dm = await sendDirect(t, member, [owner], 'private words');
    const seen = await recording(async () => expect((await del(member, dm)).status).toBe(200));
    const event = seen.find((d) => d.event.type === 'delete_message')!;
    expect(event.event).toEqual({ type: 'delete_message', message_type: 'private', message_ids: [dm] });
    expect([...event.userIds].sort((a, b) => a - b)).toEqual([member.id, owner.id].sort((a, b) => a - b));
    expect(event.userIds).not.toContain(admin.id);
    expect((await getArchivedMessages(t.ctx.db, [dm]))[0]!.content).toBe('private words');
  });

  it('takes the message out of unread counts', async () => {
    const { member, owner } = t.cast;
    const unreadOf = async () =>
      (
        await t.api.get('/messages', member, {
          anchor: 'newest',
          num_before: 100,
          num_after: 0,
          narrow: [{ operator: 'is', operand: 'unread' }],
        })
      ).body.messages.map((m: { id: number }) => m.id);
    const id = await send(owner, 'unread for the member');
    expect(await unreadOf()).toContain(id);
    const before = (await register(t, member)).state.unread_msgs.count;
    expect((await del(owner, id)).status).toBe(200);
    expect(await unreadOf()).not.toContain(id);
    expect((await register(t, member)).state.unread_msgs.count).toBe(before - 1);
  });

  it('moves first_message_id on when the channel’s oldest message goes, with a stream update event', async () => {
    const { owner, admin } = t.cast;
    const lonely = await createChannel(t, 'lonely', [owner, admin]);
    const first = await send(owner, 'first', 't', 'lonely');
    const second = await send(owner, 'second', 't', 'lonely');
    expect((await t.ctx.db('channels').where({ id: lonely.id }).first('first_message_id'))!.first_message_id).toBe(first);

    // Deleting a later message leaves it alone.
    const third = await send(owner, 'third', 't', 'lonely');
    let seen = await recording(async () => expect((await del(owner, third)).status).toBe(200));
    expect(seen.map((d) => d.event.type)).toEqual(['delete_message']);

    seen = await recording(async () => expect((await del(owner, first)).status).toBe(200));
    expect((await t.ctx.db('channels').where({ id: lonely.id }).first('first_message_id'))!.first_message_id).toBe(second);
    expect(seen.map((d) => d.event)).toEqual([
      { type: 'stream', op: 'update', property: 'first_message_id', value: second, stream_id: lonely.id, name: 'lonely' },
      { type: 'delete_message', message_type: 'stream', message_ids: [first], stream_id: lonely.id, topic: 't' },
    ]);

    seen = await recording(async () => expect((await del(owner, second)).status).toBe(200));
    expect((await t.ctx.db('channels').where({ id: lonely.id }).first('first_message_id'))!.first_message_id).toBeNull();
    expect(seen[0]!.event).toMatchObject({ type: 'stream', property: 'first_message_id', value: null });
  });

  it('queues one event per message for clients without bulk_message_deletion, and names the empty topic for older clients', async () => {
    const { member, owner } = t.cast;
    const bulk = await register(t, member, { client_capabilities: { bulk_message_deletion: true, empty_topic_name: true } });
    const legacy = await register(t, member, { event_types: ['delete_message'] });
    const id = await sendToChannel(t, owner, 'general', '', 'in the empty topic');
    await pending(t, bulk);
    expect((await del(owner, id)).status).toBe(200);
    expect((await pending(t, bulk)).filter((e) => e.type === 'delete_message')).toEqual([
      { id: expect.any(Number), type: 'delete_message', message_type: 'stream', message_ids: [id], stream_id: general.id, topic: '' },
    ]);
    expect(await pending(t, legacy)).toEqual([
      {
        id: expect.any(Number),
        type: 'delete_message',
        message_type: 'stream',
        message_id: id,
        stream_id: general.id,
        topic: 'general chat',
      },
    ]);
  });
});
