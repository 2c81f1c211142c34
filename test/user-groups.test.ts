import { doCreateRealm } from '../src/actions/realms';
import { inTransaction } from '../src/db/transaction';
import { addGroupMembers, addSubgroup, insertGroup } from '../src/queries/groups';
import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';
import { freshUser, systemGroupId } from './users-fixtures';

eachDatabase('user groups', (dialect) => {
  let t: TestServer;
  const g: Record<string, number> = {};
  beforeAll(async () => {
    t = await startTestServer(dialect);
    for (const name of [
      'role:nobody',
      'role:owners',
      'role:administrators',
      'role:moderators',
      'role:fullmembers',
      'role:members',
      'role:everyone',
      'role:internet',
    ]) {
      g[name] = await systemGroupId(t, name);
    }
    const { owner, member, bot, deactivated } = t.cast;
    await inTransaction(t.ctx.db, async ({ trx }) => {
      const base = { realm_id: t.realmId, is_system_group: false, creator_id: owner.id, date_created: 1700000000 };
      const settings = {
        can_add_members_group: g['role:owners'],
        can_join_group: g['role:nobody'],
        can_leave_group: g['role:everyone'],
        can_manage_group: g['role:owners'],
        can_mention_group: g['role:everyone'],
        can_remove_members_group: g['role:nobody'],
      };
      g.design = await insertGroup(trx, { ...base, ...settings, name: 'design', description: 'People who draw' });
      g.inner = await insertGroup(trx, { ...base, ...settings, name: 'inner', description: '' });
      g.old = await insertGroup(trx, { ...base, ...settings, name: 'old', description: 'Gone', deactivated: true });
      g.anon = await insertGroup(trx, { ...base, name: null, description: null });
      await addGroupMembers(trx, g.design, [owner.id, deactivated.id]);
      await addGroupMembers(trx, g.inner, [member.id, bot.id]);
      await addSubgroup(trx, g.design, g.inner);
      await addGroupMembers(trx, g.anon, [member.id]);
      await trx('user_groups').where({ id: g.design }).update({ can_manage_group: g.anon });
    });
  });
  afterAll(() => t.close());

  const isMember = (groupId: number, userId: number, query: Record<string, unknown> = {}, who = t.cast.member) =>
    t.api.get(`/user_groups/${groupId}/members/${userId}`, who, query);

  describe('GET /user_groups/{group}/members/{user}', () => {
    it.each([
      ['a direct member', () => [g.inner!, t.cast.member.id, {}], true],
      ['a member through a subgroup', () => [g.design!, t.cast.member.id, {}], true],
      ['a subgroup member, direct only', () => [g.design!, t.cast.member.id, { direct_member_only: true }], false],
      ['a direct member, direct only', () => [g.design!, t.cast.owner.id, { direct_member_only: true }], true],
      ['a bot, through a subgroup', () => [g.design!, t.cast.bot.id, {}], true],
      ['a deactivated direct member', () => [g.design!, t.cast.deactivated.id, {}], false],
      ['a deactivated direct member, direct only', () => [g.design!, t.cast.deactivated.id, { direct_member_only: true }], false],
      ['a non-member', () => [g.inner!, t.cast.guest.id, {}], false],
      ['an owner in role:members (nested system groups)', () => [g['role:members']!, t.cast.owner.id, {}], true],
      ['a guest in role:members', () => [g['role:members']!, t.cast.guest.id, {}], false],
      ['a guest in role:everyone', () => [g['role:everyone']!, t.cast.guest.id, {}], true],
      ['an owner in role:everyone, direct only', () => [g['role:everyone']!, t.cast.owner.id, { direct_member_only: true }], false],
      ['anyone in role:nobody', () => [g['role:nobody']!, t.cast.owner.id, {}], false],
      ['a member of a deactivated group', () => [g.old!, t.cast.owner.id, {}], false],
    ] as Array<[string, () => [number, number, Record<string, unknown>], boolean]>)('%s', async (_what, args, expected) => {
      const [group, user, query] = args();
      const res = await isMember(group, user, query);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '', is_user_group_member: expected });
    });

    it('answers a bot asking', async () => {
      const res = await isMember(g.inner!, t.cast.bot.id, {}, t.cast.bot);
      expect(res.body.is_user_group_member).toBe(true);
    });

    it('stops counting a user once deactivated, and again once reactivated', async () => {
      const u = await freshUser(t);
      expect((await isMember(g['role:members']!, u.id)).body.is_user_group_member).toBe(true);
      await t.api.delete(`/users/${u.id}`, t.cast.admin);
      expect((await isMember(g['role:members']!, u.id)).body.is_user_group_member).toBe(false);
      await t.api.post(`/users/${u.id}/reactivate`, t.cast.admin);
      expect((await isMember(g['role:members']!, u.id)).body.is_user_group_member).toBe(true);
    });

    it("answers Invalid user group for unknown, anonymous and other organizations' groups", async () => {
      const other = await doCreateRealm(t.ctx.db, { stringId: `groups${dialect}`, name: 'Other' });
      const foreign = Number((await t.ctx.db('user_groups').where({ realm_id: other, name: 'role:members' }).first('id'))!.id);
      for (const id of [99999, g.anon!, foreign]) {
        const res = await isMember(id, t.cast.member.id);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: 'error', msg: 'Invalid user group', code: 'BAD_REQUEST' });
      }
    });

    it('answers No such user for unknown users', async () => {
      const res = await isMember(g.design!, 99999);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'No such user', code: 'BAD_REQUEST' });
    });

    it('refuses a non-boolean direct_member_only', async () => {
      const res = await isMember(g.design!, t.cast.member.id, { direct_member_only: 'sometimes' });
      expect(res.body).toEqual({ result: 'error', msg: 'direct_member_only is not a boolean', code: 'BAD_REQUEST' });
    });
  });

  describe('GET /user_groups', () => {
    it('lists system and named groups, not anonymous or deactivated ones', async () => {
      const res = await t.api.get('/user_groups', t.cast.guest);
      expect(res.status).toBe(200);
      const names = res.body.user_groups.map((x: any) => x.name);
      expect(names).toEqual([
        'role:nobody',
        'role:owners',
        'role:administrators',
        'role:moderators',
        'role:fullmembers',
        'role:members',
        'role:everyone',
        'role:internet',
        'design',
        'inner',
      ]);
    });

    it('gives direct active members, direct subgroups and group-setting values', async () => {
      const res = await t.api.get('/user_groups', t.cast.bot);
      const byName = new Map(res.body.user_groups.map((x: any) => [x.name, x])) as Map<string, any>;
      expect(byName.get('design')).toEqual({
        id: g.design,
        name: 'design',
        description: 'People who draw',
        members: [t.cast.owner.id],
        direct_subgroup_ids: [g.inner],
        is_system_group: false,
        date_created: 1700000000,
        creator_id: t.cast.owner.id,
        deactivated: false,
        can_add_members_group: g['role:owners'],
        can_join_group: g['role:nobody'],
        can_leave_group: g['role:everyone'],
        can_manage_group: { direct_members: [t.cast.member.id], direct_subgroups: [] },
        can_mention_group: g['role:everyone'],
        can_remove_members_group: g['role:nobody'],
      });
      expect(byName.get('role:administrators')).toMatchObject({
        members: [t.cast.admin.id],
        direct_subgroup_ids: [g['role:owners']],
        is_system_group: true,
      });
      expect(byName.get('role:members').members).not.toContain(t.cast.deactivated.id);
    });

    it('includes deactivated groups on request', async () => {
      const res = await t.api.get('/user_groups', t.cast.member, { include_deactivated_groups: true });
      expect(res.body.user_groups.find((x: any) => x.name === 'old')).toMatchObject({ id: g.old, deactivated: true });
    });

    it('refuses a non-boolean include_deactivated_groups', async () => {
      const res = await t.api.get('/user_groups', t.cast.member, { include_deactivated_groups: 'yes' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: 'error', msg: 'include_deactivated_groups is not a boolean', code: 'BAD_REQUEST' });
    });
  });
});
