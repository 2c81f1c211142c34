import type { AppContext } from '../context';
import type { Schema } from '../contract';
import type { Tx } from '../db/transaction';
import { AuditEventType, valueChange } from '../domain/audit';
import { checkProfileValue, isRenderable, notEditableByUser, type ProfileFieldDef } from '../domain/profile-fields';
import { isAdminRole } from '../domain/roles';
import { ApiError } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { deleteProfileValue, getProfileFields, getProfileValue, setProfileValue } from '../queries/profile-fields';
import type { UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { listUsersByIds } from '../queries/users';
import { toApiRealmUserUpdateEvent } from '../serializers/users';
import { renderForRealm } from './render';

/** One changed custom profile field as a realm_user update carries it. */
export type ProfileFieldChange = NonNullable<Schema<'RealmUserUpdatePerson'>['custom_profile_field']>;

/** A value that changed, with the one it replaced (for the audit log). */
export interface ProfileValueChange {
  field: ProfileFieldChange;
  old: string | null;
}

/** One value to set: text, or user IDs for a Users field. */
export interface ProfileValueInput {
  id: number;
  value: string | number[];
}

/** The organization's fields among `ids`; an unknown one is refused in Zulip's words. */
async function fieldsNamed(tx: Tx, realmId: number, ids: readonly number[]): Promise<(id: number) => ProfileFieldDef> {
  const fields = await getProfileFields(tx.trx, realmId, [...ids]);
  return (id) => {
    const f = fields.get(id);
    if (!f) throw new ApiError(`Field id ${id} not found.`);
    return f;
  };
}

/**
 * Removes values (a value not set is no change). A user who is not an
 * administrator may not touch a field with editable_by_user off, as Zulip's
 * check_remove_custom_profile_field_value.
 */
export async function removeProfileValuesInTx(
  tx: Tx,
  actor: UserRow,
  target: UserRow,
  fieldIds: readonly number[],
): Promise<ProfileValueChange[]> {
  const fieldOf = await fieldsNamed(tx, target.realm_id, fieldIds);
  const changed: ProfileValueChange[] = [];
  for (const id of fieldIds) {
    const field = fieldOf(id);
    if (!isAdminRole(actor.role) && !field.editable_by_user) throw notEditableByUser();
    const old = await getProfileValue(tx.trx, target.id, field.id);
    if (old && (await deleteProfileValue(tx.trx, target.id, field.id)))
      changed.push({ field: { id: field.id, value: null }, old: old.value });
  }
  return changed;
}

/**
 * Sets values: every one is checked first (the field exists in the
 * organization, the actor may change it, the value fits the field's type),
 * as Zulip's validate_user_custom_profile_data, then the ones that differ
 * from what is stored are written, Markdown fields with their HTML.
 */
export async function setProfileValuesInTx(
  tx: Tx,
  actor: UserRow,
  target: UserRow,
  items: readonly ProfileValueInput[],
): Promise<ProfileValueChange[]> {
  const fieldOf = await fieldsNamed(
    tx,
    target.realm_id,
    items.map((i) => i.id),
  );
  const toSet: Array<{ field: ProfileFieldDef; value: string }> = [];
  for (const item of items) {
    const field = fieldOf(item.id);
    if (!isAdminRole(actor.role) && !field.editable_by_user) throw notEditableByUser();
    const checked = checkProfileValue(field, item.value);
    if (checked.kind === 'users') await checkProfileUsers(tx, target.realm_id, checked.ids);
    toSet.push({ field, value: checked.kind === 'users' ? JSON.stringify(checked.ids) : checked.value });
  }
  const changed: ProfileValueChange[] = [];
  for (const { field, value } of toSet) {
    const old = await getProfileValue(tx.trx, target.id, field.id);
    if (old?.value === value) continue;
    const rendered = isRenderable(field.field_type) ? (await renderForRealm(tx.trx, target.realm_id, value, null)).html : null;
    await setProfileValue(tx.trx, { user_id: target.id, field_id: field.id, value, rendered_value: rendered });
    // Zulip leaves rendered_value out when it has none (or an empty one).
    changed.push({
      field: rendered ? { id: field.id, value, rendered_value: rendered } : { id: field.id, value },
      old: old?.value ?? null,
    });
  }
  return changed;
}

/**
 * A Users field holds users of the organization that are active and not
 * bots (Zulip's check_valid_user_ids): unknown IDs are named all at once,
 * then the first deactivated user or bot.
 */
async function checkProfileUsers(tx: Tx, realmId: number, ids: number[]): Promise<void> {
  const users = await listUsersByIds(tx.trx, realmId, ids);
  const known = new Set(users.map((u) => u.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length > 0) throw new ApiError(`Invalid user IDs: ${unknown.join(', ')}`);
  for (const u of [...users].sort((a, b) => a.id - b.id)) {
    if (!u.is_active) throw new ApiError(`User with ID ${u.id} is deactivated`);
    if (u.is_bot) throw new ApiError(`User with ID ${u.id} is a bot`);
  }
}

/**
 * Audit rows now, and after commit one realm_user update per changed
 * value, to everyone who may know the user (Zulip's
 * notify_user_update_custom_profile_data). `audience` is computed here
 * when not given.
 */
export async function announceProfileChangesInTx(
  ctx: AppContext,
  tx: Tx,
  actor: UserRow,
  target: UserRow,
  changes: readonly ProfileValueChange[],
  audience?: number[],
): Promise<void> {
  if (changes.length === 0) return;
  const to = audience ?? (await listUsersWhoMayAccess(tx.trx, target.realm_id, target.id, target.is_bot));
  for (const { field, old } of changes) {
    await insertAuditLog(tx.trx, {
      realmId: target.realm_id,
      actorId: actor.id,
      userId: target.id,
      eventType: AuditEventType.USER_CUSTOM_PROFILE_DATA_CHANGED,
      extra: { field_id: field.id, ...valueChange(old, field.value) },
    });
    const event = toApiRealmUserUpdateEvent({ user_id: target.id, custom_profile_field: field });
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: to }));
  }
}
