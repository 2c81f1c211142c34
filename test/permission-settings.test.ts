import { CHANNEL_GROUP_SETTINGS, GROUP_GROUP_SETTINGS, REALM_GROUP_SETTINGS } from '../src/db/migrations/001_initial';
import { eachDatabase } from './support/databases';
import { register } from './support/events';
import { startTestServer, TestServer } from './support/server';

/**
 * server_supported_permission_settings (POST /register, `realm`): what
 * clients are told about each group-based setting is what the server does —
 * the defaults a new organization gets and the values channels refuse.
 */
eachDatabase('server_supported_permission_settings', (dialect) => {
  let t: TestServer;
  let settings: Record<'realm' | 'stream' | 'group', Record<string, Record<string, unknown>>>;
  let state: Record<string, any>;
  const groupIds: Record<string, number> = {};
  beforeAll(async () => {
    t = await startTestServer(dialect);
    ({ state } = await register(t, t.cast.member, { fetch_event_types: ['realm', 'realm_user_groups'] }));
    settings = state.server_supported_permission_settings;
    const rows = await t.ctx.db('user_groups').where({ realm_id: t.realmId, is_system_group: true }).select('id', 'name');
    for (const r of rows) groupIds[r.name!] = Number(r.id);
  });
  afterAll(() => t.close());

  it('describes every group-based setting Parley has, and no other', () => {
    expect(Object.keys(settings).sort()).toEqual(['group', 'realm', 'stream']);
    expect(Object.keys(settings.realm).sort()).toEqual([...REALM_GROUP_SETTINGS].sort());
    expect(Object.keys(settings.stream).sort()).toEqual([...CHANNEL_GROUP_SETTINGS].sort());
    expect(Object.keys(settings.group).sort()).toEqual([...GROUP_GROUP_SETTINGS].sort());
  });

  it("uses Zulip's shape and values", () => {
    expect(settings.realm.can_access_all_users_group).toEqual({
      require_system_group: true,
      allow_internet_group: false,
      allow_nobody_group: false,
      allow_everyone_group: true,
      default_group_name: 'role:everyone',
      default_for_system_groups: null,
      allowed_system_groups: ['role:everyone', 'role:members'],
    });
    expect(settings.stream.can_administer_channel_group).toEqual({
      require_system_group: false,
      allow_internet_group: false,
      allow_nobody_group: true,
      allow_everyone_group: false,
      default_group_name: 'channel_creator',
      default_for_system_groups: null,
      allowed_system_groups: [],
    });
    expect(settings.group.can_manage_group).toMatchObject({
      default_group_name: 'group_creator',
      default_for_system_groups: 'role:nobody',
    });
    expect(settings.group.can_mention_group).toMatchObject({ default_group_name: 'role:everyone', allow_everyone_group: true });
  });

  it('advertises the defaults a new organization has', () => {
    for (const name of REALM_GROUP_SETTINGS) {
      expect([name, state[`realm_${name}`]]).toEqual([name, groupIds[settings.realm[name]!.default_group_name as string]]);
    }
  });

  it('advertises the value system groups have', () => {
    const members = state.realm_user_groups.find((g: { name: string }) => g.name === 'role:members');
    for (const name of GROUP_GROUP_SETTINGS) {
      expect([name, members[name]]).toEqual([name, groupIds[settings.group[name]!.default_for_system_groups as string]]);
    }
  });

  it('advertises which channel settings refuse role:everyone and role:nobody', async () => {
    let n = 0;
    for (const name of CHANNEL_GROUP_SETTINGS) {
      for (const [group, allowed] of [
        ['role:everyone', 'allow_everyone_group'],
        ['role:nobody', 'allow_nobody_group'],
      ] as const) {
        const fields = { name: `rules-${++n}`, subscribers: [t.cast.admin.id], [name]: groupIds[group] };
        const res = await t.api.post('/channels/create', t.cast.admin, fields);
        const refusal = { result: 'error', msg: `'${name}' setting cannot be set to '${group}' group.`, code: 'BAD_REQUEST' };
        // Accepted: the channel holds that group in the setting.
        const outcome = res.status === 200 ? Number((await t.ctx.db('channels').where({ id: res.body.id }).first(name))![name]) : res.body;
        expect([name, group, outcome]).toEqual([name, group, settings.stream[name]![allowed] ? groupIds[group] : refusal]);
      }
    }
  });
});
