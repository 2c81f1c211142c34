import type { Knex } from 'knex';
import type { AppContext } from '../context';
import type { Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { AuditEventType, valueChange, type AuditEntry } from '../domain/audit';
import { GROUP_GROUP_SETTINGS, groupSettingValuesEqual, USER_GROUP_SETTING_RULES } from '../domain/group-settings';
import { checkUserGroupName } from '../domain/user-group-names';
import { ApiError } from '../errors';
import { accessUserGroupForUpdate } from '../access/user-groups';
import { loadRealmGroups } from '../access/realm-groups';
import type { Caller } from '../access/viewer';
import type { ContractEvent } from '../events/bus';
import { DEACTIVATED_GROUP, REACTIVATED_GROUP } from '../events/shape';
import { insertAuditLog } from '../queries/audit';
import { findGroupIdByName, listDirectSupergroups, listSettingsUsingGroups, updateGroup } from '../queries/groups';
import { toApiUserGroupAddEvent, toApiUserGroupUpdateEvent } from '../serializers/user-groups';
import { storeGroupSettingInTx } from './group-settings';
import { queueGroupEvents } from './user-group-events';

/**
 * The rename's event. A deactivated group's is marked, as Zulip marks it,
 * so that clients without the include_deactivated_groups capability, which
 * never heard of the group, do not get it (src/events/shape.ts withheldFrom).
 */
function renameEvent(id: number, name: string, deactivated: boolean): ContractEvent {
  const event = toApiUserGroupUpdateEvent(id, { name });
  return deactivated ? Object.assign(event, { [DEACTIVATED_GROUP]: true }) : event;
}

/**
 * The whole group again, as it stands at its reactivation, for the clients
 * without include_deactivated_groups, which were told it was removed: Zulip's
 * do_reactivate_user_group sends them a user_group add marked
 * for_reactivation (src/events/shape.ts withheldFrom), and its update only
 * to the others.
 */
async function reactivationAddEvent(trx: Knex.Transaction, realmId: number, id: number): Promise<ContractEvent> {
  const group = (await loadRealmGroups(trx, realmId)).userGroups(false).find((g) => g.id === id)!;
  return Object.assign(toApiUserGroupAddEvent(group), { [REACTIVATED_GROUP]: true });
}

/**
 * PATCH /user_groups/{group}, in Zulip's order: nothing given, the
 * permission (can_manage_group; deactivated groups allowed, feature level
 * 340), the name, the description, reactivation (deactivated=false,
 * feature level 386; true changes nothing), then each permission setting
 * as {new, old}. Each change is its own user_group update event and audit
 * row, all in one transaction.
 */
export async function doUpdateUserGroup(ctx: AppContext, c: Caller, p: Params<'update-user-group'>): Promise<void> {
  const settingsGiven = GROUP_GROUP_SETTINGS.filter((s) => p[s] !== undefined);
  if (p.name === undefined && p.description === undefined && p.deactivated === undefined && settingsGiven.length === 0) {
    throw new ApiError('No new data supplied');
  }
  const realmId = c.realm.id;
  await inTransaction(ctx.db, async (tx) => {
    const { trx } = tx;
    const group = await accessUserGroupForUpdate(trx, c, p.user_group_id, 'can_manage_group', true);
    const id = group.id;
    const audit = { realmId, actorId: c.user.id, groupId: id };
    const rows: AuditEntry[] = [];
    const events: ContractEvent[] = [];

    if (p.name !== undefined && p.name !== group.name) {
      const name = checkUserGroupName(p.name);
      const holder = await findGroupIdByName(trx, realmId, name);
      if (holder !== undefined && holder !== id) throw new ApiError(`User group '${name}' already exists.`);
      await updateGroup(trx, realmId, id, { name });
      rows.push({ ...audit, eventType: AuditEventType.USER_GROUP_NAME_CHANGED, extra: valueChange(group.name, name) });
      events.push(renameEvent(id, name, group.deactivated));
    }
    if (p.description !== undefined && p.description !== (group.description ?? '')) {
      await updateGroup(trx, realmId, id, { description: p.description });
      rows.push({
        ...audit,
        eventType: AuditEventType.USER_GROUP_DESCRIPTION_CHANGED,
        extra: valueChange(group.description ?? '', p.description),
      });
      events.push(toApiUserGroupUpdateEvent(id, { description: p.description }));
    }
    if (p.deactivated === false && group.deactivated) {
      await updateGroup(trx, realmId, id, { deactivated: false });
      rows.push({ ...audit, eventType: AuditEventType.USER_GROUP_REACTIVATED });
      events.push(toApiUserGroupUpdateEvent(id, { deactivated: false }), await reactivationAddEvent(trx, realmId, id));
    }

    if (settingsGiven.length) {
      const before = await loadRealmGroups(trx, realmId);
      const nobody = before.systemGroupId('role:nobody')!;
      // Zulip reads an empty anonymous group as role:nobody before comparing.
      const parse = (v: NonNullable<Params<'update-user-group'>['can_join_group']>['new']) =>
        typeof v !== 'number' && v.direct_members.length === 0 && v.direct_subgroups.length === 0 ? nobody : v;
      const changed: Array<{ setting: (typeof GROUP_GROUP_SETTINGS)[number]; stored: number; old: unknown }> = [];
      for (const setting of settingsGiven) {
        const change = p[setting]!;
        const current = before.lookup.value(group[setting]);
        if (change.old !== undefined && !groupSettingValuesEqual(parse(change.old), current)) {
          throw new ApiError("'old' value does not match the expected value.", 'EXPECTATION_MISMATCH', 400);
        }
        const next = parse(change.new);
        if (groupSettingValuesEqual(next, current)) continue;
        const stored = await storeGroupSettingInTx(tx, realmId, setting, next, USER_GROUP_SETTING_RULES[setting]);
        await updateGroup(trx, realmId, id, { [setting]: stored });
        changed.push({ setting, stored, old: current });
      }
      if (changed.length) {
        const after = await loadRealmGroups(trx, realmId);
        for (const { setting, stored, old } of changed) {
          const value = after.lookup.value(stored);
          rows.push({
            ...audit,
            eventType: AuditEventType.USER_GROUP_GROUP_BASED_SETTING_CHANGED,
            extra: valueChange(old, value, setting),
          });
          events.push(toApiUserGroupUpdateEvent(id, { [setting]: value }));
        }
      }
    }
    await insertAuditLog(trx, rows);
    await queueGroupEvents(tx, ctx.bus, realmId, events);
  });
}

/**
 * POST /user_groups/{group}/deactivate (feature level 290). Refused while
 * the group is in use (Zulip's access_user_group_for_deactivation): held
 * as a direct subgroup by an active named group, or, directly or through an
 * anonymous group that holds it, in a permission setting of the
 * organization, of a channel that is not archived, or of an active named
 * group (itself included). The refusal lists every objection (feature
 * level 298).
 */
export async function doDeactivateUserGroup(ctx: AppContext, c: Caller, p: Params<'deactivate-user-group'>): Promise<void> {
  const realmId = c.realm.id;
  await inTransaction(ctx.db, async (tx) => {
    const { trx } = tx;
    const group = await accessUserGroupForUpdate(trx, c, p.user_group_id, 'can_manage_group', false);
    const objections: Array<Schema<'GroupInUseObjection'>> = [];
    const supergroups = await listDirectSupergroups(trx, group.id);
    if (supergroups.named.length) objections.push({ type: 'subgroup', supergroup_ids: supergroups.named });
    const using = await listSettingsUsingGroups(trx, realmId, [group.id, ...supergroups.anonymous]);
    for (const ch of using.channels) objections.push({ type: 'channel', channel_id: ch.id, settings: ch.settings });
    for (const g of using.groups) objections.push({ type: 'user_group', group_id: g.id, settings: g.settings });
    if (using.realm.length) objections.push({ type: 'realm', settings: using.realm });
    if (objections.length) {
      throw new ApiError('Cannot deactivate user group in use.', 'CANNOT_DEACTIVATE_GROUP_IN_USE', 400, {
        objections,
      });
    }
    await updateGroup(trx, realmId, group.id, { deactivated: true });
    await insertAuditLog(trx, { realmId, actorId: c.user.id, groupId: group.id, eventType: AuditEventType.USER_GROUP_DEACTIVATED });
    await queueGroupEvents(tx, ctx.bus, realmId, [toApiUserGroupUpdateEvent(group.id, { deactivated: true })]);
  });
}
