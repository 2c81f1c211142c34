import { notificationBot } from '../src/actions/notifications';
import { inTransaction } from '../src/db/transaction';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { register, pending } from './support/events';
import { startTestServer, type ApiResponse, type TestServer } from './support/server';
import { captureEvents, systemGroupId } from './users-fixtures';

/**
 * POST /user_groups/create, PATCH /user_groups/{id}, POST .../deactivate,
 * GET/POST .../members and .../subgroups: Zulip's permission rules, its
 * refusals, the events everyone hears, the audit rows, and membership
 * changes seen by the very next permission check.
 */
eachDatabase('user groups over the API', (dialect) => {
  let t: TestServer;
  const sys: Record<string, number> = {};
  let everyone: number[];
  beforeAll(async () => {
    t = await startTestServer(dialect);
    for (const name of [
      'role:nobody',
      'role:owners',
      'role:administrators',
      'role:moderators',
      'role:members',
      'role:everyone',
      'role:internet',
    ]) {
      sys[name] = await systemGroupId(t, name);
    }
    // The Notification Bot (made on first use) tells members of their changes: made now, it is one of everyone.
    await inTransaction(t.ctx.db, (tx) => notificationBot(tx, t.realmId));
    everyone = (await t.ctx.db('users').where({ realm_id: t.realmId, is_active: true }).orderBy('id').pluck('id')).map(Number);
  });
  afterAll(() => t.close());

  /** Everything these operations may write, to assert that a refusal changed nothing. */
  const state = async () =>
    JSON.stringify(
      await Promise.all([
        t.ctx.db('user_groups').orderBy('id').select(),
        t.ctx.db('group_members').orderBy(['group_id', 'user_id']).select(),
        t.ctx.db('group_subgroups').orderBy(['supergroup_id', 'subgroup_id']).select(),
        t.ctx.db('audit_log').count({ n: '*' }),
      ]),
    );
  /** A refused request: exactly this error, nothing written, nothing published. */
  async function refused(request: () => Promise<ApiResponse>, msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) {
    const before = await state();
    const { result: res, deliveries } = await captureEvents(t, request);
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { result: 'error', msg, code, ...extra } });
    expect(await state()).toBe(before);
    expect(deliveries).toEqual([]);
  }
  const auditSince = async (mark: number): Promise<Array<Record<string, any>>> =>
    (
      await t.ctx
        .db('audit_log')
        .where('id', '>', mark)
        .orderBy('id')
        .select('event_type', 'acting_user_id', 'modified_user_id', 'modified_group_id', 'extra_data')
    ).map((r: Record<string, any>) => ({ ...r, extra_data: r.extra_data ? JSON.parse(r.extra_data) : null }));
  const auditMark = async () => Number((await t.ctx.db('audit_log').max({ id: 'id' }).first())?.id ?? 0);
  const groups = async (who = t.cast.member) =>
    (await t.api.get('/user_groups', who, { include_deactivated_groups: true })).body.user_groups as Array<Record<string, any>>;
  const groupNamed = async (name: string) => (await groups()).find((g) => g.name === name)!;
  let serial = 0;
  /** A new group made by `by` through the API; its id. */
  async function create(by: UserRow, fields: Record<string, unknown> = {}): Promise<number> {
    const res = await t.api.post('/user_groups/create', by, {
      name: `group-${++serial}`,
      description: 'Made in a test',
      members: [],
      ...fields,
    });
    expect(res.status).toBe(200);
    return res.body.group_id as number;
  }

  describe('POST /user_groups/create', () => {
    it.each([
      ['owner', true],
      ['admin', true],
      ['moderator', true],
      ['member', true],
      ['bot', true],
      ['guest', false],
    ] as const)('by the %s: %s (can_create_groups is role:members)', async (role, allowed) => {
      const who = t.cast[role];
      const name = `made-by-${role}`;
      const call = () => t.api.post('/user_groups/create', who, { name, description: 'd', members: [who.id] });
      if (!allowed) return refused(call, 'Insufficient permission');
      const res = await call();
      expect(res.status).toBe(200);
      expect(typeof res.body.group_id).toBe('number');
    });

    it("stores Zulip's defaults, tells every active user in one add event, and writes the audit rows", async () => {
      const mark = await auditMark();
      const { owner, member, moderator } = t.cast;
      const inner = await create(owner);
      const { result: res, deliveries } = await captureEvents(t, () =>
        t.api.post('/user_groups/create', member, {
          name: 'design',
          description: 'People who draw',
          members: [member.id, moderator.id],
          subgroups: [inner],
        }),
      );
      expect(res.status).toBe(200);
      const id = res.body.group_id as number;
      const group = await groupNamed('design');
      const creatorOnly = { direct_members: [member.id], direct_subgroups: [] };
      expect(group).toEqual({
        id,
        name: 'design',
        description: 'People who draw',
        members: [moderator.id, member.id].sort((a, b) => a - b),
        direct_subgroup_ids: [inner],
        is_system_group: false,
        date_created: expect.any(Number),
        creator_id: member.id,
        deactivated: false,
        can_add_members_group: creatorOnly,
        can_join_group: sys['role:nobody'],
        can_leave_group: sys['role:everyone'],
        can_manage_group: creatorOnly,
        can_mention_group: sys['role:everyone'],
        can_remove_members_group: sys['role:nobody'],
      });
      const events = deliveries.filter((d) => (d.event as any).type === 'user_group');
      expect(events).toHaveLength(1);
      expect(events[0]!.event).toEqual({ type: 'user_group', op: 'add', group });
      expect([...events[0]!.userIds].sort((a, b) => a - b)).toEqual(everyone);

      const rows = (await auditSince(mark)).filter((r) => r.modified_group_id === id || r.extra_data?.supergroup_ids);
      expect(rows.map((r) => r.event_type)).toEqual([701, 703, 703, 705, 707, 722, 722, 722, 722, 722, 722]);
      expect(rows[3]!.extra_data).toEqual({ subgroup_ids: [inner] });
      expect(rows[4]).toMatchObject({ modified_group_id: inner, extra_data: { supergroup_ids: [id] } });
      expect(rows[6]!.extra_data).toEqual({ old_value: null, new_value: sys['role:nobody'], property: 'can_join_group' });
      expect(rows.every((r) => r.acting_user_id === member.id)).toBe(true);
    });

    it('takes group-setting values, an anonymous group among them', async () => {
      const { owner, admin } = t.cast;
      const id = await create(owner, {
        can_join_group: sys['role:members'],
        can_mention_group: { direct_members: [admin.id], direct_subgroups: [sys['role:moderators']] },
        can_manage_group: { direct_members: [], direct_subgroups: [sys['role:administrators']] },
      });
      const g = (await groups()).find((x) => x.id === id)!;
      expect(g.can_join_group).toBe(sys['role:members']);
      expect(g.can_mention_group).toEqual({ direct_members: [admin.id], direct_subgroups: [sys['role:moderators']] });
      expect(g.can_manage_group).toBe(sys['role:administrators']);
    });

    it("refuses bad input with Zulip's errors and writes nothing", async () => {
      const { member, deactivated } = t.cast;
      const base = { description: 'd', members: [] };
      const post = (fields: Record<string, unknown>) => () => t.api.post('/user_groups/create', member, { ...base, ...fields });
      await refused(post({ name: '   ' }), "User group name can't be empty!");
      await refused(post({ name: 'x'.repeat(101) }), 'User group name cannot exceed 100 characters.');
      await refused(post({ name: '@team' }), "User group name cannot start with '@'.");
      await refused(post({ name: 'role:team' }), "User group name cannot start with 'role:'.");
      await refused(post({ name: 'channel:team' }), "User group name cannot start with 'channel:'.");
      await refused(post({ name: 'design' }), "User group 'design' already exists.");
      await refused(post({ name: 'DESIGN' }), "User group 'DESIGN' already exists.");
      await refused(post({ name: 'fine', members: [999999] }), 'Invalid user ID: 999999');
      await refused(post({ name: 'fine', members: [deactivated.id] }), `Invalid user ID: ${deactivated.id}`);
      await refused(post({ name: 'fine', subgroups: [999999] }), 'Invalid user group ID: 999999');
      await refused(
        post({ name: 'fine', can_join_group: sys['role:everyone'] }),
        "'can_join_group' setting cannot be set to 'role:everyone' group.",
      );
      await refused(
        post({ name: 'fine', can_mention_group: sys['role:internet'] }),
        "'can_mention_group' setting cannot be set to 'role:internet' group.",
      );
      await refused(
        () => t.api.post('/user_groups/create', member, { description: 'd', members: [] }),
        "Missing 'name' argument",
        'REQUEST_VARIABLE_MISSING',
        {
          var_name: 'name',
        },
      );
    });

    it('follows can_create_groups: nobody but the owners once the setting says so', async () => {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_create_groups: sys['role:owners'] });
      try {
        await refused(
          () => t.api.post('/user_groups/create', t.cast.admin, { name: 'admins-only', description: '', members: [] }),
          'Insufficient permission',
        );
        await create(t.cast.owner);
      } finally {
        await t.ctx.db('realms').where({ id: t.realmId }).update({ can_create_groups: sys['role:members'] });
      }
    });
  });

  describe('GET /user_groups/{id}/members and /subgroups', () => {
    it('lists active members and subgroups, direct or recursive', async () => {
      const { owner, member, moderator, guest } = t.cast;
      const leaf = await create(owner, { members: [guest.id] });
      const mid = await create(owner, { members: [moderator.id], subgroups: [leaf] });
      const top = await create(owner, { members: [member.id], subgroups: [mid] });
      const members = (id: number, q: Record<string, unknown> = {}) => t.api.get(`/user_groups/${id}/members`, guest, q);
      const subgroups = (id: number, q: Record<string, unknown> = {}) => t.api.get(`/user_groups/${id}/subgroups`, guest, q);
      expect((await members(top)).body.members).toEqual([member.id, moderator.id, guest.id].sort((a, b) => a - b));
      expect((await members(top, { direct_member_only: true })).body.members).toEqual([member.id]);
      expect((await subgroups(top)).body.subgroups).toEqual([mid, leaf].sort((a, b) => a - b));
      expect((await subgroups(top, { direct_subgroup_only: true })).body.subgroups).toEqual([mid]);
      expect((await members(sys['role:administrators']!)).body.members).toEqual(expect.arrayContaining([t.cast.admin.id, owner.id]));
    });

    it('answers Invalid user group for unknown and anonymous groups', async () => {
      const anonymous = Number((await t.ctx.db('user_groups').where({ realm_id: t.realmId }).whereNull('name').first('id'))!.id);
      for (const id of [999999, anonymous]) {
        for (const path of ['members', 'subgroups']) {
          const res = await t.api.get(`/user_groups/${id}/${path}`, t.cast.member);
          expect(res.body).toEqual({ result: 'error', msg: 'Invalid user group', code: 'BAD_REQUEST' });
        }
      }
    });
  });

  describe('POST /user_groups/{id}/members', () => {
    it.each([
      ['owner', true, 'can_manage_all_groups is role:owners'],
      ['admin', false, 'not the manager'],
      ['moderator', true, 'the creator manages it'],
      ['member', false, 'not the manager'],
      ['guest', false, 'not the manager'],
    ] as const)('adding another user, by the %s: %s (%s)', async (role, allowed, _why) => {
      const id = await create(t.cast.moderator);
      const call = () => t.api.post(`/user_groups/${id}/members`, t.cast[role], { add: [t.cast.bot.id] });
      if (!allowed) return refused(call, 'Insufficient permission');
      const { result: res, deliveries } = await captureEvents(t, call);
      expect(res.status).toBe(200);
      expect(deliveries.map((d) => d.event)).toEqual([{ type: 'user_group', op: 'add_members', group_id: id, user_ids: [t.cast.bot.id] }]);
      expect([...deliveries[0]!.userIds].sort((a, b) => a - b)).toEqual(everyone);
    });

    it('lets a user join through can_join_group and leave through can_leave_group, with audit rows', async () => {
      const { owner, member, admin } = t.cast;
      const id = await create(owner, { can_join_group: sys['role:members'] });
      const mark = await auditMark();
      expect((await t.api.post(`/user_groups/${id}/members`, member, { add: [member.id] })).status).toBe(200);
      // can_join_group is for oneself only.
      await refused(() => t.api.post(`/user_groups/${id}/members`, member, { add: [admin.id] }), 'Insufficient permission');
      expect((await t.api.post(`/user_groups/${id}/members`, member, { delete: [member.id] })).status).toBe(200);
      expect(await auditSince(mark)).toEqual([
        { event_type: 703, acting_user_id: member.id, modified_user_id: member.id, modified_group_id: id, extra_data: null },
        { event_type: 704, acting_user_id: member.id, modified_user_id: member.id, modified_group_id: id, extra_data: null },
      ]);
    });

    it('has the Notification Bot tell users someone else added or removed, never the actor or a bot', async () => {
      const { owner, member, guest, bot, moderator } = t.cast;
      const notifier = (await t.ctx.db('users').where({ realm_id: t.realmId, full_name: 'Notification Bot' }).first())!.id as number;
      const id = await create(owner, { can_join_group: sys['role:members'] });
      const name = (await groups()).find((g) => g.id === id)!.name as string;
      const watch = { event_types: ['message'], apply_markdown: false };
      const [mq, gq, oq, bq, modq] = await Promise.all([member, guest, owner, bot, moderator].map((u) => register(t, u, watch)));
      /** Each message event of a queue as [sender, recipients, content]. */
      const dms = async (c: Awaited<ReturnType<typeof register>>) =>
        (await pending(t, c)).map((e) => [
          e.message.sender_id,
          (e.message.display_recipient as Array<{ id: number }>).map((r) => r.id).sort((a, b) => a - b),
          e.message.content,
        ]);
      const actor = `@_**${owner.full_name}|${owner.id}**`;
      const res = await t.api.post(`/user_groups/${id}/members`, owner, { add: [member.id, guest.id, bot.id, owner.id] });
      expect(res.status).toBe(200);
      const added = `${actor} added you to the group @_*${name}*.`;
      const pair = (u: UserRow) => [u.id, notifier].sort((a, b) => a - b);
      expect(await dms(mq)).toEqual([[notifier, pair(member), added]]);
      expect(await dms(gq)).toEqual([[notifier, pair(guest), added]]);
      expect(await dms(oq)).toEqual([]);
      expect(await dms(bq)).toEqual([]);
      // Additions and removals in one request: each told once, after the group's events.
      const both = await captureEvents(t, () =>
        t.api.post(`/user_groups/${id}/members`, owner, { add: [moderator.id], delete: [member.id] }),
      );
      expect(both.deliveries.map((d) => [d.event.type, d.event.op ?? null])).toEqual([
        ['user_group', 'add_members'],
        ['user_group', 'remove_members'],
        ['message', null],
        ['message', null],
      ]);
      expect(await dms(modq)).toEqual([[notifier, pair(moderator), added]]);
      expect(await dms(mq)).toEqual([[notifier, pair(member), `${actor} removed you from the group @_*${name}*.`]]);
      // Joining or leaving oneself tells nobody.
      expect((await t.api.post(`/user_groups/${id}/members`, member, { add: [member.id] })).status).toBe(200);
      expect((await t.api.post(`/user_groups/${id}/members`, member, { delete: [member.id] })).status).toBe(200);
      expect(await dms(mq)).toEqual([]);
      // A refusal sends nothing (refused() checks that nothing was published).
      await refused(
        () => t.api.post(`/user_groups/${id}/members`, owner, { add: [guest.id] }),
        `User ${guest.id} is already a member of this group`,
      );
    });

    it('refuses joining where can_join_group is nobody, and leaving where can_leave_group is nobody', async () => {
      const { owner, member } = t.cast;
      const closed = await create(owner);
      await refused(() => t.api.post(`/user_groups/${closed}/members`, member, { add: [member.id] }), 'Insufficient permission');
      const sticky = await create(owner, { members: [member.id], can_leave_group: sys['role:nobody'] });
      await refused(() => t.api.post(`/user_groups/${sticky}/members`, member, { delete: [member.id] }), 'Insufficient permission');
    });

    it("refuses Zulip's bad requests, all or nothing", async () => {
      const { owner, member, guest, deactivated } = t.cast;
      const id = await create(owner, { members: [member.id] });
      const post = (fields: Record<string, unknown>) => () => t.api.post(`/user_groups/${id}/members`, owner, fields);
      await refused(post({}), 'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".');
      await refused(
        post({ add: [], delete: [] }),
        'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
      );
      await refused(post({ add: [member.id] }), `User ${member.id} is already a member of this group`);
      await refused(post({ delete: [guest.id] }), `There is no member '${guest.id}' in this user group`);
      await refused(post({ add: [deactivated.id] }), `Invalid user ID: ${deactivated.id}`);
      await refused(post({ add: [999999] }), 'Invalid user ID: 999999');
      // The addition would succeed alone; the failing removal undoes it.
      await refused(post({ add: [guest.id], delete: [owner.id] }), `There is no member '${owner.id}' in this user group`);
      await refused(() => t.api.post('/user_groups/999999/members', owner, { add: [guest.id] }), 'Invalid user group');
    });

    it('refuses changing system groups, even to the owner', async () => {
      await refused(
        () => t.api.post(`/user_groups/${sys['role:moderators']}/members`, t.cast.owner, { add: [t.cast.member.id] }),
        'Insufficient permission',
      );
    });

    it('changes what the very next permission check sees', async () => {
      const { owner, member, guest } = t.cast;
      // `managers` manages `target`; member is not among them yet.
      const managers = await create(owner);
      const target = await create(owner, { can_manage_group: managers });
      await refused(() => t.api.patch(`/user_groups/${target}`, member, { description: 'mine now' }), 'Insufficient permission');
      expect((await t.api.post(`/user_groups/${managers}/members`, owner, { add: [member.id] })).status).toBe(200);
      expect((await t.api.patch(`/user_groups/${target}`, member, { description: 'mine now' })).status).toBe(200);
      expect((await t.api.post(`/user_groups/${managers}/members`, owner, { delete: [member.id] })).status).toBe(200);
      await refused(() => t.api.patch(`/user_groups/${target}`, member, { description: 'again' }), 'Insufficient permission');
      // Through a subgroup: member belongs to `inner`, which becomes a subgroup of `managers`.
      const inner = await create(owner, { members: [member.id] });
      expect((await t.api.post(`/user_groups/${managers}/subgroups`, owner, { add: [inner] })).status).toBe(200);
      expect((await t.api.patch(`/user_groups/${target}`, member, { description: 'through a subgroup' })).status).toBe(200);
      expect((await t.api.post(`/user_groups/${managers}/members`, owner, { delete_subgroups: [inner] })).status).toBe(200);
      await refused(() => t.api.patch(`/user_groups/${target}`, member, { description: 'no more' }), 'Insufficient permission');
      // A guest never holds a setting that cannot hold role:everyone.
      expect((await t.api.post(`/user_groups/${managers}/members`, owner, { add: [guest.id] })).status).toBe(200);
      await refused(() => t.api.patch(`/user_groups/${target}`, guest, { description: 'guest' }), 'Insufficient permission');
    });
  });

  describe('subgroups', () => {
    it('adds and removes subgroups through both operations, with events and audit rows', async () => {
      const { owner } = t.cast;
      const a = await create(owner);
      const b = await create(owner);
      const mark = await auditMark();
      const added = await captureEvents(t, () => t.api.post(`/user_groups/${a}/subgroups`, owner, { add: [b] }));
      expect(added.result.status).toBe(200);
      expect(added.deliveries.map((d) => d.event)).toEqual([
        { type: 'user_group', op: 'add_subgroups', group_id: a, direct_subgroup_ids: [b] },
      ]);
      const removed = await captureEvents(t, () => t.api.post(`/user_groups/${a}/members`, owner, { delete_subgroups: [b] }));
      expect(removed.result.status).toBe(200);
      expect(removed.deliveries.map((d) => d.event)).toEqual([
        { type: 'user_group', op: 'remove_subgroups', group_id: a, direct_subgroup_ids: [b] },
      ]);
      expect((await auditSince(mark)).map((r) => [r.event_type, r.modified_group_id, r.extra_data])).toEqual([
        [705, a, { subgroup_ids: [b] }],
        [707, b, { supergroup_ids: [a] }],
        [706, a, { subgroup_ids: [b] }],
        [708, b, { supergroup_ids: [a] }],
      ]);
    });

    it('refuses cycles, repeats, unknown and deactivated groups', async () => {
      const { owner } = t.cast;
      const top = await create(owner);
      const mid = await create(owner);
      const leaf = await create(owner);
      expect((await t.api.post(`/user_groups/${top}/subgroups`, owner, { add: [mid] })).status).toBe(200);
      expect((await t.api.post(`/user_groups/${mid}/subgroups`, owner, { add: [leaf] })).status).toBe(200);
      const add = (to: number, ids: number[]) => () => t.api.post(`/user_groups/${to}/subgroups`, owner, { add: ids });
      await refused(add(leaf, [top]), `User group ${leaf} is already a subgroup of one of the passed subgroups.`);
      await refused(add(mid, [mid]), `User group ${mid} is already a subgroup of one of the passed subgroups.`);
      await refused(add(top, [mid]), `User group ${mid} is already a subgroup of this group.`);
      await refused(add(top, [999999]), 'Invalid user group ID: 999999');
      await refused(
        () => t.api.post(`/user_groups/${top}/subgroups`, owner, { delete: [leaf] }),
        `User group ${leaf} is not a subgroup of this group.`,
      );
      await refused(
        () => t.api.post(`/user_groups/${top}/subgroups`, owner, {}),
        'Nothing to do. Specify at least one of "add" or "delete".',
      );
      const gone = await create(owner);
      expect((await t.api.post(`/user_groups/${gone}/deactivate`, owner)).status).toBe(200);
      await refused(add(top, [gone]), 'User group is deactivated.');
    });

    it('needs can_add_members_group to add and can_manage_group to remove', async () => {
      const { owner, member } = t.cast;
      const sub = await create(owner);
      const g = await create(owner, { can_add_members_group: sys['role:members'], can_remove_members_group: sys['role:members'] });
      expect((await t.api.post(`/user_groups/${g}/subgroups`, member, { add: [sub] })).status).toBe(200);
      await refused(() => t.api.post(`/user_groups/${g}/subgroups`, member, { delete: [sub] }), 'Insufficient permission');
    });
  });

  describe('PATCH /user_groups/{id}', () => {
    it('renames and describes, one update event and audit row each', async () => {
      const { owner } = t.cast;
      const id = await create(owner);
      const mark = await auditMark();
      const { result: res, deliveries } = await captureEvents(t, () =>
        t.api.patch(`/user_groups/${id}`, owner, { name: 'renamed', description: 'New words' }),
      );
      expect(res.status).toBe(200);
      expect(deliveries.map((d) => d.event)).toEqual([
        { type: 'user_group', op: 'update', group_id: id, data: { name: 'renamed' } },
        { type: 'user_group', op: 'update', group_id: id, data: { description: 'New words' } },
      ]);
      expect((await auditSince(mark)).map((r) => [r.event_type, r.extra_data])).toEqual([
        [720, { old_value: `group-${serial}`, new_value: 'renamed' }],
        [721, { old_value: 'Made in a test', new_value: 'New words' }],
      ]);
      // The same values again change nothing and say nothing.
      const again = await captureEvents(t, () => t.api.patch(`/user_groups/${id}`, owner, { name: 'renamed', description: 'New words' }));
      expect(again.result.status).toBe(200);
      expect(again.deliveries).toEqual([]);
    });

    it('changes a setting given {new, old}, and refuses a stale old with EXPECTATION_MISMATCH', async () => {
      const { owner, member } = t.cast;
      const id = await create(owner);
      await refused(
        () => t.api.patch(`/user_groups/${id}`, owner, { can_join_group: { new: sys['role:members'], old: sys['role:everyone'] } }),
        "'old' value does not match the expected value.",
        'EXPECTATION_MISMATCH',
      );
      const mark = await auditMark();
      const { result: res, deliveries } = await captureEvents(t, () =>
        t.api.patch(`/user_groups/${id}`, owner, {
          can_join_group: { new: sys['role:members'], old: { direct_members: [], direct_subgroups: [sys['role:nobody']] } },
          can_mention_group: { new: { direct_members: [member.id], direct_subgroups: [] } },
        }),
      );
      expect(res.status).toBe(200);
      expect(deliveries.map((d) => d.event)).toEqual([
        { type: 'user_group', op: 'update', group_id: id, data: { can_join_group: sys['role:members'] } },
        {
          type: 'user_group',
          op: 'update',
          group_id: id,
          data: { can_mention_group: { direct_members: [member.id], direct_subgroups: [] } },
        },
      ]);
      expect((await auditSince(mark)).map((r) => r.extra_data)).toEqual([
        { old_value: sys['role:nobody'], new_value: sys['role:members'], property: 'can_join_group' },
        {
          old_value: sys['role:everyone'],
          new_value: { direct_members: [member.id], direct_subgroups: [] },
          property: 'can_mention_group',
        },
      ]);
      await refused(
        () => t.api.patch(`/user_groups/${id}`, owner, { can_join_group: { new: sys['role:everyone'] } }),
        "'can_join_group' setting cannot be set to 'role:everyone' group.",
      );
    });

    it.each([
      ['owner', true],
      ['admin', false],
      ['moderator', false],
      ['member', true],
      ['guest', false],
    ] as const)('by the %s: %s (the member created the group; owners manage all groups)', async (role, allowed) => {
      const id = await create(t.cast.member);
      const call = () => t.api.patch(`/user_groups/${id}`, t.cast[role], { description: `by ${role}` });
      if (!allowed) return refused(call, 'Insufficient permission');
      expect((await call()).status).toBe(200);
    });

    it("refuses Zulip's bad requests", async () => {
      const { owner } = t.cast;
      const id = await create(owner);
      await refused(() => t.api.patch(`/user_groups/${id}`, owner, {}), 'No new data supplied');
      await refused(() => t.api.patch(`/user_groups/${id}`, owner, { name: 'design' }), "User group 'design' already exists.");
      await refused(() => t.api.patch(`/user_groups/${id}`, owner, { name: '' }), "User group name can't be empty!");
      await refused(() => t.api.patch('/user_groups/999999', owner, { name: 'x' }), 'Invalid user group');
      await refused(() => t.api.patch(`/user_groups/${sys['role:members']}`, owner, { description: 'x' }), 'Insufficient permission');
    });
  });

  describe('events and register', () => {
    it("delivers each change to a guest's queue in the contract's shapes, and a new register shows the result", async () => {
      const { owner, guest, member } = t.cast;
      const client = await register(t, guest, { event_types: ['user_group'] });
      const sub = await create(owner);
      const id = await create(owner, { members: [member.id] });
      expect(
        (await t.api.post(`/user_groups/${id}/members`, owner, { add: [guest.id], delete: [member.id], add_subgroups: [sub] })).status,
      ).toBe(200);
      expect(
        (await t.api.patch(`/user_groups/${id}`, owner, { description: 'seen by all', can_join_group: { new: sys['role:members'] } }))
          .status,
      ).toBe(200);
      expect((await t.api.post(`/user_groups/${id}/subgroups`, owner, { delete: [sub] })).status).toBe(200);
      const events = await pending(t, client);
      expect(events.map((e) => e.op)).toEqual([
        'add',
        'add',
        'add_members',
        'remove_members',
        'add_subgroups',
        'update',
        'update',
        'remove_subgroups',
      ]);
      const state = (await register(t, guest, { fetch_event_types: ['realm_user_groups'] })).state.realm_user_groups as Array<
        Record<string, any>
      >;
      expect(state.find((g) => g.id === id)).toMatchObject({
        members: [guest.id],
        direct_subgroup_ids: [],
        description: 'seen by all',
        can_join_group: sys['role:members'],
      });
    });
  });

  describe('deactivation', () => {
    it('deactivates an unused group, tells everyone, and reactivates it through PATCH', async () => {
      const { owner, guest } = t.cast;
      const id = await create(owner);
      const client = await register(t, guest, { client_capabilities: { include_deactivated_groups: true } });
      const older = await register(t, guest);
      const mark = await auditMark();
      const { result: res, deliveries } = await captureEvents(t, () => t.api.post(`/user_groups/${id}/deactivate`, owner));
      expect(res.status).toBe(200);
      expect(deliveries.map((d) => d.event)).toEqual([{ type: 'user_group', op: 'update', group_id: id, data: { deactivated: true } }]);
      expect([...deliveries[0]!.userIds].sort((a, b) => a - b)).toEqual(everyone);
      expect((await pending(t, client)).map((e) => [e.op, e.data])).toEqual([['update', { deactivated: true }]]);
      // A client that knows only active groups sees the group removed (Zulip's feature level 294).
      expect((await pending(t, older)).map(({ id: _id, ...e }) => e)).toEqual([{ type: 'user_group', op: 'remove', group_id: id }]);
      expect((await t.api.get('/user_groups', owner)).body.user_groups.some((g: { id: number }) => g.id === id)).toBe(false);
      await refused(() => t.api.post(`/user_groups/${id}/deactivate`, owner), 'User group is deactivated.');
      // Deactivated groups may still be renamed and their members changed.
      expect((await t.api.patch(`/user_groups/${id}`, owner, { name: `retired-${id}` })).status).toBe(200);
      expect((await t.api.post(`/user_groups/${id}/members`, owner, { add: [guest.id] })).status).toBe(200);
      const back = await captureEvents(t, () => t.api.patch(`/user_groups/${id}`, owner, { deactivated: false }));
      expect(back.deliveries.map((d) => d.event.op)).toEqual(['update', 'add']);
      expect((await auditSince(mark)).map((r) => r.event_type)).toEqual([723, 720, 703, 724]);
      expect((await groups()).find((g) => g.id === id)!.deactivated).toBe(false);
    });

    it('reactivates as an update for clients that keep deactivated groups and as an add for the others', async () => {
      const { owner, member } = t.cast;
      const id = await create(owner, { members: [member.id] });
      expect((await t.api.post(`/user_groups/${id}/deactivate`, owner)).status).toBe(200);
      const keeps = await register(t, member, { client_capabilities: { include_deactivated_groups: true } });
      const older = await register(t, member);
      const { result: res, deliveries } = await captureEvents(t, () =>
        t.api.patch(`/user_groups/${id}`, owner, { name: `back-${id}`, deactivated: false }),
      );
      expect(res.status).toBe(200);
      for (const d of deliveries) expect([...d.userIds].sort((a, b) => a - b)).toEqual(everyone);
      const group = (await groups()).find((g) => g.id === id)!;
      expect(group).toMatchObject({ name: `back-${id}`, deactivated: false, members: [member.id] });
      // The rename came while the group was still deactivated: only the client that keeps such groups hears of it.
      expect((await pending(t, keeps)).map(({ id: _id, ...e }) => e)).toEqual([
        { type: 'user_group', op: 'update', group_id: id, data: { name: `back-${id}` } },
        { type: 'user_group', op: 'update', group_id: id, data: { deactivated: false } },
      ]);
      // Zulip's do_reactivate_user_group: the client that was told the group was removed gets it
      // back whole, without the for_reactivation marker, which stays on the server.
      expect((await pending(t, older)).map(({ id: _id, ...e }) => e)).toEqual([{ type: 'user_group', op: 'add', group }]);
    });

    it('renames a deactivated group only for clients that keep deactivated groups', async () => {
      const { owner, member } = t.cast;
      const id = await create(owner);
      expect((await t.api.post(`/user_groups/${id}/deactivate`, owner)).status).toBe(200);
      const keeps = await register(t, member, { client_capabilities: { include_deactivated_groups: true } });
      const older = await register(t, member);
      const { result: res, deliveries } = await captureEvents(t, () => t.api.patch(`/user_groups/${id}`, owner, { name: `renamed-${id}` }));
      expect(res.status).toBe(200);
      // Published once, to everyone, marked as a deactivated group's (Zulip's marker, never on the wire).
      expect([...deliveries[0]!.userIds].sort((a, b) => a - b)).toEqual(everyone);
      expect((await pending(t, keeps)).map(({ id: _id, ...e }) => e)).toEqual([
        { type: 'user_group', op: 'update', group_id: id, data: { name: `renamed-${id}` } },
      ]);
      expect(await pending(t, older)).toEqual([]);
      // Withheld when filed, so it took no id: the older client's next event follows on from what it saw.
      const before = older.lastEventId;
      expect((await t.api.patch(`/user_groups/${id}`, owner, { description: 'still described' })).status).toBe(200);
      // As Zulip, only the name is withheld: a deactivated group's other changes reach every client.
      const seen = await pending(t, older);
      expect(seen.map(({ id: _id, ...e }) => e)).toEqual([
        { type: 'user_group', op: 'update', group_id: id, data: { description: 'still described' } },
      ]);
      expect(seen[0]!.id).toBe(before + 1);
      expect((await pending(t, keeps)).map((e) => e.data)).toEqual([{ description: 'still described' }]);
      // An active group's rename reaches both.
      const active = await create(owner);
      await pending(t, keeps);
      await pending(t, older);
      expect((await t.api.patch(`/user_groups/${active}`, owner, { name: `active-${active}` })).status).toBe(200);
      for (const c of [keeps, older]) expect((await pending(t, c)).map((e) => e.data)).toEqual([{ name: `active-${active}` }]);
    });

    it('refuses while the group is in use, listing every objection', async () => {
      const { owner, member } = t.cast;
      const id = await create(owner);
      const holder = await create(owner, { subgroups: [id] });
      const user = await create(owner, { can_mention_group: id, can_join_group: { direct_members: [member.id], direct_subgroups: [id] } });
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_create_groups: id });
      try {
        await refused(
          () => t.api.post(`/user_groups/${id}/deactivate`, owner),
          'Cannot deactivate user group in use.',
          'CANNOT_DEACTIVATE_GROUP_IN_USE',
          {
            objections: [
              { type: 'subgroup', supergroup_ids: [holder] },
              { type: 'user_group', group_id: user, settings: ['can_join_group', 'can_mention_group'] },
              { type: 'realm', settings: ['can_create_groups'] },
            ],
          },
        );
      } finally {
        await t.ctx.db('realms').where({ id: t.realmId }).update({ can_create_groups: sys['role:members'] });
      }
    });

    it('is refused to those who do not manage the group, and for system groups', async () => {
      const id = await create(t.cast.owner);
      await refused(() => t.api.post(`/user_groups/${id}/deactivate`, t.cast.admin), 'Insufficient permission');
      await refused(() => t.api.post(`/user_groups/${sys['role:members']}/deactivate`, t.cast.owner), 'Insufficient permission');
    });
  });
});
