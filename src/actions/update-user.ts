import type { Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { inTransaction, Tx } from '../db/transaction';
import { AuditEntry, AuditEventType, AuditExtra, valueChange } from '../domain/audit';
import { isAdminRole, Role, RoleCode } from '../domain/roles';
import { checkProfileValue, isClearingValue, isRenderable, ProfileFieldDef } from '../domain/profile-fields';
import { apiEmailFor, checkFullName, checkRoleChange, emailKey, isValidEmail } from '../domain/users';
import { realmHost } from '../domain/realm-address';
import { parseSettings } from '../domain/user-settings';
import { adminRequired, ApiError, noSuchUser } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { nowSeconds } from '../queries/ids';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { deleteProfileValue, getProfileFields, getProfileValue, setProfileValue } from '../queries/profile-fields';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserByEmailKey, getUserInRealm, listUsersByIds, updateUser } from '../queries/users';
import { canSeeDeliveryEmail, toApiRealmUserUpdateEvent } from '../serializers/users';
import { renderForRealm } from './render';
import { syncSystemGroupsInTx } from './user-groups';
import { isOnlyOwnerInTx } from './users';

type Person = Schema<'RealmUserUpdatePerson'>;
/** One changed custom profile field as a realm_user update carries it. */
type ProfileFieldChange = NonNullable<Person['custom_profile_field']>;

/** A realm_user update's person part and who receives it. */
interface Pending {
  person: Person;
  audience: number[];
}

/**
 * PATCH /users/{id}: role, full name, profile data and email in one
 * transaction, in Zulip's order of checks (update_user_backend). Anything
 * refused rolls the whole request back; realm_user update events (one per
 * changed part, in the order of the changes) go out after commit.
 */
export async function doUpdateUser(ctx: AppContext, actor: UserRow, realm: RealmRow, changes: Params<'update-user'>): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  await inTransaction(ctx.db, async (tx) => {
    const target = await getUserInRealm(tx.trx, actor.realm_id, changes.user_id);
    if (!target) throw noSuchUser();
    if (changes.new_email !== undefined && !(actor.role === Role.OWNER && actor.can_change_user_emails)) {
      throw new ApiError('User not authorized to change user emails');
    }
    const audience = await listUsersWhoMayAccess(tx.trx, actor.realm_id, target.id, target.is_bot);
    const emit = ({ person, audience }: Pending) =>
      tx.afterCommit(() => ctx.bus.publish({ event: toApiRealmUserUpdateEvent(person), userIds: audience }));
    const toAll = (part: Omit<Person, 'user_id'>) => emit({ person: { user_id: target.id, ...part }, audience });
    const audit = (eventType: AuditEntry['eventType'], extra: AuditExtra) =>
      insertAuditLog(tx.trx, { realmId: actor.realm_id, actorId: actor.id, userId: target.id, eventType, extra });
    if (changes.role !== undefined && changes.role !== target.role) {
      checkRoleChange(actor.role, target.role, changes.role, await isOnlyOwnerInTx(tx, target));
      toAll({ role: changes.role });
      await audit(AuditEventType.USER_ROLE_CHANGED, valueChange(target.role, changes.role));
      await changeRoleInTx(tx, ctx, actor, target, changes.role);
    }
    // Zulip skips an unchanged or blank name rather than refusing it.
    if (changes.full_name !== undefined && changes.full_name !== target.full_name && changes.full_name.trim() !== '') {
      const fullName = checkFullName(changes.full_name);
      await updateUser(tx.trx, target.id, { full_name: fullName });
      toAll({ full_name: fullName });
      await audit(AuditEventType.USER_FULL_NAME_CHANGED, valueChange(target.full_name, fullName));
    }
    if (changes.profile_data) {
      for (const { field, old } of await applyProfileData(tx, target, changes.profile_data)) {
        toAll({ custom_profile_field: field });
        await audit(AuditEventType.USER_CUSTOM_PROFILE_DATA_CHANGED, { field_id: field.id, ...valueChange(old, field.value) });
      }
    }
    if (changes.new_email !== undefined && changes.new_email !== target.delivery_email) {
      const emailHost = realmHost(ctx.config.externalUrl, realm.string_id);
      for (const p of await changeEmailInTx(tx, target, changes.new_email, audience, emailHost)) emit(p);
      await audit(AuditEventType.USER_EMAIL_CHANGED, valueChange(target.delivery_email, changes.new_email.trim()));
    }
  });
}

async function changeRoleInTx(tx: Tx, ctx: AppContext, actor: UserRow, target: UserRow, role: RoleCode): Promise<void> {
  await updateUser(tx.trx, target.id, { role });
  const realm = (await getRealmById(tx.trx, target.realm_id))!;
  await syncSystemGroupsInTx(tx, ctx.bus, { ...target, role }, realm, nowSeconds(), actor.id);
}

/**
 * Sets and clears custom profile field values. Zulip removes the values
 * given as null, "" or [] first, then checks every other value against its
 * field's type before storing any. Returns the event parts of the values
 * that actually changed, each with the value it replaced (for the audit log).
 */
async function applyProfileData(
  tx: Tx,
  target: UserRow,
  items: NonNullable<Params<'update-user'>['profile_data']>,
): Promise<Array<{ field: ProfileFieldChange; old: string | null }>> {
  const fields = await getProfileFields(
    tx.trx,
    target.realm_id,
    items.map((i) => i.id),
  );
  const fieldOf = (id: number): ProfileFieldDef => {
    const f = fields.get(id);
    if (!f) throw new ApiError(`Field id ${id} not found.`);
    return f;
  };
  const changed: Array<{ field: ProfileFieldChange; old: string | null }> = [];
  const toSet: Array<{ field: ProfileFieldDef; value: string }> = [];
  for (const item of items) {
    const field = fieldOf(item.id);
    if (isClearingValue(item.value)) {
      const old = await getProfileValue(tx.trx, target.id, field.id);
      if (old && (await deleteProfileValue(tx.trx, target.id, field.id)))
        changed.push({ field: { id: field.id, value: null }, old: old.value });
      continue;
    }
    const checked = checkProfileValue(field, item.value);
    if (checked.kind === 'users') await checkProfileUsers(tx, target.realm_id, checked.ids);
    toSet.push({ field, value: checked.kind === 'users' ? JSON.stringify(checked.ids) : checked.value });
  }
  for (const { field, value } of toSet) {
    const old = await getProfileValue(tx.trx, target.id, field.id);
    if (old?.value === value) continue;
    const rendered = isRenderable(field.field_type) ? (await renderForRealm(tx.trx, target.realm_id, value, null)).html : null;
    await setProfileValue(tx.trx, { user_id: target.id, field_id: field.id, value, rendered_value: rendered });
    changed.push({
      field: rendered === null ? { id: field.id, value } : { id: field.id, value, rendered_value: rendered },
      old: old?.value ?? null,
    });
  }
  return changed;
}

/** A Users-type field holds active, human users of the organization (Zulip's check_valid_user_ids). */
async function checkProfileUsers(tx: Tx, realmId: number, ids: number[]): Promise<void> {
  const users = new Map((await listUsersByIds(tx.trx, realmId, ids)).map((u) => [u.id, u]));
  for (const id of ids) {
    const u = users.get(id);
    if (!u) throw new ApiError(`Invalid user ID: ${id}`);
    if (!u.is_active) throw new ApiError(`User with ID ${id} is deactivated`);
    if (u.is_bot) throw new ApiError(`User with ID ${id} is a bot`);
  }
}

/**
 * Changes the address a user logs in and is mailed with (their API email
 * follows it: Parley has no placeholder addresses). Zulip's messages are
 * those of its own email-change path. Users who may see the real address
 * get delivery_email; everyone gets the new API email.
 */
async function changeEmailInTx(tx: Tx, target: UserRow, raw: string, audience: number[], emailHost: string): Promise<Pending[]> {
  const email = raw.trim();
  if (!isValidEmail(email)) throw new ApiError('Invalid address.');
  const holder = await getUserByEmailKey(tx.trx, target.realm_id, emailKey(email));
  if (holder && holder.id !== target.id) {
    throw new ApiError(holder.is_active ? 'Already has an account.' : 'Account has been deactivated.');
  }
  const apiEmail = apiEmailFor(target.id, email, parseSettings(target.settings).email_address_visibility, target.is_bot, emailHost);
  await updateUser(tx.trx, target.id, { email: apiEmail, delivery_email: email, email_key: emailKey(email) });
  const viewers = await listUsersByIds(tx.trx, target.realm_id, audience);
  const seeing = viewers.filter((v) => canSeeDeliveryEmail(target, v)).map((v) => v.id);
  return [
    { person: { user_id: target.id, delivery_email: email }, audience: seeing },
    { person: { user_id: target.id, new_email: apiEmail }, audience },
  ];
}
