import { mapBools, UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';

eachDatabase('invitation links', (dialect) => {
  let t: TestServer;
  let groups: Record<string, number>;
  let general: { id: number; recipient_id: number };
  let projects: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    general = await createChannel(t, 'general', [t.cast.owner, t.cast.member]);
    projects = await createChannel(t, 'projects', [t.cast.owner, t.cast.admin, t.cast.member]);
    await t.ctx.db('channels').where({ id: general.id }).update({ is_default: true });
    const rows = await t.ctx.db('user_groups').where({ realm_id: t.realmId, is_system_group: true }).select('id', 'name');
    groups = Object.fromEntries(rows.map((r: any) => [r.name, r.id]));
  });
  afterAll(() => t.close());

  const keyOf = (link: string) => /\/join\/([a-z0-9]+)\/$/.exec(link)![1]!;
  const inviteCount = async () => Number((await t.ctx.db('multiuse_invites').count({ n: '*' }).first())!.n);

  it('an administrator makes a link; joining through it gives the role, channels and an API key', async () => {
    const res = await t.api.post('/invites/multiuse', t.cast.admin, {
      invite_as: 300,
      stream_ids: [projects.id],
      include_realm_default_subscriptions: true,
    });
    expect(res.status).toBe(200);
    expect(res.body.invite_link).toMatch(/^http:\/\/127\.0\.0\.1:9991\/join\/[a-z0-9]{24}\/$/);
    const row = await t.ctx.db('multiuse_invites').orderBy('id', 'desc').first();
    expect(row!.expires_at! - row!.date_created).toBe(14400 * 60);
    const join = await t.api.post(`/invites/multiuse/${keyOf(res.body.invite_link)}/accept`, null, {
      email: 'newcomer@example.com',
      password: 'a-good-password',
      full_name: 'New Comer',
    });
    expect(join.status).toBe(200);
    expect(join.body.api_key).toHaveLength(32);
    const user = await t.ctx.db('users').where({ id: join.body.user_id }).first();
    expect(user!.role).toBe(300);
    const channels = await t.ctx
      .db('subscriptions as s')
      .join('channels as c', 'c.recipient_id', 's.recipient_id')
      .where({ 's.user_id': user!.id, 's.active': true })
      .pluck('c.name');
    expect(channels.sort()).toEqual(['general', 'projects']);
    const me = await t.api.get('/users/me', { ...user, api_key: join.body.api_key } as never);
    expect(me.body.role).toBe(300);
  });

  it('a member makes a link (when the organization allows) and the new user can post where the link said', async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ create_multiuse_invite_group: groups['role:members'] });
    const res = await t.api.post('/invites/multiuse', t.cast.member, { stream_ids: [projects.id], invite_expires_in_minutes: null });
    expect(res.status).toBe(200);
    expect((await t.ctx.db('multiuse_invites').orderBy('id', 'desc').first())!.expires_at).toBeNull();
    const join = await t.api.post(`/invites/multiuse/${keyOf(res.body.invite_link)}/accept`, null, {
      email: 'joiner@example.com',
      password: 'a-good-password',
      full_name: 'Jo Iner',
    });
    expect(join.status).toBe(200);
    const joiner = await t.ctx.db('users').where({ id: join.body.user_id }).first();
    expect(joiner!.role).toBe(400);
    const sent = await t.api.post('/messages', mapBools<UserRow>(joiner!), {
      type: 'channel',
      to: 'projects',
      topic: 'hello',
      content: 'I am in!',
    });
    expect(sent.status).toBe(200);
    await t.ctx.db('realms').where({ id: t.realmId }).update({ create_multiuse_invite_group: groups['role:administrators'] });
  });

  it("adds the new user to the link's groups", async () => {
    const team = await t.ctx.db('user_groups').insert({
      realm_id: t.realmId,
      name: 'team',
      can_add_members_group: groups['role:administrators'],
      can_manage_group: groups['role:administrators'],
    });
    const teamId = Array.isArray(team) ? Number(team[0]) : Number(team);
    const res = await t.api.post('/invites/multiuse', t.cast.admin, { group_ids: [teamId] });
    const join = await t.api.post(`/invites/multiuse/${keyOf(res.body.invite_link)}/accept`, null, {
      email: 'grouped@example.com',
      password: 'a-good-password',
      full_name: 'Grou Ped',
    });
    expect(await t.ctx.db('group_members').where({ group_id: teamId }).pluck('user_id')).toEqual([join.body.user_id]);
  });

  it.each([
    ['a member (by default only administrators may)', 'member', {}, 'Insufficient permission'],
    ['a guest', 'guest', {}, 'Insufficient permission'],
    ['an administrator inviting owners', 'admin', { invite_as: 100 }, 'Must be an organization owner'],
    ['an unknown role', 'owner', { invite_as: 500 }, 'Invalid invite_as'],
    ['an unknown channel', 'admin', { stream_ids: [999999] }, 'Invalid channel ID 999999. No invites were sent.'],
    ['an unknown group', 'admin', { group_ids: [999999] }, 'Invalid user group'],
    ['a system group', 'admin', { group_ids: ['ADMINS'] }, 'Invalid user group'],
    [
      'a welcome text over 8000 characters',
      'admin',
      { welcome_message_custom_text: 'w'.repeat(8001) },
      'welcome_message_custom_text is too long (limit: 8000 characters)',
    ],
    ['a zero expiry', 'admin', { invite_expires_in_minutes: 0 }, 'invite_expires_in_minutes is too small'],
  ] as const)('refuses %s and makes no link', async (_what, who, fields: any, msg) => {
    const before = await inviteCount();
    const body = { ...fields };
    if (body.group_ids?.[0] === 'ADMINS') body.group_ids = [groups['role:administrators']];
    const res = await t.api.post('/invites/multiuse', t.cast[who], body);
    expect([res.status, res.body]).toEqual([
      400,
      { result: 'error', msg, code: msg === 'Must be an organization owner' ? 'UNAUTHORIZED_PRINCIPAL' : 'BAD_REQUEST' },
    ]);
    expect(await inviteCount()).toBe(before);
  });

  it('refuses a welcome text from a non-administrator', async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ create_multiuse_invite_group: groups['role:members'] });
    try {
      const res = await t.api.post('/invites/multiuse', t.cast.member, { welcome_message_custom_text: 'Hi!' });
      expect(res.body).toEqual({ result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
      const subscribeOthers = await t.api.post('/invites/multiuse', t.cast.moderator, { stream_ids: [projects.id] });
      expect(subscribeOthers.status).toBe(200); // realm can_add_subscribers_group is members by default
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ create_multiuse_invite_group: groups['role:administrators'] });
    }
  });

  it('refuses expired, revoked and used-up links, and unknown keys, alike', async () => {
    const make = async () => keyOf((await t.api.post('/invites/multiuse', t.cast.admin, {})).body.invite_link);
    const expired = await make();
    await t.ctx.db('multiuse_invites').where({ link_key: expired }).update({ expires_at: 1000 });
    const revoked = await make();
    await t.ctx.db('multiuse_invites').where({ link_key: revoked }).update({ revoked: true });
    const used = await make();
    await t.ctx.db('multiuse_invites').where({ link_key: used }).update({ max_uses: 1, use_count: 1 });
    const users = Number((await t.ctx.db('users').count({ n: '*' }).first())!.n);
    for (const key of [expired, revoked, used, 'nosuchkey']) {
      const res = await t.api.post(`/invites/multiuse/${key}/accept`, null, {
        email: `${key}@example.com`,
        password: 'a-good-password',
        full_name: 'Nobody Here',
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'The invitation link has expired or is not valid.', code: 'INVALID_INVITATION' });
    }
    expect(Number((await t.ctx.db('users').count({ n: '*' }).first())!.n)).toBe(users);
  });

  it('refuses an address already in use', async () => {
    const key = keyOf((await t.api.post('/invites/multiuse', t.cast.admin, {})).body.invite_link);
    const res = await t.api.post(`/invites/multiuse/${key}/accept`, null, {
      email: 'MEMBER@example.com',
      password: 'a-good-password',
      full_name: 'Dup Licate',
    });
    expect([res.status, res.body]).toEqual([
      400,
      { result: 'error', msg: "Email 'MEMBER@example.com' already in use", code: 'BAD_REQUEST' },
    ]);
  });
});

eachDatabase('invitation limits', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  it('refuses expiry and retention periods beyond what can be stored, with 400s', async () => {
    const invite = await t.api.post('/invites/multiuse', t.cast.admin, { invite_expires_in_minutes: 99999999999 });
    expect([invite.status, invite.body]).toEqual([
      400,
      { result: 'error', msg: 'invite_expires_in_minutes is too large', code: 'BAD_REQUEST' },
    ]);
    const channel = await t.api.post('/channels/create', t.cast.owner, {
      name: 'forever',
      subscribers: [t.cast.owner.id],
      message_retention_days: 99999999999,
    });
    expect([channel.status, channel.body]).toEqual([400, { result: 'error', msg: 'Invalid message_retention_days', code: 'BAD_REQUEST' }]);
  });
});
