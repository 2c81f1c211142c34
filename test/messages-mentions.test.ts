import { eachDatabase } from './support/databases';
import { createChannel, createMembers, startTestServer, TestServer } from './support/server';

eachDatabase('mentions, wildcards and message facts', (dialect) => {
  let t: TestServer;
  let groups: Record<string, number>;
  let team: number;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member, guest } = t.cast;
    await createChannel(t, 'general', [owner, admin, moderator, member, guest]);
    const rows = await t.ctx.db('user_groups').where({ realm_id: t.realmId, is_system_group: true }).select('id', 'name');
    groups = Object.fromEntries(rows.map((r: any) => [r.name, r.id]));
    const inserted = await t.ctx
      .db('user_groups')
      .insert({ realm_id: t.realmId, name: 'support', can_mention_group: groups['role:everyone'] });
    team = Number(Array.isArray(inserted) ? inserted[0] : inserted);
    await t.ctx.db('group_members').insert([
      { group_id: team, user_id: moderator.id },
      { group_id: team, user_id: guest.id },
    ]);
  });
  afterAll(() => t.close());

  const flagsOf = async (messageId: number, userId: number) =>
    Number((await t.ctx.db('user_messages').where({ message_id: messageId, user_id: userId }).first('flags'))!.flags);

  it('a group mention flags every member as mentioned, and renders as a group mention', async () => {
    const res = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: 'g', content: 'ping @*support*' });
    expect(res.status).toBe(200);
    expect((await flagsOf(res.body.id, t.cast.moderator.id)) & 8).toBe(8);
    expect((await flagsOf(res.body.id, t.cast.guest.id)) & 8).toBe(8);
    expect((await flagsOf(res.body.id, t.cast.member.id)) & 8).toBe(0);
    const m = (await t.api.get(`/messages/${res.body.id}`, t.cast.member)).body.message;
    expect(m.content).toContain(`data-user-group-id="${team}"`);
    const mentioned = await t.api.get('/messages', t.cast.guest, {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'mentioned' }],
    });
    expect(mentioned.body.messages.map((x: any) => x.id)).toEqual([res.body.id]);
  });

  it('refuses mentioning a group one may not mention', async () => {
    await t.ctx.db('user_groups').where({ id: team }).update({ can_mention_group: groups['role:administrators'] });
    const res = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'g', content: 'hey @*support*' });
    expect(res.body).toEqual({ result: 'error', msg: "You are not allowed to mention user group 'support'.", code: 'BAD_REQUEST' });
    const silent = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'g', content: 'hey @_*support*' });
    expect(silent.status).toBe(200);
  });

  it('refuses a topic wildcard in a topic with many participants from someone outside can_mention_many_users_group', async () => {
    const crowd = await createMembers(t, 'talker', 16);
    const busy = await createChannel(t, 'busy-topic', [t.cast.member, t.cast.admin, ...crowd]);
    for (const u of crowd) await t.api.post('/messages', u, { type: 'channel', to: busy.id, topic: 'chat', content: 'me too' });
    const res = await t.api.post('/messages', t.cast.member, {
      type: 'channel',
      to: busy.id,
      topic: 'chat',
      content: '@**topic** please read',
    });
    expect(res.body).toEqual({
      result: 'error',
      code: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED',
      msg: 'You do not have permission to use topic wildcard mentions in this topic.',
    });
    expect(
      (await t.api.post('/messages', t.cast.admin, { type: 'channel', to: busy.id, topic: 'chat', content: '@**topic** please read' }))
        .status,
    ).toBe(200);
  });

  it('records images and attachments for has:image and has:attachment, and /me messages', async () => {
    const img = await t.api.post('/messages', t.cast.owner, {
      type: 'channel',
      to: 'general',
      topic: 'media',
      content: 'look https://example.com/cat.png',
    });
    // has_attachment means the message links an upload of its sender (as Zulip), not just a URL.
    const pathId = `${t.realmId}/ab/notes.pdf`;
    await t.ctx.db('attachments').insert({
      realm_id: t.realmId,
      owner_id: t.cast.owner.id,
      file_name: 'notes.pdf',
      path_id: pathId,
      size: 1,
      content_type: 'application/pdf',
      create_time: 1,
    });
    await t.api.post('/messages', t.cast.owner, {
      type: 'channel',
      to: 'general',
      topic: 'media',
      content: '[nothing](/user_uploads/1/ab/none.pdf)',
    });
    const att = await t.api.post('/messages', t.cast.owner, {
      type: 'channel',
      to: 'general',
      topic: 'media',
      content: `[notes.pdf](/user_uploads/${pathId})`,
    });
    const me = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: 'media', content: '/me waves' });
    const narrow = async (operand: string) =>
      (
        await t.api.get('/messages', t.cast.member, {
          anchor: 'newest',
          num_before: 20,
          num_after: 0,
          narrow: [{ operator: 'has', operand }],
        })
      ).body.messages.map((m: any) => m.id);
    expect(await narrow('image')).toEqual([img.body.id]);
    expect(await narrow('attachment')).toEqual([att.body.id]);
    expect((await t.api.get(`/messages/${me.body.id}`, t.cast.member)).body.message.is_me_message).toBe(true);
  });

  it('treats near as guidance only and dm negation as everything but that conversation', async () => {
    const dm = await t.api.post('/messages', t.cast.member, { type: 'direct', to: [t.cast.owner.id], content: 'psst' });
    const near = await t.api.get('/messages', t.cast.member, {
      anchor: 'newest',
      num_before: 100,
      num_after: 0,
      narrow: [{ operator: 'near', operand: 1 }],
    });
    const all = await t.api.get('/messages', t.cast.member, { anchor: 'newest', num_before: 100, num_after: 0 });
    expect(near.body.messages.length).toBe(all.body.messages.length);
    const notDm = await t.api.get('/messages', t.cast.member, {
      anchor: 'newest',
      num_before: 100,
      num_after: 0,
      narrow: [{ operator: 'dm', operand: [t.cast.owner.id], negated: true }],
    });
    expect(notDm.body.messages.map((m: any) => m.id)).not.toContain(dm.body.id);
    expect(notDm.body.messages.length).toBe(all.body.messages.length - 1);
  });
});

eachDatabase('channel links', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    await createChannel(t, 'open-room', [t.cast.owner, t.cast.member]);
    await createChannel(t, 'secret-merger', [t.cast.owner], { inviteOnly: true });
  });
  afterAll(() => t.close());

  it('link only channels the sender may know exist', async () => {
    const res = await t.api.post('/messages', t.cast.member, {
      type: 'direct',
      to: [t.cast.member.id],
      content: '#**open-room** and #**secret-merger**',
    });
    const html = (await t.api.get(`/messages/${res.body.id}`, t.cast.member)).body.message.content;
    expect(html).toContain('class="stream"');
    expect(html).toContain('#open-room');
    expect(html).not.toContain('secret-merger"');
    expect(html.match(/data-stream-id/g)).toHaveLength(1);
  });
});
