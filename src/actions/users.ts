import type { Knex } from 'knex';
import type { AppContext } from '../context';
import { inTransaction, Tx } from '../db/transaction';
import { isAdminRole, Role, ROLE_CODES, roleSystemGroup } from '../domain/roles';
import { generateApiKey, hashPassword, isPasswordStrongEnough } from '../domain/secrets';
import { parseSettings } from '../domain/user-settings';
import { checkFullName, emailKey, isValidEmail } from '../domain/users';
import { adminRequired, ApiError } from '../errors';
import { addGroupMembers, getSystemGroupIds } from '../queries/groups';
import { insertOne, nowSeconds } from '../queries/ids';
import { getRealmById, getRealmUserDefaultsRaw } from '../queries/realms';
import type { UserRow } from '../queries/rows';
import { getUserByEmailKey, getUserById, insertUser, updateUser } from '../queries/users';
import { toApiUser } from '../serializers/users';

export interface NewUser {
  realmId: number;
  email: string;
  fullName: string;
  role?: number;
  password?: string | null;
  isBot?: boolean;
  botType?: number | null;
  botOwnerId?: number | null;
  canCreateUsers?: boolean;
  timezone?: string;
}

/**
 * Creates a user inside the caller's transaction: the row with a fresh API
 * key and hashed password, personal settings copied from the realm's
 * defaults (later default changes never touch them), the personal recipient,
 * and membership in the role's system group (plus role:fullmembers for
 * members once the realm's waiting period is 0). Queues realm_user/add.
 */
export async function createUserInTx(tx: Tx, bus: AppContext['bus'] | null, input: NewUser): Promise<UserRow> {
  const { trx } = tx;
  const role = input.role ?? Role.MEMBER;
  if (!ROLE_CODES.includes(role)) throw new ApiError('Invalid role');
  const realm = await getRealmById(trx, input.realmId);
  if (!realm) throw new ApiError('Invalid organization');
  const email = input.email.trim();
  if (await getUserByEmailKey(trx, realm.id, emailKey(email))) {
    throw new ApiError(`Email '${email}' already in use`);
  }
  const defaults = parseSettings(await getRealmUserDefaultsRaw(trx, realm.id));
  const now = nowSeconds();
  const userId = await insertUser(trx, {
    realm_id: realm.id,
    email,
    delivery_email: email,
    email_key: emailKey(email),
    full_name: input.fullName,
    role,
    is_bot: input.isBot ?? false,
    bot_type: input.botType ?? null,
    bot_owner_id: input.botOwnerId ?? null,
    api_key: generateApiKey(),
    password_hash: input.password ? await hashPassword(input.password) : null,
    can_create_users: input.canCreateUsers ?? false,
    timezone: input.timezone ?? '',
    date_joined: now,
    settings: JSON.stringify(defaults),
  });
  const recipientId = await insertOne(trx, 'recipients', { type: 1, type_id: userId });
  await updateUser(trx, userId, { recipient_id: recipientId });
  const groups = await getSystemGroupIds(trx, realm.id);
  await addGroupMembers(trx, groups.get(roleSystemGroup(role))!, [userId]);
  if (role === Role.MEMBER && realm.waiting_period_threshold === 0) {
    await addGroupMembers(trx, groups.get('role:fullmembers')!, [userId]);
  }
  const user = (await getUserById(trx, userId))!;
  if (bus) {
    const person = toApiUser(user, { viewer: null });
    const audience: number[] = await trx('users').where({ realm_id: realm.id, is_active: true }).pluck('id');
    tx.afterCommit(() => bus.publish({ event: { type: 'realm_user', op: 'add', person }, userIds: audience }));
  }
  return user;
}

/** POST /users: an administrator with can_create_users makes an account with a password. */
export async function doCreateUser(
  ctx: AppContext,
  actor: UserRow,
  input: { email: string; password: string; full_name: string },
): Promise<UserRow> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  if (!actor.can_create_users) throw new ApiError('User not authorized to create users');
  const fullName = checkFullName(input.full_name);
  const email = input.email.trim();
  if (!isValidEmail(email)) throw new ApiError('Bad name or username');
  if (!isPasswordStrongEnough(input.password)) throw new ApiError('The password is too weak.');
  return inTransaction(ctx.db, (tx) =>
    createUserInTx(tx, ctx.bus, { realmId: actor.realm_id, email, fullName, password: input.password }),
  );
}

/** Replaces a user's API key; the old one stops working at once. */
export async function doRegenerateApiKey(db: Knex, userId: number): Promise<string> {
  const apiKey = generateApiKey();
  await updateUser(db, userId, { api_key: apiKey });
  return apiKey;
}

/**
 * Deactivates a user: the account's API key stops working at once (auth
 * checks is_active on every request).
 */
export async function doDeactivateUser(ctx: AppContext, userId: number): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    await updateUser(tx.trx, userId, { is_active: false });
    await tx.trx('subscriptions').where({ user_id: userId }).update({ is_user_active: false });
  });
}
