import { eachDatabase } from './support/databases';
import { pending, register, startEventsServer, stopEventsServer } from './support/events';
import { createChannel, type TestServer } from './support/server';
import { AuditEventType } from '../src/domain/audit';

eachDatabase('PATCH /streams/{stream_id}', (dialect) => {
  let t: TestServer;
  let secret: { id: number; recipient_id: number };
  let groups: Record<string, number>;
  beforeAll(async () => {
    ({ t, secret } = await startEventsServer(dialect));
    const rows = await t.ctx.db('user_groups').where({ realm_id: t.realmId, is_system_group: true }).select('id', 'name');
    groups = Object.fromEntries(rows.map((r: any) => [r.name, Number(r.id)]));
  });
  afterAll(() => stopEventsServer(t));

  let n = 0;
  const fresh = async (opts: Parameters<typeof createChannel>[3] = {}, subscribers = [t.cast.owner, t.cast.member, t.cast.guest]) =>
    createChannel(t, `upd-${n++}`, subscribers, opts);
  const row = async (id: number) => (await t.ctx.db('channels').where({ id }).first())!;
  const audit = async (id: number) =>
    (
      await t.ctx
        .db('audit_log')
        .where({ modified_channel_id: id })
        .where('event_type', '>', AuditEventType.CHANNEL_CREATED)
        .where('event_type', '<', 700)
        .orderBy('id')
    ).map((r: any) => ({ type: Number(r.event_type), actor: r.acting_user_id, extra: r.extra_data ? JSON.parse(r.extra_data) : null }));

  it.each([
    ['owner', 200, ''],
    ['admin', 200, ''],
    ['moderator', 400, 'You do not have permission to administer this channel.'],
    ['member', 400, 'You do not have permission to administer this channel.'],
    ['guest', 400, 'You do not have permission to administer this channel.'],
  ])('a channel someone else administers: %s answers %i', async (role, status, msg) => {
    const c = await fresh();
    const res = await t.api.patch(`/streams/${c.id}`, t.cast[role as 'owner'], { description: 'new words' });
    expect(res.status).toBe(status);
    if (msg) expect(res.body).toEqual({ result: 'error', msg, code: 'CANNOT_ADMINISTER_CHANNEL' });
    expect((await row(c.id)).description).toBe(status === 200 ? 'new words' : '');
  });

  it('lets a member of can_administer_channel_group change it, and hides private channels from others', async () => {
    const c = await fresh({ creator: t.cast.member });
    expect((await t.api.patch(`/streams/${c.id}`, t.cast.member, { description: 'mine' })).status).toBe(200);
    expect((await t.api.patch(`/streams/${secret.id}`, t.cast.member, { description: 'x' })).body.msg).toBe('Invalid channel ID');
    expect((await t.api.patch(`/streams/999999`, t.cast.owner, { description: 'x' })).body.msg).toBe('Invalid channel ID');
  });

  it('renames and describes: events to the audience with rendered_description, one audit row each', async () => {
    const c = await fresh();
    const [member, guest, outsider] = [
      await register(t, t.cast.member),
      await register(t, t.cast.guest),
      await register(t, t.cast.moderator),
    ];
    const res = await t.api.patch(`/streams/${c.id}`, t.cast.admin, { new_name: `  renamed-${c.id} `, description: 'one\ntwo **b**' });
    expect(res.body).toEqual({ result: 'success', msg: '' });
    const after = await row(c.id);
    expect(after.name).toBe(`renamed-${c.id}`);
    expect(after.description).toBe('one two **b**');
    const old = `upd-${n - 1}`;
    const expected = [
      {
        type: 'stream',
        op: 'update',
        stream_id: c.id,
        name: old,
        property: 'description',
        value: 'one two **b**',
        rendered_description: '<p>one two <strong>b</strong></p>',
      },
      { type: 'stream', op: 'update', stream_id: c.id, name: old, property: 'name', value: `renamed-${c.id}` },
    ];
    for (const client of [member, guest, outsider])
      expect(await pending(t, client)).toEqual(expected.map((e) => expect.objectContaining(e)));
    expect(await audit(c.id)).toEqual([
      {
        type: AuditEventType.CHANNEL_PROPERTY_CHANGED,
        actor: t.cast.admin.id,
        extra: { old_value: '', new_value: 'one two **b**', property: 'description' },
      },
      { type: AuditEventType.CHANNEL_NAME_CHANGED, actor: t.cast.admin.id, extra: { old_value: old, new_value: `renamed-${c.id}` } },
    ]);
    // A change of case only is a rename too.
    expect((await t.api.patch(`/streams/${c.id}`, t.cast.admin, { new_name: `RENAMED-${c.id}` })).status).toBe(200);
  });

  it.each([
    ['the same name', (name: string) => ({ new_name: name }), 'Channel already has that name.'],
    ['a name in use', () => ({ new_name: 'GENERAL' }), 'Channel name already in use.'],
    ['a name too long', () => ({ new_name: 'n'.repeat(61) }), 'Channel name too long (limit: 60 characters).'],
    ['an empty name', () => ({ new_name: '  ' }), "Channel name can't be empty."],
    ['a description too long', () => ({ description: 'd'.repeat(1025) }), 'description is too long (limit: 1024 characters)'],
    ['a public channel with protected history', () => ({ history_public_to_subscribers: false }), 'Invalid parameters'],
    ['a private web-public channel', () => ({ is_private: true, is_web_public: true }), 'Invalid parameters'],
    ['web-public where spectators are off', () => ({ is_web_public: true }), 'Web-public channels are not enabled.'],
    ['a private default channel', () => ({ is_private: true, is_default_stream: true }), 'A default channel cannot be private.'],
    ['a retention period from an administrator', () => ({ message_retention_days: 30 }), 'Must be an organization owner'],
    ['an unknown folder', () => ({ folder_id: 999999 }), 'Invalid channel folder ID'],
    ['an unknown group', () => ({ can_send_message_group: { new: 999999 } }), 'Invalid user group ID: 999999'],
    [
      'role:everyone where it is not allowed',
      () => ({ can_subscribe_group: { new: groups['role:everyone'] } }),
      "'can_subscribe_group' setting cannot be set to 'role:everyone' group.",
    ],
  ])('refuses %s, changing nothing', async (_what, body, msg) => {
    const c = await fresh();
    const before = await row(c.id);
    const res = await t.api.patch(`/streams/${c.id}`, t.cast.admin, { description: 'changed', ...body(before.name) });
    expect(res.status).toBe(400);
    expect(res.body.msg).toBe(msg);
    expect(await row(c.id)).toEqual(before);
    expect(await audit(c.id)).toEqual([]);
  });

  it('changes a group setting with {new, old}, refusing a stale old value', async () => {
    const c = await fresh();
    const [member] = [await register(t, t.cast.member)];
    const stale = await t.api.patch(`/streams/${c.id}`, t.cast.admin, {
      can_send_message_group: { new: groups['role:members'], old: groups['role:administrators'] },
    });
    expect(stale.body).toEqual({ result: 'error', msg: "'old' value does not match the expected value.", code: 'EXPECTATION_MISMATCH' });
    const ok = await t.api.patch(`/streams/${c.id}`, t.cast.admin, {
      can_send_message_group: { new: groups['role:members'], old: groups['role:everyone'] },
      can_remove_subscribers_group: { new: { direct_members: [t.cast.member.id], direct_subgroups: [] } },
    });
    expect(ok.status).toBe(200);
    expect(Number((await row(c.id)).can_send_message_group)).toBe(groups['role:members']);
    expect(await pending(t, member)).toEqual([
      expect.objectContaining({
        property: 'can_remove_subscribers_group',
        value: { direct_members: [t.cast.member.id], direct_subgroups: [] },
      }),
      expect.objectContaining({ property: 'can_send_message_group', value: groups['role:members'] }),
    ]);
    expect((await audit(c.id)).map((a) => [a.type, a.extra.property])).toEqual([
      [AuditEventType.CHANNEL_GROUP_BASED_SETTING_CHANGED, 'can_remove_subscribers_group'],
      [AuditEventType.CHANNEL_GROUP_BASED_SETTING_CHANGED, 'can_send_message_group'],
    ]);
    // The same value again changes nothing.
    expect((await t.api.patch(`/streams/${c.id}`, t.cast.admin, { can_send_message_group: { new: groups['role:members'] } })).status).toBe(
      200,
    );
    expect(await pending(t, member)).toEqual([]);
  });

  it('makes a channel private: one invite_only update with the other privacy fields; who loses sight hears nothing, as Zulip', async () => {
    const c = await fresh({ creator: t.cast.owner }, [t.cast.owner, t.cast.member]);
    const [member, moderator] = [await register(t, t.cast.member), await register(t, t.cast.moderator)];
    const res = await t.api.patch(`/streams/${c.id}`, t.cast.owner, { is_private: true });
    expect(res.status).toBe(200);
    const after = await row(c.id);
    expect([Boolean(after.invite_only), Boolean(after.history_public_to_subscribers)]).toEqual([true, false]);
    expect(await pending(t, member)).toEqual([
      expect.objectContaining({
        type: 'stream',
        op: 'update',
        property: 'invite_only',
        value: true,
        history_public_to_subscribers: false,
        is_web_public: false,
      }),
    ]);
    expect(await pending(t, moderator)).toEqual([]);
    expect((await audit(c.id)).map((a) => a.extra)).toEqual([
      { old_value: false, new_value: true, property: 'invite_only' },
      { old_value: true, new_value: false, property: 'history_public_to_subscribers' },
    ]);
    // Back to public: the moderator gets the channel as created and its subscribers, not the update;
    // a subscriber gets the update only.
    expect((await t.api.patch(`/streams/${c.id}`, t.cast.owner, { is_private: false })).status).toBe(200);
    const seen = await pending(t, moderator);
    expect(seen.map((e) => [e.type, e.op])).toEqual([
      ['stream', 'create'],
      ['subscription', 'peer_add'],
    ]);
    expect(seen[0]!.streams).toEqual([expect.objectContaining({ stream_id: c.id, invite_only: false })]);
    expect(seen[1]).toMatchObject({ stream_ids: [c.id], user_ids: [t.cast.owner.id, t.cast.member.id].sort((a, b) => a - b) });
    expect((await pending(t, member)).map((e) => [e.type, e.op, e.value])).toEqual([['stream', 'update', false]]);
  });

  it('needs content access to change privacy: an administrator outside a private channel may not', async () => {
    const c = await fresh({ inviteOnly: true }, [t.cast.owner]);
    const res = await t.api.patch(`/streams/${c.id}`, t.cast.admin, { is_private: false });
    expect(res.body.msg).toBe('Channel content access is required.');
    // Metadata-only settings need no content access.
    expect((await t.api.patch(`/streams/${c.id}`, t.cast.admin, { description: 'fine' })).status).toBe(200);
    expect((await t.api.patch(`/streams/${c.id}`, t.cast.admin, { can_subscribe_group: { new: groups['role:members'] } })).body.msg).toBe(
      'Channel content access is required.',
    );
  });

  it('sets default status (administrators), retention (owners) and the topics policy', async () => {
    const c = await fresh();
    const member = await register(t, t.cast.member);
    expect(
      (await t.api.patch(`/streams/${c.id}`, t.cast.admin, { is_default_stream: true, topics_policy: 'disable_empty_topic' })).status,
    ).toBe(200);
    expect((await t.api.patch(`/streams/${c.id}`, t.cast.owner, { message_retention_days: 'unlimited' })).status).toBe(200);
    const after = await row(c.id);
    expect([Boolean(after.is_default), after.topics_policy, after.message_retention_days]).toEqual([true, 'disable_empty_topic', -1]);
    expect((await pending(t, member)).map((e) => e.type + ':' + (e.property ?? ''))).toEqual([
      'default_streams:',
      'stream:topics_policy',
      'stream:message_retention_days',
    ]);
    const mine = await fresh({ creator: t.cast.member });
    expect((await t.api.patch(`/streams/${mine.id}`, t.cast.member, { is_default_stream: true })).body).toEqual({
      result: 'error',
      msg: 'You do not have permission to change default channels.',
      code: 'BAD_REQUEST',
    });
  });

  it('ignores the legacy is_announcement_only and stream_post_policy', async () => {
    const c = await fresh();
    const res = await t.api.patch(`/streams/${c.id}`, t.cast.admin, { is_announcement_only: true, stream_post_policy: 2 });
    expect(res.status).toBe(200);
    expect(res.body.ignored_parameters_unsupported.sort()).toEqual(['is_announcement_only', 'stream_post_policy']);
  });
});
