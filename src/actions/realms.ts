import type { Knex } from 'knex';
import { REALM_GROUP_SETTINGS } from '../db/migrations/001_initial';
import { inTransaction } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { SYSTEM_GROUP_PARENT, SYSTEM_GROUPS, SystemGroupName } from '../domain/roles';
import { USER_SETTING_DEFAULTS } from '../domain/user-settings';
import { ApiError } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { addSubgroup, insertGroup } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import { getRealmByStringId, insertRealm, insertRealmUserDefaults, updateRealm } from '../queries/realms';

/** Zulip's defaults for the realm-level permission groups. */
const REALM_GROUP_DEFAULTS: Record<(typeof REALM_GROUP_SETTINGS)[number], SystemGroupName> = {
  can_access_all_users_group: 'role:everyone',
  can_add_custom_emoji_group: 'role:members',
  can_add_subscribers_group: 'role:members',
  can_create_bots_group: 'role:members',
  can_create_groups: 'role:members',
  can_create_public_channel_group: 'role:members',
  can_create_private_channel_group: 'role:members',
  can_create_web_public_channel_group: 'role:owners',
  can_create_write_only_bots_group: 'role:members',
  can_delete_any_message_group: 'role:administrators',
  can_delete_own_message_group: 'role:everyone',
  can_invite_users_group: 'role:members',
  can_manage_all_groups: 'role:owners',
  can_manage_billing_group: 'role:administrators',
  can_mention_many_users_group: 'role:administrators',
  can_move_messages_between_channels_group: 'role:members',
  can_move_messages_between_topics_group: 'role:everyone',
  can_resolve_topics_group: 'role:everyone',
  can_set_delete_message_policy_group: 'role:moderators',
  can_set_topics_policy_group: 'role:members',
  can_summarize_topics_group: 'role:everyone',
  create_multiuse_invite_group: 'role:administrators',
  direct_message_initiator_group: 'role:everyone',
  direct_message_permission_group: 'role:everyone',
};

export interface NewRealm {
  stringId: string;
  name: string;
  description?: string;
}

const STRING_ID_RE = /^[a-z0-9-]{0,40}$/;

/**
 * Creates an organization with Zulip's default settings: the eight system
 * groups nested as Zulip nests them, the realm permission settings pointing
 * at them, and realm_user_defaults.
 */
export async function doCreateRealm(db: Knex, input: NewRealm): Promise<number> {
  if (!STRING_ID_RE.test(input.stringId)) {
    throw new ApiError('Subdomains may only contain lowercase letters, digits and dashes (at most 40).');
  }
  const name = input.name.trim();
  if (name.length === 0 || name.length > 40) throw new ApiError('Organization name must be 1..40 characters.');
  return inTransaction(db, async ({ trx }) => {
    if (await getRealmByStringId(trx, input.stringId)) {
      throw new ApiError(`Subdomain '${input.stringId}' is already in use.`);
    }
    const now = nowSeconds();
    const realmId = await insertRealm(trx, {
      string_id: input.stringId,
      name,
      description: input.description ?? '',
      date_created: now,
      message_content_edit_limit_seconds: 600,
      move_messages_within_stream_limit_seconds: 604800,
      move_messages_between_streams_limit_seconds: 604800,
    });
    const ids = new Map<SystemGroupName, number>();
    for (const g of SYSTEM_GROUPS) {
      ids.set(g.name, await insertGroup(trx, {
        realm_id: realmId,
        name: g.name,
        description: g.description,
        is_system_group: true,
        date_created: now,
      }));
    }
    for (const [child, parent] of Object.entries(SYSTEM_GROUP_PARENT) as Array<[SystemGroupName, SystemGroupName]>) {
      await addSubgroup(trx, ids.get(parent)!, ids.get(child)!);
    }
    // System groups are managed by the system: nobody may change them.
    const nobody = ids.get('role:nobody')!;
    await trx('user_groups').where({ realm_id: realmId }).update({
      can_add_members_group: nobody,
      can_join_group: nobody,
      can_leave_group: nobody,
      can_manage_group: nobody,
      can_mention_group: ids.get('role:everyone')!,
      can_remove_members_group: nobody,
    });
    const settings: Record<string, number> = {};
    for (const [setting, group] of Object.entries(REALM_GROUP_DEFAULTS)) settings[setting] = ids.get(group)!;
    await updateRealm(trx, realmId, settings);
    await insertRealmUserDefaults(trx, realmId, JSON.stringify(USER_SETTING_DEFAULTS));
    // Made from the command line (or a test), so nobody is the acting user.
    await insertAuditLog(trx, { realmId, actorId: null, eventType: AuditEventType.REALM_CREATED, extra: { string_id: input.stringId, name } });
    return realmId;
  });
}
