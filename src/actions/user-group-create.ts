import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType, valueChange, type AuditEntry } from '../domain/audit';
import { GROUP_GROUP_SETTINGS, REALM_SETTING_RULES, USER_GROUP_SETTING_RULES, type UserGroupSetting } from '../domain/group-settings';
import { checkUserGroupName } from '../domain/user-group-names';
import { ApiError } from '../errors';
import { holdsGroupSetting } from '../access/user-groups';
import { loadRealmGroups } from '../access/realm-groups';
import type { Caller } from '../access/viewer';
import { insertAuditLog } from '../queries/audit';
import { addGroupMembers, addSubgroup, findGroupIdByName, getSystemGroupIds, insertGroup, lockRealmGroups } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import type { UserRow } from '../queries/rows';
import { listUsersByIds } from '../queries/users';
import { toApiUserGroupAddEvent } from '../serializers/user-groups';
import { storeGroupSettingInTx } from './group-settings';
import { queueGroupEvents } from './user-group-events';
import { checkNewSubgroups, subgroupAuditRows } from './user-group-subgroups';

/**
 * The active users of the organization with these ids, in the order given
 * (Zulip's user_ids_to_users without deactivated users): "Invalid user ID"
 * names the first that is unknown, another organization's or deactivated.
 */
export async function resolveActiveUsers(q: Tx['trx'] | AppContext['db'], realmId: number, ids: number[]): Promise<UserRow[]> {
  const byId = new Map((await listUsersByIds(q, realmId, ids)).filter((u) => u.is_active).map((u) => [u.id, u]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing !== undefined) throw new ApiError(`Invalid user ID: ${missing}`);
  return [...new Set(ids)].map((id) => byId.get(id)!);
}

/**
 * POST /user_groups/create. Zulip's order: the creator's permission
 * (can_create_groups), the members, the name, the settings, a taken name,
 * then the subgroups, which need no permission on the group being made.
 * Everything is written in one transaction; everyone hears of the group in
 * one user_group add event holding its members and subgroups.
 */
export async function doCreateUserGroup(ctx: AppContext, c: Caller, p: Params<'create-user-group'>): Promise<Data<'create-user-group'>> {
  const realm = c.realm;
  if (!holdsGroupSetting(c, realm.can_create_groups, REALM_SETTING_RULES.can_create_groups)) throw new ApiError('Insufficient permission');
  const members = await resolveActiveUsers(ctx.db, realm.id, p.members);
  const name = checkUserGroupName(p.name);
  return inTransaction(ctx.db, async (tx) => {
    const { trx } = tx;
    const now = nowSeconds();
    const system = await getSystemGroupIds(trx, realm.id);
    const settings = {} as Record<UserGroupSetting, number>;
    for (const setting of GROUP_GROUP_SETTINGS) {
      const rule = USER_GROUP_SETTING_RULES[setting];
      const given = p[setting];
      if (given !== undefined) {
        settings[setting] = await storeGroupSettingInTx(tx, realm.id, setting, given, rule);
      } else if (rule.default === 'creator') {
        // Zulip's "group_creator" default: an anonymous group holding the creator alone.
        const holder = await insertGroup(trx, { realm_id: realm.id, name: null, date_created: now });
        await addGroupMembers(trx, holder, [c.user.id]);
        settings[setting] = holder;
      } else {
        settings[setting] = system.get(rule.default)!;
      }
    }
    if ((await findGroupIdByName(trx, realm.id, name)) !== undefined) throw new ApiError(`User group '${name}' already exists.`);
    const id = await insertGroup(trx, {
      realm_id: realm.id,
      name,
      description: p.description,
      is_system_group: false,
      creator_id: c.user.id,
      date_created: now,
      deactivated: false,
      ...settings,
    });
    const memberIds = members.map((u) => u.id);
    await addGroupMembers(trx, id, memberIds);
    const subgroupIds = [...new Set(p.subgroups ?? [])];
    if (subgroupIds.length) {
      await lockRealmGroups(trx, realm.id);
      await checkNewSubgroups(trx, realm.id, id, subgroupIds, []);
      for (const sub of subgroupIds) await addSubgroup(trx, id, sub);
    }

    const groups = await loadRealmGroups(trx, realm.id);
    const group = groups.userGroups(true).find((g) => g.id === id)!;
    const audit = { realmId: realm.id, actorId: c.user.id, groupId: id };
    const rows: AuditEntry[] = [
      { ...audit, eventType: AuditEventType.USER_GROUP_CREATED },
      ...memberIds.map((userId) => ({ ...audit, userId, eventType: AuditEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED })),
      ...subgroupAuditRows(audit, id, subgroupIds, 'added'),
      ...GROUP_GROUP_SETTINGS.map((setting) => ({
        ...audit,
        eventType: AuditEventType.USER_GROUP_GROUP_BASED_SETTING_CHANGED,
        extra: valueChange(null, groups.lookup.value(settings[setting]), setting),
      })),
    ];
    await insertAuditLog(trx, rows);
    await queueGroupEvents(tx, ctx.bus, realm.id, [toApiUserGroupAddEvent(group)]);
    return { group_id: id };
  });
}
