/**
 * Authentication reads the viewer's groups and subscriptions in its own
 * statement, which is how the caller cache (src/cache/caller.ts) loads a caller. What
 * it reads must be exactly what the separate query reads, for every role.
 */
import { inTransaction } from '../src/db/transaction';
import { findUserByApiKey } from '../src/queries/auth';
import { addGroupMembers, addSubgroup, getViewerMemberships, insertGroup } from '../src/queries/groups';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';
import { systemGroupId } from './users-fixtures';

eachDatabase('viewer read with authentication', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, member, guest } = t.cast;
    const everyone = await systemGroupId(t, 'role:everyone');
    await inTransaction(t.ctx.db, async ({ trx }) => {
      const base = {
        realm_id: t.realmId,
        is_system_group: false,
        creator_id: owner.id,
        date_created: 1700000000,
        can_add_members_group: everyone,
        can_join_group: everyone,
        can_leave_group: everyone,
        can_manage_group: everyone,
        can_mention_group: everyone,
        can_remove_members_group: everyone,
      };
      const outer = await insertGroup(trx, { ...base, name: 'outer', description: '' });
      const inner = await insertGroup(trx, { ...base, name: 'inner', description: '' });
      await addSubgroup(trx, outer, inner);
      await addGroupMembers(trx, inner, [member.id]);
    });
    await createChannel(t, 'prefetch-a', [owner, member, guest]);
    await createChannel(t, 'prefetch-b', [member], { inviteOnly: true });
  });
  afterAll(() => t.close());

  it.each(['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const)(
    'the same memberships as the separate query (%s)',
    async (who) => {
      const user = t.cast[who];
      const found = await findUserByApiKey(t.ctx.db, user.api_key, '', true);
      const separate = await getViewerMemberships(t.ctx.db, user.id, user.realm_id);
      expect(found?.memberships).not.toBeNull();
      expect([...found!.memberships!.groups].sort()).toEqual([...separate.groups].sort());
      expect([...found!.memberships!.subscribedRecipients].sort()).toEqual([...separate.subscribedRecipients].sort());
      if (who === 'member') {
        // Nested group membership and both channels really are in there.
        expect(separate.groups.size).toBeGreaterThanOrEqual(4);
        expect(separate.subscribedRecipients.size).toBeGreaterThanOrEqual(2);
      }
    },
  );

  it('reads long lists whole (MySQL cuts group_concat at 1,024 bytes by default)', async () => {
    const user = t.cast.moderator;
    for (let i = 0; i < 260; i++) await createChannel(t, `many-${i}`, [user]);
    const found = await findUserByApiKey(t.ctx.db, user.api_key, '', true);
    const separate = await getViewerMemberships(t.ctx.db, user.id, user.realm_id);
    expect(separate.subscribedRecipients.size).toBeGreaterThanOrEqual(260);
    expect([...found!.memberships!.subscribedRecipients].sort()).toEqual([...separate.subscribedRecipients].sort());
    if (dialect === 'mysql') {
      // MariaDB's own default (1 MiB) would pass the list above; MySQL's (1,024 bytes) would not.
      const [rows] = await t.ctx.db.raw('SELECT @@SESSION.group_concat_max_len AS n');
      expect(Number(rows[0].n)).toBeGreaterThanOrEqual(2 ** 26); // the server clamps the setting (MariaDB: 1 GiB)
    }
  });

  it('reads no memberships unless asked', async () => {
    const found = await findUserByApiKey(t.ctx.db, t.cast.member.api_key, '');
    expect(found?.memberships).toBeNull();
    expect(found?.user.id).toBe(t.cast.member.id);
  });
});
