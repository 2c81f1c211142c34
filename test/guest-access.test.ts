import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import { createChannel, startTestServer, TestServer } from './support/server';

/** An organization that limits guests (can_access_all_users_group = members): guests learn only about people they share something with. */
eachDatabase('limited guest access', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    await createChannel(t, 'shared', [t.cast.guest, t.cast.member]);
    const members = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:members' }).first('id');
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: members.id });
  });
  afterAll(() => t.close());

  it('lets a guest DM and type to people they share a channel with, and nobody else', async () => {
    expect((await t.api.post('/messages', t.cast.guest, { type: 'direct', to: [t.cast.member.id], content: 'hi' })).status).toBe(200);
    const refused = await t.api.post('/messages', t.cast.guest, { type: 'direct', to: [t.cast.admin.id], content: 'hi' });
    expect(refused.body).toEqual({ result: 'error', msg: 'You do not have permission to access some of the recipients.', code: 'BAD_REQUEST' });
    const typing = await t.api.post('/typing', t.cast.guest, { op: 'start', to: [t.cast.moderator.id] });
    expect(typing.body.msg).toBe('You do not have permission to access some of the recipients.');
  });

  it('tells a guest about a new user only when they share something', async () => {
    const guest = await register(t, t.cast.guest, { event_types: ['realm_user'] });
    const member = await register(t, t.cast.member, { event_types: ['realm_user'] });
    const created = await t.api.post('/users', t.cast.owner, { email: 'newbie@example.com', password: 'a-good-password', full_name: 'New Bie' });
    expect(created.status).toBe(200);
    expect((await pending(t, member)).map((e) => e.op)).toEqual(['add']);
    expect(await pending(t, guest)).toEqual([]);
  });
  it('does not resolve mentions of people a limited guest cannot know', async () => {
    const res = await t.api.post('/messages', t.cast.guest, { type: 'channel', to: 'shared', topic: 'm', content: `@**|${t.cast.admin.id}** and @**|${t.cast.member.id}**` });
    expect(res.status).toBe(200);
    const html = (await t.api.get(`/messages/${res.body.id}`, t.cast.member)).body.message.content;
    expect(html).toContain(`data-user-id="${t.cast.member.id}"`);
    expect(html).not.toContain('Test Admin');
  });
});
