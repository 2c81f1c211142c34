import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import type { UserRow } from '../src/queries/rows';
import { createChannel, startTestServer, TestServer } from './support/server';
import { freshUser } from './users-fixtures';

/** An organization that limits guests (can_access_all_users_group = members): guests learn only about people they share something with. */
eachDatabase('limited guest access', (dialect) => {
  let t: TestServer;
  let membersGroupId: number;
  let everyoneGroupId: number;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    await createChannel(t, 'shared', [t.cast.guest, t.cast.member]);
    const members = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:members' }).first('id');
    membersGroupId = Number(members!.id);
    everyoneGroupId = Number((await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:everyone' }).first('id'))!.id);
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: members!.id });
  });
  afterAll(() => t.close());

  it('lets a guest DM and type to people they share a channel with, and nobody else', async () => {
    const sent = await t.api.post('/messages', t.cast.guest, { type: 'direct', to: [t.cast.member.id], content: 'hi' });
    expect(sent.status).toBe(200);
    expect((await t.api.get(`/messages/${sent.body.id}`, t.cast.member)).body.message).toMatchObject({
      sender_id: t.cast.guest.id,
      content: '<p>hi</p>',
    });
    const noAccess = { result: 'error', msg: 'You do not have permission to access some of the recipients.', code: 'BAD_REQUEST' };
    const refused = await t.api.post('/messages', t.cast.guest, { type: 'direct', to: [t.cast.admin.id], content: 'hi' });
    expect([refused.status, refused.body]).toEqual([400, noAccess]);
    const typing = await t.api.post('/typing', t.cast.guest, { op: 'start', to: [t.cast.moderator.id] });
    expect([typing.status, typing.body]).toEqual([400, noAccess]);
  });

  it('tells a guest about a new user only when they share something', async () => {
    const guest = await register(t, t.cast.guest, { event_types: ['realm_user'] });
    const member = await register(t, t.cast.member, { event_types: ['realm_user'] });
    const created = await t.api.post('/users', t.cast.owner, {
      email: 'newbie@example.com',
      password: 'a-good-password',
      full_name: 'New Bie',
    });
    expect(created.status).toBe(200);
    expect((await pending(t, member)).map((e) => e.op)).toEqual(['add']);
    expect(await pending(t, guest)).toEqual([]);
  });
  describe('mentions resolve only to people the sender may know about', () => {
    const send = async (from: UserRow, to: string, content: string) => {
      const res = await t.api.post('/messages', from, { type: 'channel', to, topic: 'mentions', content });
      expect(res.status).toBe(200);
      const message = (await t.api.get(`/messages/${res.body.id}`, t.cast.owner, { apply_markdown: true })).body.message;
      return { id: res.body.id as number, html: message.content as string };
    };
    const flagsOf = async (messageId: number, userId: number) =>
      (await t.ctx.db('user_messages').where({ message_id: messageId, user_id: userId }).first('flags'))?.flags as number | undefined;
    const MENTIONED = 8;

    it.each([
      ['@**|id**', (id: number) => ['@', `|${id}`]],
      ['@**Name|id**', (id: number) => ['@', `Test Admin|${id}`]],
      ['@**Name**', () => ['@', 'Test Admin']],
      ['@_**Name|id** (silent)', (id: number) => ['@_', `Test Admin|${id}`]],
      ['@_**|id** (silent)', (id: number) => ['@_', `|${id}`]],
    ])('leaves %s of someone a limited guest cannot know as plain text', async (_syntax, parts) => {
      const [prefix, body] = parts(t.cast.admin.id);
      const { html } = await send(t.cast.guest, 'shared', `hi ${prefix}**${body}**`);
      // Ordinary Markdown, as for a name nobody has: no mention, and no name the guest did not type.
      expect(html).toBe(`<p>hi ${prefix}<strong>${body}</strong></p>`);
    });

    it('resolves people the guest shares a channel with, and bots', async () => {
      const { id, html } = await send(t.cast.guest, 'shared', `@**|${t.cast.member.id}** @_**Test Bot**`);
      expect(html).toContain(`<span class="user-mention" data-user-id="${t.cast.member.id}">@Test Member</span>`);
      expect(html).toContain(`<span class="user-mention silent" data-user-id="${t.cast.bot.id}">Test Bot</span>`);
      expect((await flagsOf(id, t.cast.member.id))! & MENTIONED).toBe(MENTIONED);
    });

    it('resolves a name shared with someone the guest cannot know to the one they can', async () => {
      const twin = await freshUser(t, { name: 'Test Member' });
      const { html } = await send(t.cast.guest, 'shared', '@**Test Member**');
      expect(html).toContain(`data-user-id="${t.cast.member.id}"`);
      expect(html).not.toContain(`data-user-id="${twin.id}"`);
      // Anyone else sees two people of that name: no mention at all.
      expect((await send(t.cast.member, 'shared', '@**Test Member**')).html).not.toContain('user-mention');
    });

    it('renders a group mention as the group alone, flagging its members among the receivers', async () => {
      const [group] = await t.ctx.db('user_groups').insert({ realm_id: t.realmId, name: 'mixed', can_mention_group: everyoneGroupId });
      const groupId = Number(group);
      await t.ctx.db('group_members').insert([
        { group_id: groupId, user_id: t.cast.admin.id },
        { group_id: groupId, user_id: t.cast.member.id },
      ]);
      const { id, html } = await send(t.cast.guest, 'shared', '@*mixed*');
      expect(html).toBe(`<p><span class="user-group-mention" data-user-group-id="${groupId}">@mixed</span></p>`);
      expect((await flagsOf(id, t.cast.member.id))! & MENTIONED).toBe(MENTIONED);
      expect(await flagsOf(id, t.cast.admin.id)).toBeUndefined();
    });

    it('flags no receiver the sender may not know about', async () => {
      // Only possible for a sender outside can_access_all_users_group who may post where they are not subscribed.
      const wide = await createChannel(t, 'wide', [t.cast.moderator]);
      const admins = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:administrators' }).first('id');
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: admins!.id });
      try {
        const { id, html } = await send(t.cast.member, 'wide', `@**|${t.cast.moderator.id}** @**Test Moderator**`);
        expect(html).toBe(`<p>@<strong>|${t.cast.moderator.id}</strong> @<strong>Test Moderator</strong></p>`);
        expect(await flagsOf(id, t.cast.moderator.id)).toBe(0);
      } finally {
        await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: membersGroupId });
      }
      expect(wide.id).toBeGreaterThan(0);
    });
  });
});
