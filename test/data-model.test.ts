import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx } from '../src/actions/users';
import { rollbackAll } from '../src/db/migrate';
import { migrateLatest } from '../src/db/migrate';
import { inTransaction } from '../src/db/transaction';
import { emailKey } from '../src/domain/users';
import { generateApiKey } from '../src/domain/secrets';
import { addGroupMembers, addSubgroup, getSystemGroupIds, insertGroup, isUserInGroup } from '../src/queries/groups';
import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';

eachDatabase('data model', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  it('creates the eight system groups in Zulip order, nested owners ⊂ … ⊂ internet', async () => {
    const rows = await t.ctx.db('user_groups').where({ realm_id: t.realmId, is_system_group: true }).orderBy('id').pluck('name');
    expect(rows).toEqual([
      'role:nobody',
      'role:owners',
      'role:administrators',
      'role:moderators',
      'role:fullmembers',
      'role:members',
      'role:everyone',
      'role:internet',
    ]);
    const g = await getSystemGroupIds(t.ctx.db, t.realmId);
    const { owner, admin, moderator, member, guest } = t.cast;
    const expectations: Array<[string, number, boolean]> = [
      ['role:owners', owner.id, true],
      ['role:owners', admin.id, false],
      ['role:administrators', owner.id, true],
      ['role:administrators', moderator.id, false],
      ['role:moderators', admin.id, true],
      ['role:moderators', member.id, false],
      ['role:members', owner.id, true],
      ['role:members', member.id, true],
      ['role:members', guest.id, false],
      ['role:everyone', guest.id, true],
      ['role:internet', guest.id, true],
      ['role:nobody', owner.id, false],
    ];
    for (const [group, user, expected] of expectations) {
      expect([group, user, await isUserInGroup(t.ctx.db, g.get(group)!, user)]).toEqual([group, user, expected]);
    }
  });

  it('evaluates membership recursively, with direct-only on request, never counting deactivated users', async () => {
    const db = t.ctx.db;
    const inner = await insertGroup(db, { realm_id: t.realmId, name: 'inner-team' });
    const outer = await insertGroup(db, { realm_id: t.realmId, name: 'outer-team' });
    await addSubgroup(db, outer, inner);
    await addGroupMembers(db, inner, [t.cast.member.id, t.cast.deactivated.id]);
    expect(await isUserInGroup(db, outer, t.cast.member.id)).toBe(true);
    expect(await isUserInGroup(db, outer, t.cast.member.id, true)).toBe(false);
    expect(await isUserInGroup(db, inner, t.cast.member.id, true)).toBe(true);
    expect(await isUserInGroup(db, outer, t.cast.deactivated.id)).toBe(false);
    expect(await isUserInGroup(db, inner, t.cast.deactivated.id, true)).toBe(false);
  });

  it('keeps emails unique per organization regardless of case, in the database itself', async () => {
    // The row the user-creation path would write for this address, past its "already in use" check
    // (which two concurrent sign-ups can both pass): the unique key on the folded address refuses it.
    const email = 'MEMBER@Example.COM';
    const { id: _id, ...member } = t.cast.member;
    const row = { ...member, email, delivery_email: email, email_key: emailKey(email), api_key: generateApiKey() };
    const error = await t.ctx
      .db('users')
      .insert(row)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(String(error)).toMatch(
      dialect === 'mysql'
        ? /Duplicate entry '\d+-member@example\.com' for key 'users_realm_id_email_key_unique'/
        : /UNIQUE constraint failed: users\.realm_id, users\.email_key/,
    );
    // Another organization may hold the same address.
    const elsewhere = await doCreateRealm(t.ctx.db, { stringId: 'elsewhere', name: 'Elsewhere' });
    const other = await inTransaction(t.ctx.db, (tx) => createUserInTx(tx, null, { realmId: elsewhere, email, fullName: 'Same Address' }));
    expect(other.email_key).toBe('member@example.com');
  });

  it('keeps channel names apart that differ only by accents or emoji, on both databases', async () => {
    const { createChannelInTx } = await import('../src/actions/channels');
    const { inTransaction } = await import('../src/db/transaction');
    for (const name of ['café', 'cafe', '🎉', '🚀', 'İ'.repeat(60)]) {
      await inTransaction(t.ctx.db, (tx) => createChannelInTx(tx, t.cast.owner, { name, subscriberIds: [] }));
    }
    const names = await t.ctx.db('channels').whereIn('name', ['café', 'cafe', '🎉', '🚀']).pluck('name');
    expect(names.sort()).toEqual(['cafe', 'café', '🎉', '🚀'].sort());
    // (Removed again: rolling back to the narrow columns below could not hold the long name.)
    const ids: number[] = await t.ctx
      .db('channels')
      .whereIn('name', ['café', 'cafe', '🎉', '🚀', 'İ'.repeat(60)])
      .pluck('id');
    await t.ctx.db('channels').whereIn('id', ids).delete();
  });

  it('keeps unread state out of user_messages: no index of it there, a side table keyed (user_id, message_id) and a horizon per user', async () => {
    const db = t.ctx.db;
    const indexColumns =
      dialect === 'mysql'
        ? (await db.raw('SHOW INDEX FROM user_messages'))[0].map((r: any) => r.Column_name)
        : (await db.raw("SELECT name FROM pragma_table_xinfo('user_messages')")).map((r: any) => r.name);
    expect(indexColumns).not.toContain('is_unread');
    const key =
      dialect === 'mysql'
        ? (await db.raw("SHOW INDEX FROM user_message_unread WHERE Key_name = 'PRIMARY'"))[0].map((r: any) => r.Column_name)
        : (await db.raw("SELECT name FROM pragma_table_info('user_message_unread') WHERE pk > 0 ORDER BY pk")).map((r: any) => r.name);
    expect(key).toEqual(['user_id', 'message_id']);
    expect(await db('unread_horizons').columnInfo()).toHaveProperty('message_id');
  });

  it('keys user_messages by (user_id, message_id) on MariaDB, keeping every row through migration 024 and back', async () => {
    const db = t.ctx.db;
    const sent = await t.api.post('/messages', t.cast.owner, { type: 'direct', to: [t.cast.member.id], content: 'keyed' });
    expect(sent.status).toBe(200);
    const rows = () => db('user_messages').where({ message_id: sent.body.id }).orderBy('user_id').select('user_id', 'message_id', 'flags');
    const before = await rows();
    expect(before).toHaveLength(2);
    if (dialect !== 'mysql') return;
    const primary = async () =>
      (await db.raw("SHOW INDEX FROM user_messages WHERE Key_name = 'PRIMARY'"))[0].map((r: any) => r.Column_name);
    expect(await primary()).toEqual(['user_id', 'message_id']);
    const m024 = await import('../src/db/migrations/024_user_messages_key');
    await m024.down(db);
    expect(await primary()).toEqual(['id']);
    expect(await rows()).toEqual(before);
    await m024.up(db);
    expect(await primary()).toEqual(['user_id', 'message_id']);
    expect(await rows()).toEqual(before);
  });

  it('checks no foreign key per user_messages row on MariaDB (ADR 0020), through migration 025 and back', async () => {
    const db = t.ctx.db;
    if (dialect !== 'mysql') return;
    const parents = async (table: string) =>
      (
        await db.raw(
          'SELECT REFERENCED_TABLE_NAME AS parent FROM information_schema.KEY_COLUMN_USAGE ' +
            'WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY 1',
          [table],
        )
      )[0].map((r: { parent: string }) => r.parent);
    expect(await parents('user_messages')).toEqual([]);
    // The side tables of the sparse flags still go with their user_messages row.
    expect(await parents('user_message_starred')).toContain('user_messages');
    const m025 = await import('../src/db/migrations/025_user_messages_without_foreign_keys');
    await m025.down(db);
    expect(await parents('user_messages')).toEqual(['messages', 'users']);
    await m025.up(db);
    expect(await parents('user_messages')).toEqual([]);
  });
  it('has a column for every permission setting the domain lists', async () => {
    const { REALM_GROUP_SETTINGS, CHANNEL_GROUP_SETTINGS, GROUP_GROUP_SETTINGS } = await import('../src/domain/group-settings');
    for (const [table, settings] of [
      ['realms', REALM_GROUP_SETTINGS],
      ['channels', CHANNEL_GROUP_SETTINGS],
      ['user_groups', GROUP_GROUP_SETTINGS],
    ] as const) {
      const columns = Object.keys(await t.ctx.db(table).columnInfo());
      expect([table, settings.filter((s) => !columns.includes(s))]).toEqual([table, []]);
    }
  });

  it('stores and reads back times after 2038 (64-bit timestamps)', async () => {
    const year2100 = 4_102_444_800;
    const sent = await t.api.post('/messages', t.cast.owner, { type: 'direct', to: [t.cast.member.id], content: 'from the future' });
    expect(sent.status).toBe(200);
    await t.ctx.db('messages').where({ id: sent.body.id }).update({ date_sent: year2100 });
    // Changed under the server, as no action does: the cached dict of the sent message goes too.
    t.ctx.bus.invalidate({ kind: 'messages', messageIds: [sent.body.id] });
    await t.ctx.db('users').where({ id: t.cast.member.id }).update({ last_active_time: year2100 });
    const fetched = await t.api.get('/messages', t.cast.member, { message_ids: [sent.body.id] });
    expect(fetched.body.messages[0].timestamp).toBe(year2100);
    const row = await t.ctx.db('users').where({ id: t.cast.member.id }).first('last_active_time');
    expect(Number(row!.last_active_time)).toBe(year2100);
    if (dialect === 'mysql') {
      const narrow = await t.ctx.db.raw(
        `SELECT table_name AS t, column_name AS c FROM information_schema.columns
          WHERE table_schema = DATABASE() AND data_type = 'int'
            AND (column_name LIKE 'date\\_%' OR column_name LIKE '%time%' OR column_name LIKE '%\\_at' OR column_name = 'timestamp')`,
      );
      expect(narrow[0]).toEqual([]);
    }
    // Back within 32 bits: rolling the migration back (next test) refuses wider values, rightly.
    await t.ctx.db('messages').where({ id: sent.body.id }).update({ date_sent: 2_000_000_000 });
    await t.ctx.db('users').where({ id: t.cast.member.id }).update({ last_active_time: null });
  });

  it('rolls back and re-applies every migration', async () => {
    await rollbackAll(t.ctx.db);
    const tables =
      dialect === 'mysql'
        ? (await t.ctx.db.raw("SHOW TABLES LIKE 'users'"))[0]
        : await t.ctx.db.raw("SELECT name FROM sqlite_master WHERE type='table' AND name='users'");
    expect(tables).toHaveLength(0);
    expect(await migrateLatest(t.ctx.db)).toEqual([
      '001_initial',
      '002_message_search',
      '003_exact_keys',
      '004_api_key_index',
      '005_sqlite_indexes',
      '006_audit_log',
      '007_wide_timestamps',
      '009_archive_details',
      '010_edit_history_marker',
      '011_push_token_length',
      '012_push_relay_device',
      '014_rate_limits',
      '015_presence_and_status',
      '016_user_topics',
      '017_submessages',
      '018_avatars',
      '019_custom_emoji',
      '020_alert_words',
      '021_search_terms',
      '022_sparse_flags',
      '023_cache_invalidations',
      '024_user_messages_key',
      '025_user_messages_without_foreign_keys',
      '026_unread_horizons',
      '027_client_devices',
      '028_first_login',
      '029_upload_quota',
      '030_retention',
      '031_realm_domains',
      '032_realm_icon_logo',
      '033_linkifiers_playgrounds',
      '034_linkifier_reverse',
      '035_profile_field_user_matching',
      '036_drafts',
      '037_scheduled_messages',
      '038_muted_users',
      '039_active_push_notifications',
      '040_bots',
      '041_outgoing_emails',
      '042_email_invites',
      '043_password_reset_tokens',
      '044_missed_message_emails',
      '045_email_gateway',
      '046_sessions',
      '047_channel_topics',
      '048_soft_deactivation',
      '049_message_receivers',
    ]);
  });
});
