import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { pending, register, startEventsServer, stopEventsServer } from './support/events';
import { createMembers, type TestServer } from './support/server';
import { captureEvents } from './users-fixtures';

eachDatabase('user status', (dialect) => {
  let t: TestServer;
  let parrot: number;
  let retired: number;
  const setStatus = (user: UserRow, fields: Record<string, unknown>) => t.api.post('/users/me/status', user, fields);
  const statusOf = async (user: UserRow, viewer = t.cast.owner) => {
    const res = await t.api.get(`/users/${user.id}/status`, viewer);
    expect(res.status).toBe(200);
    return res.body.status;
  };
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  const settingsOf = async (user: UserRow) => JSON.parse((await t.ctx.db('users').where({ id: user.id }).first('settings'))!.settings);
  const me = async (user: UserRow): Promise<UserRow> => ({ ...user, settings: JSON.stringify(await settingsOf(user)) });

  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
    [parrot] = await t.ctx.db('realm_emoji').insert({ realm_id: t.realmId, name: 'parrot', file_name: 'parrot.gif', deactivated: false });
    [retired] = await t.ctx.db('realm_emoji').insert({ realm_id: t.realmId, name: 'retired', file_name: 'retired.gif', deactivated: true });
    if (dialect === 'mysql') {
      parrot = Number((await t.ctx.db('realm_emoji').where({ name: 'parrot' }).first('id'))!.id);
      retired = Number((await t.ctx.db('realm_emoji').where({ name: 'retired' }).first('id'))!.id);
    }
  });
  afterAll(() => stopEventsServer(t));
  beforeEach(async () => {
    await t.ctx.db('user_status').delete();
  });

  describe('POST /users/me/status', () => {
    it('sets the trimmed text and an emoji looked up by name; GET returns them', async () => {
      const res = await setStatus(t.cast.member, { status_text: '  On vacation ', emoji_name: 'car' });
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(await statusOf(t.cast.member)).toEqual({
        status_text: 'On vacation',
        emoji_name: 'car',
        emoji_code: '1f697',
        reaction_type: 'unicode_emoji',
      });
    });

    it('changes only the fields sent, and empty strings clear', async () => {
      await setStatus(t.cast.member, { status_text: 'Busy', emoji_name: 'car' });
      await setStatus(t.cast.member, { status_text: 'Lunch' });
      expect(await statusOf(t.cast.member)).toEqual({
        status_text: 'Lunch',
        emoji_name: 'car',
        emoji_code: '1f697',
        reaction_type: 'unicode_emoji',
      });
      await setStatus(t.cast.member, { emoji_name: '' });
      expect(await statusOf(t.cast.member)).toEqual({ status_text: 'Lunch' });
      await setStatus(t.cast.member, { status_text: '' });
      expect(await statusOf(t.cast.member)).toEqual({});
    });

    it('takes an explicit code and type, custom emoji and the zulip emoji', async () => {
      await setStatus(t.cast.member, { emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' });
      expect((await statusOf(t.cast.member)).emoji_code).toBe('1f697');
      await setStatus(t.cast.member, { emoji_name: 'parrot' });
      expect(await statusOf(t.cast.member)).toEqual({ emoji_name: 'parrot', emoji_code: String(parrot), reaction_type: 'realm_emoji' });
      await setStatus(t.cast.member, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' });
      expect(await statusOf(t.cast.member)).toEqual({ emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' });
    });

    it('takes 60 characters (code points) after trimming', async () => {
      const text = '😀'.repeat(60);
      await setStatus(t.cast.member, { status_text: ` ${text} ` });
      expect((await statusOf(t.cast.member)).status_text).toBe(text);
    });

    it.each<[string, () => Record<string, unknown>, string]>([
      ['nothing to change', () => ({}), 'Client did not pass any new values.'],
      [
        'a code without a name',
        () => ({ status_text: 'x', emoji_code: '1f697' }),
        'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
      ],
      ['a type without a name', () => ({ reaction_type: 'unicode_emoji' }), 'Client did not pass any new values.'],
      [
        'a type without a name, with text',
        () => ({ status_text: 'x', reaction_type: 'unicode_emoji' }),
        'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
      ],
      ['61 characters', () => ({ status_text: 'x'.repeat(61) }), 'status_text is too long (limit: 60 characters)'],
      ['an unknown emoji name', () => ({ emoji_name: 'nosuch' }), "Emoji 'nosuch' does not exist"],
      ['an invalid emoji code', () => ({ emoji_name: 'car', emoji_code: 'zzzz', reaction_type: 'unicode_emoji' }), 'Invalid emoji code.'],
      [
        "a name that is not the code's",
        () => ({ emoji_name: 'car', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }),
        'Invalid emoji name.',
      ],
      ['an unknown type', () => ({ emoji_name: 'car', emoji_code: '1f697', reaction_type: 'sticker' }), 'Invalid emoji type.'],
      [
        'an unknown custom emoji',
        () => ({ emoji_name: 'parrot', emoji_code: '999999', reaction_type: 'realm_emoji' }),
        'Invalid custom emoji.',
      ],
      [
        "a custom emoji under another's name",
        () => ({ emoji_name: 'owl', emoji_code: String(parrot), reaction_type: 'realm_emoji' }),
        'Invalid custom emoji name.',
      ],
      [
        'a deactivated custom emoji',
        () => ({ emoji_name: 'retired', emoji_code: String(retired), reaction_type: 'realm_emoji' }),
        'This custom emoji has been deactivated.',
      ],
      [
        'a wrong zulip code',
        () => ({ emoji_name: 'zulip', emoji_code: 'zulip2', reaction_type: 'zulip_extra_emoji' }),
        'Invalid emoji code.',
      ],
    ])('refuses %s and changes nothing', async (_what, fields, msg) => {
      await setStatus(t.cast.member, { status_text: 'Before' });
      const res = await setStatus(t.cast.member, fields());
      expect(res.body).toEqual(refusal(msg));
      expect(await statusOf(t.cast.member)).toEqual({ status_text: 'Before' });
    });

    it('away (deprecated) turns presence_enabled off and reads back as away; false turns it on again', async () => {
      const { deliveries } = await captureEvents(t, () => setStatus(t.cast.moderator, { away: true, status_text: 'Out' }));
      expect(deliveries).toContainEqual({
        event: { type: 'user_settings', op: 'update', property: 'presence_enabled', value: false },
        userIds: [t.cast.moderator.id],
      });
      expect((await settingsOf(t.cast.moderator)).presence_enabled).toBe(false);
      expect(await statusOf(t.cast.moderator)).toEqual({ away: true, status_text: 'Out' });
      const presence = await t.ctx.db('user_presence').where({ user_id: t.cast.moderator.id }).first();
      expect(presence!.last_active_time).toBeNull();
      await setStatus(await me(t.cast.moderator), { away: false });
      expect((await settingsOf(t.cast.moderator)).presence_enabled).toBe(true);
      expect(await statusOf(t.cast.moderator)).toEqual({ status_text: 'Out' });
    });

    it('bots may set a status', async () => {
      expect((await setStatus(t.cast.bot, { status_text: 'Beeping' })).status).toBe(200);
      expect(await t.ctx.db('user_status').where({ user_id: t.cast.bot.id }).first('status_text')).toEqual({ status_text: 'Beeping' });
    });
  });

  describe('user_status events', () => {
    it('carry the fields sent to the users who may know the user', async () => {
      const owner = await register(t, t.cast.owner, { event_types: ['user_status'] });
      const self = await register(t, t.cast.member, { event_types: ['user_status'] });
      await setStatus(t.cast.member, { status_text: 'Reading', emoji_name: 'car' });
      const expected = {
        type: 'user_status',
        user_id: t.cast.member.id,
        status_text: 'Reading',
        emoji_name: 'car',
        emoji_code: '1f697',
        reaction_type: 'unicode_emoji',
      };
      expect(await pending(t, owner)).toEqual([{ id: 0, ...expected }]);
      expect(await pending(t, self)).toEqual([{ id: 0, ...expected }]);
      await setStatus(t.cast.member, { emoji_name: '' });
      expect(await pending(t, owner)).toEqual([
        { id: 1, type: 'user_status', user_id: t.cast.member.id, emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' },
      ]);
    });

    it('not to a limited guest who may not know the user, and none for a refused change', async () => {
      const [stranger] = await createMembers(t, 'hermit', 1);
      const membersGroup = Number((await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:members' }).first('id'))!.id);
      const before = (await t.ctx.db('realms').where({ id: t.realmId }).first('can_access_all_users_group'))!.can_access_all_users_group;
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: membersGroup });
      try {
        const guest = await register(t, t.cast.guest, { event_types: ['user_status'] });
        const owner = await register(t, t.cast.owner, { event_types: ['user_status'] });
        await setStatus(stranger!, { status_text: 'x'.repeat(61) });
        await setStatus(stranger!, { status_text: 'Alone' });
        await setStatus(t.cast.member, { status_text: 'Around' });
        expect((await pending(t, owner)).map((e) => e.user_id)).toEqual([stranger!.id, t.cast.member.id]);
        expect((await pending(t, guest)).map((e) => e.user_id)).toEqual([t.cast.member.id]);
        // Nor does the guest's register state or GET show it.
        const state = await register(t, t.cast.guest, { fetch_event_types: ['user_status'] });
        expect(state.state.user_status).toEqual({ [String(t.cast.member.id)]: { status_text: 'Around' } });
        expect((await t.api.get(`/users/${stranger!.id}/status`, t.cast.guest)).body).toEqual(refusal('Insufficient permission'));
      } finally {
        await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: before });
      }
    });
  });

  describe('GET /users/{user_id}/status', () => {
    it('is empty for a user who never set one', async () => {
      expect(await statusOf(t.cast.admin)).toEqual({});
    });

    it.each([
      ['an unknown user', () => 999999, 'No such user'],
      ['a bot', () => t.cast.bot.id, 'No such user'],
      ['a deactivated user', () => t.cast.deactivated.id, 'User is deactivated'],
    ])('refuses %s', async (_what, id, msg) => {
      expect((await t.api.get(`/users/${id()}/status`, t.cast.member)).body).toEqual(refusal(msg));
    });
  });

  describe('POST /register', () => {
    it('carries user_status: users with something set, keyed by ID', async () => {
      await setStatus(t.cast.member, { status_text: 'Hi', emoji_name: 'parrot' });
      await setStatus(t.cast.admin, { status_text: '' });
      const { state } = await register(t, t.cast.owner, { fetch_event_types: ['user_status'] });
      expect(state.user_status).toEqual({
        [String(t.cast.member.id)]: { status_text: 'Hi', emoji_name: 'parrot', emoji_code: String(parrot), reaction_type: 'realm_emoji' },
      });
      const other = await register(t, t.cast.owner, { fetch_event_types: ['message'] });
      expect(other.state).not.toHaveProperty('user_status');
    });
  });
});
