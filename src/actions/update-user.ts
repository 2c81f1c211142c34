import type { Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { inTransaction, Tx } from '../db/transaction';
import { AuditEntry, AuditEventType, AuditExtra, valueChange } from '../domain/audit';
import { isAdminRole, Role, RoleCode } from '../domain/roles';
import { isClearingValue } from '../domain/profile-fields';
import { apiEmailFor, checkFullName, checkRoleChange, emailKey, isValidEmail } from '../domain/users';
import { realmHost } from '../domain/realm-address';
import { parseSettings } from '../domain/user-settings';
import { adminRequired, ApiError, noSuchUser } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { nowSeconds } from '../queries/ids';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserByEmailKey, getUserInRealm, listUsersByIds, updateUser } from '../queries/users';
import { canSeeDeliveryEmail, toApiRealmUserUpdateEvent } from '../serializers/users';
import { announceProfileChangesInTx, removeProfileValuesInTx, setProfileValuesInTx, type ProfileValueChange } from './profile-data';
import { syncSystemGroupsInTx } from './user-groups';
import { isOnlyOwnerInTx } from './users';

type Person = Schema<'RealmUserUpdatePerson'>;

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
      await announceProfileChangesInTx(ctx, tx, actor, target, await applyProfileData(tx, actor, target, changes.profile_data), audience);
    }
    if (changes.new_email !== undefined && changes.new_email !== target.delivery_email) {
      const emailHost = realmHost(ctx.config.externalUrl, realm.string_id);
      for (const p of await changeEmailInTx(tx, target, changes.new_email, audience, emailHost)) emit(p);
      await audit(AuditEventType.USER_EMAIL_CHANGED, valueChange(target.delivery_email, changes.new_email.trim()));
    }
  });
}

/** The role itself: the row and the system groups it puts the user in (their events and audit rows included). */
export async function changeRoleInTx(tx: Tx, ctx: AppContext, actor: UserRow, target: UserRow, role: RoleCode): Promise<void> {
  await updateUser(tx.trx, target.id, { role });
  const realm = (await getRealmById(tx.trx, target.realm_id))!;
  await syncSystemGroupsInTx(tx, ctx.bus, { ...target, role }, realm, nowSeconds(), actor.id);
}

/**
 * profile_data of PATCH /users/{id}, as Zulip's update_user_backend: the
 * values given as null, "" or [] are removed first, then every other one is
 * checked against its field's type before any is stored. An administrator
 * may set fields that users cannot edit themselves.
 */
async function applyProfileData(
  tx: Tx,
  actor: UserRow,
  target: UserRow,
  items: NonNullable<Params<'update-user'>['profile_data']>,
): Promise<ProfileValueChange[]> {
  const clearing = items.filter((i) => isClearingValue(i.value)).map((i) => i.id);
  const setting = items.flatMap((i) => (isClearingValue(i.value) ? [] : [{ id: i.id, value: i.value }]));
  const removed = await removeProfileValuesInTx(tx, actor, target, clearing);
  return [...removed, ...(await setProfileValuesInTx(tx, actor, target, setting))];
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
