import { createHash } from 'node:crypto';
import type { Delivery } from '../src/events/bus';
import { eachDatabase } from './support/databases';
import { createChannel, createMembers, startTestServer, TestServer } from './support/server';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** PATCH /messages/{id}: content edits. */
eachDatabase('editing message content', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, member, moderator, guest } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, member, moderator, guest]);
  });
  afterAll(() => t.close());

  const send = async (content: string, user = t.cast.member, topic = 'edits') =>
    (await t.api.post('/messages', user, { type: 'channel', to: 'general', topic, content })).body.id as number;
  const row = (id: number) => t.ctx.db('messages').where({ id }).first();
  const flagsOf = async (userId: number, id: number) =>
    Number((await t.ctx.db('user_messages').where({ user_id: userId, message_id: id }).first('flags'))?.flags ?? -1);
  const setRealm = (values: Record<string, unknown>) => t.ctx.db('realms').where({ id: t.realmId }).update(values);
  const group = async (name: string) => (await t.ctx.db('user_groups').where({ realm_id: t.realmId, name }).first('id'))!.id as number;
  const capture = () => {
    const seen: Delivery[] = [];
    const off = t.ctx.bus.subscribe((d) => seen.push(d));
    return { seen, off };
  };

  it('lets the sender edit: new content and rendering, last_edit_timestamp, edit history, an update_message event', async () => {
    const id = await send('first *draft*');
    const { seen, off } = capture();
    try {
      const res = await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'second **draft**' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '', detached_uploads: [] });
      const m = (await t.api.get(`/messages/${id}`, t.cast.member)).body.message;
      expect(m.content).toBe('<p>second <strong>draft</strong></p>');
      expect(m.last_edit_timestamp).toEqual(expect.any(Number));
      expect(m.last_moved_timestamp).toBeUndefined();
      expect(m.edit_history).toEqual([
        {
          user_id: t.cast.member.id,
          timestamp: m.last_edit_timestamp,
          prev_content: 'first *draft*',
          prev_rendered_content: '<p>first <em>draft</em></p>',
        },
      ]);
      const update = seen.find((d) => d.event.type === 'update_message')!;
      expect(update.event).toMatchObject({
        type: 'update_message',
        user_id: t.cast.member.id,
        message_id: id,
        message_ids: [id],
        rendering_only: false,
        orig_content: 'first *draft*',
        content: 'second **draft**',
        rendered_content: '<p>second <strong>draft</strong></p>',
        stream_id: general.id,
        stream_name: 'general',
        is_me_message: false,
      });
      expect(update.event.propagate_mode).toBeUndefined();
      expect([...update.userIds].sort()).toEqual(
        [t.cast.owner.id, t.cast.admin.id, t.cast.member.id, t.cast.moderator.id, t.cast.guest.id].sort(),
      );
      expect(update.perUser!(t.cast.member.id)).toEqual({ flags: [] }); // sent from an API client: unread
    } finally {
      off();
    }
  });

  it('GET /messages/{id}/history shows the edit made here', async () => {
    const id = await send('before');
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'after', topic: 'edits renamed' });
    const history = (await t.api.get(`/messages/${id}/history`, t.cast.member)).body.message_history;
    expect(history).toHaveLength(2);
    expect(history[0]).toMatchObject({ content: 'before', topic: 'edits' });
    expect(history[1]).toMatchObject({ content: 'after', prev_content: 'before', topic: 'edits renamed', prev_topic: 'edits' });
  });

  it('search sees the edited content at once', async () => {
    const id = await send('nothing special');
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'zanzibarquux appears' });
    const found = await t.api.get('/messages', t.cast.owner, {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'search', operand: 'zanzibarquux' }],
    });
    expect(found.body.messages.map((m: any) => m.id)).toEqual([id]);
  });

  it.each([
    ['another member', 'owner'],
    ['an administrator', 'admin'],
  ] as const)("refuses %s editing someone else's content, changing nothing", async (_label, who) => {
    const id = await send('mine');
    const res = await t.api.patch(`/messages/${id}`, t.cast[who], { content: 'theirs' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: 'error', msg: "You don't have permission to edit this message", code: 'BAD_REQUEST' });
    expect((await row(id))!.content).toBe('mine');
    expect(await t.ctx.db('message_edits').where({ message_id: id }).first()).toBeUndefined();
  });

  it('refuses edits when the organization turned editing off', async () => {
    const id = await send('locked');
    await setRealm({ allow_message_editing: false });
    try {
      const res = await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'unlocked' });
      expect(res.body.msg).toBe('Your organization has turned off message editing');
      expect((await row(id))!.content).toBe('locked');
    } finally {
      await setRealm({ allow_message_editing: true });
    }
  });

  it('applies message_content_edit_limit_seconds with a 20-second grace, and no limit when null', async () => {
    const id = await send('aging');
    const now = Math.floor(Date.now() / 1000);
    await setRealm({ message_content_edit_limit_seconds: 100 });
    try {
      await t.ctx
        .db('messages')
        .where({ id })
        .update({ date_sent: now - 125 });
      const late = await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'too late' });
      expect(late.body.msg).toBe('The time limit for editing this message has passed');
      expect((await row(id))!.content).toBe('aging');
      await t.ctx
        .db('messages')
        .where({ id })
        .update({ date_sent: now - 110 });
      expect((await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'within grace' })).status).toBe(200);
      await setRealm({ message_content_edit_limit_seconds: null });
      await t.ctx
        .db('messages')
        .where({ id })
        .update({ date_sent: now - 10 * 365 * 86400 });
      expect((await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'no limit' })).status).toBe(200);
    } finally {
      await setRealm({ message_content_edit_limit_seconds: null });
    }
  });

  it.each([
    ['nothing', {}, 'Nothing to change'],
    ['the same topic', { topic: 'edits' }, 'Nothing to change'],
    ['propagate_mode without a topic', { content: 'x', propagate_mode: 'change_all' }, 'Invalid propagate_mode without topic edit'],
    ['content with a channel', { content: 'x', stream_id: 999 }, 'Cannot change message content while changing channel'],
  ])('refuses %s', async (_label, fields, msg) => {
    const id = await send('steady');
    const res = await t.api.patch(`/messages/${id}`, t.cast.member, fields);
    expect(res.status).toBe(400);
    expect(res.body.msg).toBe(msg);
    expect((await row(id))!.content).toBe('steady');
  });

  it("refuses content beside the message's own channel, as Zulip refuses content beside any stream_id", async () => {
    const id = await send('anchored');
    const res = await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'moved?', stream_id: general.id });
    expect([res.status, res.body]).toEqual([
      400,
      { result: 'error', msg: 'Cannot change message content while changing channel', code: 'BAD_REQUEST' },
    ]);
    expect((await row(id))!.content).toBe('anchored');
  });

  it('answers Invalid message(s) for a message the caller cannot read', async () => {
    const res = await t.api.patch('/messages/999999', t.cast.member, { content: 'x' });
    expect(res.body).toEqual({ result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
  });

  it('answers Invalid message(s) in an archived channel, and in a private channel the sender has left', async () => {
    const { owner, member } = t.cast;
    const archived = await createChannel(t, 'to archive', [owner, member]);
    const inArchived = (await t.api.post('/messages', member, { type: 'channel', to: 'to archive', topic: 't', content: 'before' })).body
      .id as number;
    // A fixture: archiving channels has no endpoint yet.
    await t.ctx.db('channels').where({ id: archived.id }).update({ deactivated: true });
    const refused = async (id: number, body: Record<string, unknown>) => {
      const res = await t.api.patch(`/messages/${id}`, member, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    };
    await refused(inArchived, { content: 'after' });
    await refused(inArchived, { topic: 'elsewhere' });
    expect(await row(inArchived)).toMatchObject({ content: 'before', topic: 't' });

    await createChannel(t, 'left behind', [owner, member], { inviteOnly: true, historyPublicToSubscribers: false });
    const said = (await t.api.post('/messages', member, { type: 'channel', to: 'left behind', topic: 't', content: 'before' })).body
      .id as number;
    expect((await t.api.delete('/users/me/subscriptions', member, { subscriptions: ['left behind'] })).status).toBe(200);
    // The sender still holds the row (and may read the message), but changing it needs the channel.
    await refused(said, { content: 'after' });
    expect(await row(said)).toMatchObject({ content: 'before' });
  });

  it('edits direct messages but gives them neither topics nor channels', async () => {
    const id = (await t.api.post('/messages', t.cast.member, { type: 'direct', to: [t.cast.owner.id], content: 'psst' })).body.id;
    expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: 'x' })).body.msg).toBe('Direct messages cannot have topics.');
    expect((await t.api.patch(`/messages/${id}`, t.cast.member, { stream_id: general.id })).body.msg).toBe(
      'Direct messages cannot be moved to channels.',
    );
    const { seen, off } = capture();
    try {
      expect((await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'psst, edited' })).status).toBe(200);
      const update = seen.find((d) => d.event.type === 'update_message')!;
      expect([...update.userIds].sort()).toEqual([t.cast.owner.id, t.cast.member.id].sort());
      expect(update.event.stream_id).toBeUndefined();
    } finally {
      off();
    }
  });

  it('checks prev_content_sha256 against the stored content', async () => {
    const id = await send('v1');
    const stale = await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'v2', prev_content_sha256: sha('v0') });
    expect(stale.body).toEqual({
      result: 'error',
      msg: "'prev_content_sha256' value does not match the expected value.",
      code: 'BAD_REQUEST',
    });
    expect((await row(id))!.content).toBe('v1');
    expect((await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'v2', prev_content_sha256: sha('v1') })).status).toBe(200);
  });

  it('of many concurrent edits carrying the same prev_content_sha256, exactly one succeeds', async () => {
    const id = await send('contested');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.api.patch(`/messages/${id}`, t.cast.member, { content: `winner ${i}`, prev_content_sha256: sha('contested') }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.body.msg).toBe("'prev_content_sha256' value does not match the expected value.");
    }
    const winner = results.indexOf(ok[0]!);
    expect((await row(id))!.content).toBe(`winner ${winner}`);
    const edits = await t.ctx.db('message_edits').where({ message_id: id });
    expect(edits).toHaveLength(1);
    expect(edits[0].prev_content).toBe('contested');
  });

  it('recomputes mention flags for every receiver, setting and clearing them', async () => {
    const mentioned = 8;
    const streamWildcard = 16;
    const topicWildcard = 32;
    const id = await send('plain', t.cast.member, 'mentions');
    await send('I was here', t.cast.owner, 'mentions');
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'hi @**Test Admin**' });
    expect((await flagsOf(t.cast.admin.id, id)) & mentioned).toBe(mentioned);
    expect((await flagsOf(t.cast.owner.id, id)) & mentioned).toBe(0);
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'now @**Test Owner** and @**all**' });
    expect((await flagsOf(t.cast.admin.id, id)) & mentioned).toBe(0);
    expect((await flagsOf(t.cast.owner.id, id)) & mentioned).toBe(mentioned);
    for (const u of [t.cast.owner, t.cast.admin, t.cast.guest]) expect((await flagsOf(u.id, id)) & streamWildcard).toBe(streamWildcard);
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'to the @**topic**' });
    expect((await flagsOf(t.cast.owner.id, id)) & (mentioned | streamWildcard)).toBe(0);
    // Participants of the topic: the two senders.
    expect((await flagsOf(t.cast.owner.id, id)) & topicWildcard).toBe(topicWildcard);
    expect((await flagsOf(t.cast.admin.id, id)) & topicWildcard).toBe(0);
    const m = (await t.api.get(`/messages/${id}`, t.cast.owner)).body.message;
    expect(m.flags).toEqual(expect.arrayContaining(['topic_wildcard_mentioned', 'wildcard_mentioned']));
    const mentions = await t.api.get('/messages', t.cast.owner, {
      anchor: 'newest',
      num_before: 50,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'mentioned' }],
    });
    expect(mentions.body.messages.map((x: any) => x.id)).toContain(id);
  });

  it('applies the wildcard-mention rules to edits (STREAM_/TOPIC_WILDCARD_MENTION_NOT_ALLOWED)', async () => {
    const crowd = await createMembers(t, 'crowd', 16);
    await createChannel(t, 'crowded', [t.cast.member, ...crowd]);
    const nobody = await group('role:nobody');
    const before = (await t.ctx.db('realms').where({ id: t.realmId }).first('can_mention_many_users_group'))!.can_mention_many_users_group;
    await setRealm({ can_mention_many_users_group: nobody });
    try {
      const id = (await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'crowded', topic: 'busy', content: 'hello' })).body
        .id;
      const res = await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'hey @**all**' });
      expect(res.body).toEqual({
        result: 'error',
        msg: 'You do not have permission to use channel wildcard mentions in this channel.',
        code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
      });
      for (const u of crowd) await t.api.post('/messages', u, { type: 'channel', to: 'crowded', topic: 'busy', content: 'me too' });
      const topicRes = await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'hey @**topic**' });
      expect(topicRes.body.code).toBe('TOPIC_WILDCARD_MENTION_NOT_ALLOWED');
      expect((await row(id))!.content).toBe('hello');
    } finally {
      await setRealm({ can_mention_many_users_group: before });
    }
  });

  it('truncates content beyond max_message_length and keeps an emptied message as "(deleted)"', async () => {
    const id = await send('short');
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'x'.repeat(10050) });
    const long = (await row(id))!.content as string;
    expect(long.length).toBe(10000);
    expect(long.endsWith('[message truncated]')).toBe(true);
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: '   ' });
    expect((await row(id))!.content).toBe('(deleted)');
  });

  it("reports the editor's uploads whose last reference the edit removed (detached_uploads)", async () => {
    const now = Math.floor(Date.now() / 1000);
    const upload = async (name: string, owner = t.cast.member) => {
      const pathId = `${t.realmId}/ab/${name}-token/${name}`;
      const [id] = await t.ctx.db('attachments').insert({
        realm_id: t.realmId,
        owner_id: owner.id,
        file_name: name,
        path_id: pathId,
        size: 12,
        create_time: now,
      });
      const attId = typeof id === 'number' ? id : (await t.ctx.db('attachments').where({ path_id: pathId }).first('id'))!.id;
      return { id: attId as number, pathId };
    };
    const a = await upload('a.txt');
    const b = await upload('b.txt');
    const shared = await upload('shared.txt');
    const id = await send(`[a](/user_uploads/${a.pathId}) [b](/user_uploads/${b.pathId}) [s](/user_uploads/${shared.pathId})`);
    await send(`again [s](/user_uploads/${shared.pathId})`);
    expect((await t.ctx.db('attachment_messages').where({ message_id: id })).map((r) => r.attachment_id).sort()).toEqual(
      [a.id, b.id, shared.id].sort(),
    );
    const res = await t.api.patch(`/messages/${id}`, t.cast.member, { content: `only [b](/user_uploads/${b.pathId})` });
    expect(res.body.detached_uploads).toEqual([
      { id: a.id, name: 'a.txt', path_id: a.pathId, size: 12, create_time: now, message_ids: [] },
    ]);
    expect((await t.ctx.db('attachment_messages').where({ message_id: id })).map((r) => r.attachment_id)).toEqual([b.id]);
  });
});
