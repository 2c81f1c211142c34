import type { Knex } from 'knex';
import { inTransaction } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { GROUP_GROUP_SETTINGS, REALM_GROUP_SETTINGS, REALM_SETTING_RULES, USER_GROUP_SETTING_RULES } from '../domain/group-settings';
import { checkRealmDescription, checkRealmName, checkRealmStringId } from '../domain/realms';
import { SYSTEM_GROUP_PARENT, SYSTEM_GROUPS, SystemGroupName } from '../domain/roles';
import { USER_SETTING_DEFAULTS } from '../domain/user-settings';
import { ApiError } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { addSubgroup, GroupSettingColumns, insertGroup, updateGroupsOfRealm } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import { getRealmByStringId, insertRealm, insertRealmUserDefaults, updateRealm } from '../queries/realms';
import type { RealmGroupColumns } from '../queries/rows';

export interface NewRealm {
  stringId: string;
  name: string;
  description?: string;
}

/**
 * A new organization's subdomain, name and description as doCreateRealm
 * takes them, or the first refusal: the command line checks its arguments
 * with it before it opens (or creates) the database.
 */
export function checkNewRealm(input: NewRealm): Required<NewRealm> {
  return {
    stringId: checkRealmStringId(input.stringId),
    name: checkRealmName(input.name),
    description: checkRealmDescription(input.description ?? ''),
  };
}

/**
 * Creates an organization with Zulip's default settings: the eight system
 * groups nested as Zulip nests them, the realm permission settings pointing
 * at them, and realm_user_defaults.
 */
export async function doCreateRealm(db: Knex, input: NewRealm): Promise<number> {
  const { stringId, name, description } = checkNewRealm(input);
  return inTransaction(db, async ({ trx }) => {
    if (await getRealmByStringId(trx, stringId)) throw new ApiError('Subdomain already in use. Please choose a different one.');
    const now = nowSeconds();
    const realmId = await insertRealm(trx, {
      string_id: stringId,
      name,
      description,
      date_created: now,
      message_content_edit_limit_seconds: 600,
      move_messages_within_stream_limit_seconds: 604800,
      move_messages_between_streams_limit_seconds: 604800,
    });
    const ids = new Map<SystemGroupName, number>();
    for (const g of SYSTEM_GROUPS) {
      ids.set(
        g.name,
        await insertGroup(trx, {
          realm_id: realmId,
          name: g.name,
          description: g.description,
          is_system_group: true,
          date_created: now,
        }),
      );
    }
    for (const [child, parent] of Object.entries(SYSTEM_GROUP_PARENT) as Array<[SystemGroupName, SystemGroupName]>) {
      await addSubgroup(trx, ids.get(parent)!, ids.get(child)!);
    }
    // System groups are managed by the system: nobody may change, join or
    // mention them (Zulip's default_for_system_groups, role:nobody throughout).
    const systemGroupSettings: Partial<GroupSettingColumns> = {};
    for (const s of GROUP_GROUP_SETTINGS) systemGroupSettings[s] = ids.get(USER_GROUP_SETTING_RULES[s].defaultForSystemGroups)!;
    await updateGroupsOfRealm(trx, realmId, systemGroupSettings);
    // Each realm-level permission setting starts at its default group (the rules in src/domain/group-settings.ts).
    const settings: Partial<RealmGroupColumns> = {};
    for (const s of REALM_GROUP_SETTINGS) settings[s] = ids.get(REALM_SETTING_RULES[s].default)!;
    await updateRealm(trx, realmId, settings);
    await insertRealmUserDefaults(trx, realmId, JSON.stringify(USER_SETTING_DEFAULTS));
    // Made from the command line (or a test), so nobody is the acting user.
    await insertAuditLog(trx, {
      realmId,
      actorId: null,
      eventType: AuditEventType.REALM_CREATED,
      extra: { string_id: stringId, name },
    });
    return realmId;
  });
}
